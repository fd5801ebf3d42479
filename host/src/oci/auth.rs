//! Who discern is to a registry: anonymous, the token in `DISCERN_OCI_TOKEN` (sent only to the
//! registry `DISCERN_OCI_REGISTRY` names: a branch that names another registry never receives
//! it), or the login docker keeps in its credential file (`$DOCKER_CONFIG/config.json`, else
//! `~/.docker/config.json`, its `auths`, each for its own registry). A registry that answers 401 names how to
//! authenticate (`WWW-Authenticate`): Basic, or a Bearer token from its token service.

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The environment variable holding a registry token.
pub(crate) const TOKEN_ENV: &str = "DISCERN_OCI_TOKEN";
/// The environment variable naming the one registry (`host[:port]`) the token is sent to.
pub(crate) const REGISTRY_ENV: &str = "DISCERN_OCI_REGISTRY";

/// Where credentials come from, read once per process by the frontend.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    token: Option<String>,
    token_registry: Option<String>,
    docker_config: Option<PathBuf>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("token_registry", &self.token_registry)
            .field("docker_config", &self.docker_config)
            .finish()
    }
}

/// What is sent to one registry (never printed: no `Debug`).
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Secret {
    /// `DISCERN_OCI_TOKEN`: a bearer token as it is, or the password of a token exchange.
    Token(String),
    /// A user and password (docker's `auth`).
    Basic { user: String, password: String },
}

impl Secret {
    /// The `Authorization` header sent to a registry or its token service that asked for
    /// Basic.
    pub(crate) fn basic_header(&self) -> String {
        let (user, password) = match self {
            Secret::Token(token) => ("discern", token.as_str()),
            Secret::Basic { user, password } => (user.as_str(), password.as_str()),
        };
        format!("Basic {}", STANDARD.encode(format!("{user}:{password}")))
    }
}

impl Credentials {
    /// `DISCERN_OCI_TOKEN` and docker's credential file, from the process environment.
    pub(crate) fn from_env() -> Self {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let docker_dir = var("DOCKER_CONFIG")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".docker")));
        Self {
            token: std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty()),
            token_registry: std::env::var(REGISTRY_ENV).ok().filter(|r| !r.is_empty()),
            docker_config: docker_dir.map(|d| d.join("config.json")),
        }
    }

    /// Why the token was not sent to `registry`, when one is set for another registry (or for
    /// none): what a refusal of 401 adds.
    pub(crate) fn withheld(&self, registry: &str) -> Option<String> {
        self.token.as_ref()?;
        match &self.token_registry {
            Some(named) if named == registry => None,
            Some(named) => Some(format!(
                "{TOKEN_ENV} is sent only to {named} ({REGISTRY_ENV}), not to {registry}"
            )),
            None => Some(format!(
                "{TOKEN_ENV} is sent only to the registry {REGISTRY_ENV} names, and it names none: set {REGISTRY_ENV}={registry} if that registry is to receive it"
            )),
        }
    }

    /// The secret for `registry` (`host[:port]`): the token where `DISCERN_OCI_REGISTRY` names
    /// it, else docker's login for it, else none (anonymous). A credential file that cannot be
    /// read or parsed is an error.
    pub(crate) fn for_registry(&self, registry: &str) -> Result<Option<Secret>, String> {
        if let Some(token) = &self.token
            && self.token_registry.as_deref() == Some(registry)
        {
            return Ok(Some(Secret::Token(token.clone())));
        }
        let Some(path) = &self.docker_config else {
            return Ok(None);
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "cannot read docker's credential file {}: {e}",
                    path.display()
                ));
            }
        };
        docker_login(&text, registry)
            .map_err(|why| format!("docker's credential file {} {why}", path.display()))
    }
}

