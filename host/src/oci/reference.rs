//! `oci://REGISTRY/REPOSITORY[:TAG]@sha256:HEX`: a producer component in an OCI registry,
//! pinned by the digest of its manifest. The tag is only a name for people: the bytes are
//! fetched by the digest, so a tag moved on the registry changes nothing here.

use std::fmt;

/// The scheme a registry producer is written with.
pub(crate) const SCHEME: &str = "oci://";

/// A parsed, digest-pinned registry reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// `acme/untested-modules`.
    pub repository: String,
    pub tag: Option<String>,
    /// The manifest's sha256, 64 lowercase hex digits (without `sha256:`).
    pub digest: String,
}

impl serde::Serialize for Reference {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a text is not a pinned reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ReferenceError {
    #[error(
        "{0:?} names no digest, and a tag can move: pin the manifest's digest, `{0}@sha256:<64 hex digits>` (`discern producers fetch {0}` prints the exact line, `discern producers publish` prints it when it pushes)"
    )]
    NoDigest(String),
    #[error(
        "{text:?} is not an OCI reference ({why}); write oci://REGISTRY/REPOSITORY:TAG@sha256:<64 hex digits>, e.g. oci://ghcr.io/acme/untested-modules:1.2@sha256:…"
    )]
    Malformed { text: String, why: &'static str },
}

impl Reference {
    /// Parse `text` (with its `oci://` scheme); the digest is required.
    pub(crate) fn parse(text: &str) -> Result<Self, ReferenceError> {
        let unpinned = Unpinned::parse(text)?;
        let Some(digest) = unpinned.digest else {
            return Err(ReferenceError::NoDigest(text.to_owned()));
        };
        Ok(Self {
            registry: unpinned.registry,
            repository: unpinned.repository,
            tag: unpinned.tag,
            digest,
        })
    }

    /// `sha256:HEX`, as the registry names the manifest.
    pub(crate) fn digest_ref(&self) -> String {
        format!("sha256:{}", self.digest)
    }

    /// What the bytes are: `oci://REGISTRY/REPOSITORY@sha256:HEX`, the tag left out (a tag
    /// changed with the digest kept is the same component).
    pub(crate) fn pinned(&self) -> String {
        format!(
            "{SCHEME}{}/{}@{}",
            self.registry,
            self.repository,
            self.digest_ref()
        )
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        write!(f, "@{}", self.digest_ref())
    }
}

/// A reference whose digest may be missing: what `producers fetch` resolves and `producers
/// publish` pushes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unpinned {
    pub registry: String,
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl Unpinned {
    pub(crate) fn parse(text: &str) -> Result<Self, ReferenceError> {
        let bad = |why| ReferenceError::Malformed {
            text: text.to_owned(),
            why,
        };
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it does not start with oci://"))?;
        let (name, digest) = match rest.split_once('@') {
            Some((name, digest)) => (name, Some(parse_digest(digest).map_err(bad)?)),
            None => (rest, None),
        };
        let (registry, path) = name
            .split_once('/')
            .ok_or_else(|| bad("no repository after the registry"))?;
        if !valid_registry(registry) {
            return Err(bad(
                "the registry is not a host name or address with an optional port",
            ));
        }
        let (repository, tag) = split_tag(path);
        if !valid_repository(repository) {
            return Err(bad(
                "the repository is not lowercase path components of letters, digits, `.`, `_` and `-`",
            ));
        }
        if let Some(tag) = tag
            && !valid_tag(tag)
        {
            return Err(bad(
                "the tag is not 1 to 128 letters, digits, `.`, `_` and `-`, starting with a letter, digit or `_`",
            ));
        }
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest,
        })
    }

    /// `TAG`, else `latest`: what a push names and an unpinned fetch resolves.
    pub(crate) fn tag_or_latest(&self) -> &str {
        self.tag.as_deref().unwrap_or("latest")
    }

    /// This reference pinned to `digest` (64 hex digits).
    pub(crate) fn pinned_to(&self, digest: String) -> Reference {
        Reference {
            registry: self.registry.clone(),
            repository: self.repository.clone(),
            tag: self.tag.clone(),
            digest,
        }
    }
}

