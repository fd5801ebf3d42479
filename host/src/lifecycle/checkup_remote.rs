//! `doctor`'s checks of what lies outside the checkout, when the config names it: the remote
//! evidence cache (`[evidence].remote`) answers, and each registry producer
//! (`producer = "oci://…"`) is cached or its registry answers for its digest. A registry that
//! cannot be reached with the component cached is a warning: measuring works offline.

use std::path::Path;

use super::check_line::{Check, Status, check, ok};
use crate::config::{Config, ProducerRef};

/// The remote cache and registry checks `config` calls for (none when it names neither).
pub(crate) fn checks(config: &Config, cache_dir: Option<&Path>) -> Vec<Check> {
    let mut checks = Vec::new();
    if let Some(url) = &config.evidence.remote {
        checks.push(remote_cache(url));
    }
    let mut seen = std::collections::BTreeSet::new();
    for standard in &config.standards {
        if let ProducerRef::Oci(reference) = &standard.producer
            && seen.insert(reference.pinned())
        {
            checks.push(registry(reference, cache_dir));
        }
    }
    checks
}

#[cfg(feature = "remote-cache")]
fn remote_cache(url: &str) -> Check {
    use crate::evidence::remote::{Client, Options};
    let fix = Some(
        "check [evidence].remote and the network (DISCERN_REMOTE_CACHE_AUTHORIZATION, DISCERN_REMOTE_CACHE_CA where it needs them); `discern standards --no-remote` measures without it",
    );
    let probe = crate::digest::Digest::of(b"discern doctor: a key no run writes");
    match Client::new(url, Options::from_env()).and_then(|client| client.get(&probe)) {
        Ok(_) => ok("remote cache", format!("{url} answers")),
        Err(e) => check("remote cache", Status::Fail, format!("{url}: {e}"), fix),
    }
}

#[cfg(not(feature = "remote-cache"))]
fn remote_cache(url: &str) -> Check {
    let result = format!("{url} is configured, but this build has no remote cache");
    let fix = Some("install a build with the `remote-cache` feature (the released binaries)");
    check("remote cache", Status::Fail, result, fix)
}

fn registry(reference: &crate::oci::Reference, cache_dir: Option<&Path>) -> Check {
    let name = format!("registry {}", reference.registry);
    let label = reference.pinned();
    let cached = cache_dir.is_some_and(|dir| crate::oci::cached(reference, dir));
    let answer = crate::oci::reachable(reference, &crate::oci::Options::from_env());
    match (cached, answer) {
        (true, Ok(())) => ok(&name, format!("{label}: cached, and the registry answers")),
        (false, Ok(())) => ok(
            &name,
            format!("{label}: the registry answers; fetched on the first measurement"),
        ),
        (true, Err(e)) => check(
            &name,
            Status::Warn,
            format!("{label}: cached, so measuring works; the registry does not answer: {e}"),
            Some(
                "check the registry and DISCERN_OCI_TOKEN / DISCERN_OCI_REGISTRY before the cache is cleared",
            ),
        ),
        (false, Err(e)) => check(
            &name,
            Status::Fail,
            format!("{label}: not cached, and the registry does not answer: {e}"),
            Some(
                "make the registry reachable (and DISCERN_OCI_TOKEN / DISCERN_OCI_REGISTRY where it needs them), then `discern producers fetch`",
            ),
        ),
    }
}