/// The `auths` entry of docker's `config.json` for `registry` (keys may carry a scheme).
fn docker_login(text: &str, registry: &str) -> Result<Option<Secret>, String> {
    let config: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("is not JSON: {e}"))?;
    let Some(auths) = config.get("auths").and_then(|a| a.as_object()) else {
        return Ok(None);
    };
    let entry = auths.iter().find(|(key, _)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        host.split('/').next() == Some(registry)
    });
    let Some(encoded) = entry
        .and_then(|(_, e)| e.get("auth"))
        .and_then(|a| a.as_str())
    else {
        return Ok(None);
    };
    let decoded = STANDARD
        .decode(encoded)
        .ok()
        .and_then(|d| String::from_utf8(d).ok())
        .ok_or_else(|| {
            format!("holds an `auth` for {registry} that is not base64 of user:password")
        })?;
    let (user, password) = decoded
        .split_once(':')
        .ok_or_else(|| format!("holds an `auth` for {registry} without a `:`"))?;
    Ok(Some(Secret::Basic {
        user: user.to_owned(),
        password: password.to_owned(),
    }))
}

/// How a registry's 401 says to authenticate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Challenge {
    Basic,
    /// A token service at `realm`, with its `service` and `scope` parameters.
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
}

/// Parse a `WWW-Authenticate` value (`Bearer realm="…",service="…",scope="…"`).
pub(crate) fn challenge(header: &str) -> Option<Challenge> {
    let (scheme, params) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let param = |name: &str| quoted_param(params, name);
    Some(Challenge::Bearer {
        realm: param("realm")?,
        service: param("service"),
        scope: param("scope"),
    })
}

/// `name="value"` (or unquoted up to a comma) in a comma-separated parameter list.
fn quoted_param(params: &str, name: &str) -> Option<String> {
    let mut rest = params;
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let key = key.trim().trim_start_matches(',').trim();
        let (value, tail) = match after.strip_prefix('"') {
            Some(quoted) => {
                let (value, tail) = quoted.split_once('"')?;
                (value, tail)
            }
            None => after.split_once(',').unwrap_or((after, "")),
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value.to_owned());
        }
        rest = tail.trim_start_matches(',');
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_names_its_token_service() {
        let parsed = challenge(
            r#"Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:acme/x:pull""#,
        );
        assert_eq!(
            parsed,
            Some(Challenge::Bearer {
                realm: "https://ghcr.io/token".into(),
                service: Some("ghcr.io".into()),
                scope: Some("repository:acme/x:pull".into()),
            })
        );
        assert_eq!(
            challenge(r#"Basic realm="Registry""#),
            Some(Challenge::Basic)
        );
        assert_eq!(challenge("Negotiate"), None);
        assert_eq!(challenge(r#"Bearer service="x""#), None);
    }

    #[test]
    fn the_token_goes_only_to_the_registry_named_for_it() {
        let credentials = Credentials {
            token: Some("t".into()),
            token_registry: Some("ghcr.io".into()),
            docker_config: None,
        };
        assert!(matches!(
            credentials.for_registry("ghcr.io"),
            Ok(Some(Secret::Token(t))) if t == "t"
        ));
        assert!(matches!(credentials.for_registry("evil.example"), Ok(None)));
        assert!(credentials.withheld("ghcr.io").is_none());
        let why = credentials.withheld("evil.example").unwrap_or_default();
        assert!(why.contains("sent only to ghcr.io"), "{why}");
        let unnamed = Credentials {
            token_registry: None,
            ..credentials
        };
        assert!(matches!(unnamed.for_registry("ghcr.io"), Ok(None)));
        assert!(unnamed.withheld("ghcr.io").is_some());
    }

    #[test]
    fn docker_logins_are_found_by_registry_with_or_without_a_scheme() {
        let auth = STANDARD.encode("me:secret");
        let text = format!(r#"{{"auths":{{"https://ghcr.io":{{"auth":"{auth}"}}}}}}"#);
        let secret = docker_login(&text, "ghcr.io")
            .ok()
            .flatten()
            .expect("a login");
        assert_eq!(secret.basic_header(), format!("Basic {auth}"));
        assert!(matches!(docker_login(&text, "quay.io"), Ok(None)));
        assert!(matches!(docker_login("{", "ghcr.io"), Err(e) if e.contains("not JSON")));
        let bad = r#"{"auths":{"ghcr.io":{"auth":"%%%"}}}"#;
        assert!(matches!(docker_login(bad, "ghcr.io"), Err(e) if e.contains("not base64")));
    }
}
