//! The contract version a component was built against, read before linking, so that a
//! mismatch is a message saying which side to upgrade instead of a linker error.

use wasmtime::Engine;
use wasmtime::component::Component;

use super::error::ProducerErrorKind;

const MEASURE: &str = "discern:producer/measure@";

/// The `discern:producer` versions this host accepts, as (major, minor) pairs; any patch.
pub(crate) const SUPPORTED: &[(u64, u64)] = &[(0, 1), (0, 2)];

pub(crate) fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|(major, minor)| format!("{major}.{minor}.x"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `discern:producer` version `component` exports, if this host supports it.
pub(super) fn check(engine: &Engine, component: &Component) -> Result<String, ProducerErrorKind> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let Some(version) = exports.iter().find_map(|name| name.strip_prefix(MEASURE)) else {
        return Err(ProducerErrorKind::NotAProducer {
            exports: if exports.is_empty() {
                "none".to_owned()
            } else {
                exports.join(", ")
            },
        });
    };
    let found = version.to_owned();
    let supported = supported_list();
    let Some((major, minor)) = parse(version) else {
        return Err(ProducerErrorKind::VersionTooOld { found, supported });
    };
    if SUPPORTED.contains(&(major, minor)) {
        return Ok(found);
    }
    let newest = SUPPORTED.iter().max().copied().unwrap_or((0, 0));
    if (major, minor) > newest {
        Err(ProducerErrorKind::VersionTooNew { found, supported })
    } else {
        Err(ProducerErrorKind::VersionTooOld { found, supported })
    }
}

fn parse(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_semver() {
        assert_eq!(parse("0.1.0"), Some((0, 1)));
        assert_eq!(parse("1.2.3-rc.1"), Some((1, 2)));
        assert_eq!(parse("x"), None);
    }
}