fn parse_digest(text: &str) -> Result<String, &'static str> {
    let hex = text
        .strip_prefix("sha256:")
        .ok_or("the digest is not sha256:<64 hex digits>")?;
    let valid = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    valid
        .then(|| hex.to_owned())
        .ok_or("the digest is not sha256: and 64 lowercase hex digits")
}

/// `repo:tag` → (`repo`, `tag`); a `:` before the last `/` is not a tag.
fn split_tag(path: &str) -> (&str, Option<&str>) {
    match path.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag)),
        _ => (path, None),
    }
}

fn valid_registry(registry: &str) -> bool {
    let (host, port) = match registry.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((address, rest)) => (address, rest.strip_prefix(':')),
            None => return false,
        },
        None => match registry.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (registry, None),
        },
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':'));
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

fn valid_repository(repository: &str) -> bool {
    !repository.is_empty()
        && repository.len() <= 255
        && repository.split('/').all(|part| {
            let bytes = part.as_bytes();
            !part.is_empty()
                && bytes[0].is_ascii_alphanumeric()
                && bytes[bytes.len() - 1].is_ascii_alphanumeric()
                && part.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
        })
}

fn valid_tag(tag: &str) -> bool {
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_tag_and_digest_parse_and_print_back() {
        let text = format!("oci://ghcr.io/acme/untested-modules:1.2@sha256:{HEX}");
        let r = Reference::parse(&text).unwrap();
        assert_eq!(r.registry, "ghcr.io");
        assert_eq!(r.repository, "acme/untested-modules");
        assert_eq!(r.tag.as_deref(), Some("1.2"));
        assert_eq!(r.to_string(), text);
        assert_eq!(
            r.pinned(),
            format!("oci://ghcr.io/acme/untested-modules@sha256:{HEX}")
        );
    }

    #[test]
    fn a_port_is_not_a_tag_and_the_digest_alone_pins() {
        let r = Reference::parse(&format!("oci://127.0.0.1:5000/x@sha256:{HEX}")).unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("127.0.0.1:5000", "x")
        );
        assert_eq!(r.tag, None);
        let v6 = Reference::parse(&format!("oci://[::1]:5000/a/b:v1@sha256:{HEX}")).unwrap();
        assert_eq!(v6.registry, "[::1]:5000");
    }

    #[test]
    fn a_tag_alone_is_refused_naming_the_command_that_prints_the_digest() {
        let e = Reference::parse("oci://ghcr.io/acme/x:1.2").unwrap_err();
        assert_eq!(
            e,
            ReferenceError::NoDigest("oci://ghcr.io/acme/x:1.2".into())
        );
        assert!(
            e.to_string()
                .contains("discern producers fetch oci://ghcr.io/acme/x:1.2")
        );
    }

    #[test]
    fn malformed_references_are_refused() {
        for text in [
            "ghcr.io/acme/x@sha256:00".to_owned(),
            format!("oci://ghcr.io@sha256:{HEX}"),
            format!("oci://ghcr.io/Acme/x@sha256:{HEX}"),
            format!("oci://ghcr.io/acme/x:-bad@sha256:{HEX}"),
            "oci://ghcr.io/acme/x@sha256:abc".to_owned(),
            format!("oci://ghcr.io/acme/x@sha512:{HEX}"),
            format!("oci://gh cr.io/acme/x@sha256:{HEX}"),
            format!("oci://ghcr.io//x@sha256:{HEX}"),
        ] {
            assert!(
                matches!(
                    Reference::parse(&text),
                    Err(ReferenceError::Malformed { .. })
                ),
                "{text}"
            );
        }
    }
}
