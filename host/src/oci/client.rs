//! The OCI distribution API over one blocking agent, bounded against a hostile registry: every
//! body capped, every request timed out, at most a few redirects (never from TLS down to plain
//! HTTP), plain HTTP only for a loopback registry (as docker allows `localhost:5000`).

use std::cell::RefCell;
use std::time::Duration;

use ureq::Agent;
use ureq::http::Response;

use super::auth::{self, Challenge, Secret};
use super::error::OciError;
use super::layout::{MAX_MANIFEST_BYTES, OCI_MANIFEST};
use super::options::Options;
use crate::digest::Digest;

/// The largest token-service answer read.
const MAX_TOKEN_BYTES: u64 = 64 << 10;
const MAX_REDIRECTS: u32 = 5;

type Answer = Result<Response<ureq::Body>, ureq::Error>;

/// What a client may do: pull, or pull and push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Pull,
    Push,
}

/// A client of one repository of one registry; `label` names it in every failure.
pub(crate) struct Client {
    agent: Agent,
    base: String,
    registry: String,
    repository: String,
    label: String,
    access: Access,
    secret: Option<Secret>,
    /// Why `DISCERN_OCI_TOKEN` was not sent here (it names another registry).
    withheld: Option<String>,
    authorization: RefCell<Option<String>>,
}

/// Whether `registry` (`host[:port]`) is this machine, where plain HTTP is allowed.
pub(crate) fn loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => registry.split(':').next().unwrap_or(""),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

impl Client {
    pub(crate) fn new(
        registry: &str,
        repository: &str,
        label: &str,
        options: &Options,
        access: Access,
    ) -> Result<Self, OciError> {
        let credentials = &options.credentials;
        let secret = credentials
            .for_registry(registry)
            .map_err(|why| OciError::Credentials {
                reference: label.to_owned(),
                why,
            })?;
        let local = loopback(registry);
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .https_only(!local)
            .max_redirects(MAX_REDIRECTS)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_recv_response(Some(options.answer_timeout))
            .timeout_global(Some(options.answer_timeout * 10))
            .user_agent(concat!("discern/", env!("CARGO_PKG_VERSION")));
        let bearer = match &secret {
            Some(Secret::Token(token)) => Some(format!("Bearer {token}")),
            _ => None,
        };
        Ok(Self {
            agent: Agent::new_with_config(config.build()),
            base: format!("{}://{registry}", if local { "http" } else { "https" }),
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            label: label.to_owned(),
            access,
            secret,
            withheld: credentials.withheld(registry),
            authorization: RefCell::new(bearer),
        })
    }

    fn url(&self, tail: &str) -> String {
        format!("{}/v2/{}/{tail}", self.base, self.repository)
    }

    /// The manifest named `reference` (a digest or a tag), at most [`MAX_MANIFEST_BYTES`].
    pub(crate) fn manifest(&self, reference: &str) -> Result<Vec<u8>, OciError> {
        let url = self.url(&format!("manifests/{reference}"));
        let accept =
            format!("{OCI_MANIFEST}, application/vnd.docker.distribution.manifest.v2+json");
        let response = self.send("the manifest", &|auth| {
            with_auth(self.agent.get(&url).header("Accept", &accept), auth).call()
        })?;
        self.read(response, "the manifest", MAX_MANIFEST_BYTES)
    }

    /// The blob `hex` (sha256), at most `limit` bytes (not yet verified).
    pub(crate) fn blob(&self, hex: &str, limit: u64) -> Result<Vec<u8>, OciError> {
        let url = self.url(&format!("blobs/sha256:{hex}"));
        let response = self.send("the component layer", &|auth| {
            with_auth(self.agent.get(&url), auth).call()
        })?;
        self.read(response, "the component layer", limit)
    }

    /// Push `bytes` as a blob (skipped when the registry has it), in one monolithic upload.
    pub(crate) fn push_blob(&self, bytes: &[u8]) -> Result<(), OciError> {
        let digest = format!("sha256:{}", Digest::of(bytes).hex());
        let url = self.url(&format!("blobs/{digest}"));
        let have = self.send("a blob", &|auth| {
            with_auth(self.agent.head(&url), auth).call()
        });
        if have.is_ok() {
            return Ok(());
        }
        let uploads = self.url("blobs/uploads/");
        let started = self.send("an upload", &|auth| {
            with_auth(self.agent.post(&uploads), auth).send_empty()
        })?;
        let location = started
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| self.status("an upload", started.status().as_u16()))?;
        let target = self.located(location, &digest);
        self.send("a blob", &|auth| {
            with_auth(self.agent.put(&target), auth)
                .header("Content-Type", "application/octet-stream")
                .send(bytes)
        })?;
        Ok(())
    }

    /// Push `manifest` under `tag`.
    pub(crate) fn push_manifest(&self, tag: &str, manifest: &[u8]) -> Result<(), OciError> {
        let url = self.url(&format!("manifests/{tag}"));
        self.send("the manifest", &|auth| {
            with_auth(self.agent.put(&url), auth)
                .header("Content-Type", OCI_MANIFEST)
                .send(manifest)
        })?;
        Ok(())
    }

    /// An upload's `Location` (absolute or from the root) with `digest` added.
    fn located(&self, location: &str, digest: &str) -> String {
        let url = match location.starts_with("http://") || location.starts_with("https://") {
            true => location.to_owned(),
            false => format!("{}{location}", self.base),
        };
        let joiner = if url.contains('?') { '&' } else { '?' };
        format!("{url}{joiner}digest={}", digest.replace(':', "%3A"))
    }

    /// Send with the authorization held; on a 401, authenticate as the registry asks and send
    /// once more. Any status but 2xx is an error.
    fn send(
        &self,
        what: &'static str,
        call: &dyn Fn(Option<&str>) -> Answer,
    ) -> Result<Response<ureq::Body>, OciError> {
        let held = self.authorization.borrow().clone();
        let mut response = call(held.as_deref()).map_err(|e| self.failure(what, e))?;
        if response.status().as_u16() == 401
            && let Some(header) = self.authenticate(&response)?
        {
            *self.authorization.borrow_mut() = Some(header.clone());
            response = call(Some(&header)).map_err(|e| self.failure(what, e))?;
        }
        match response.status().as_u16() {
            200..=299 => Ok(response),
            status => Err(self.status(what, status)),
        }
    }

    /// The `Authorization` header a 401 asks for (`None`: nothing to answer it with).
    fn authenticate(&self, response: &Response<ureq::Body>) -> Result<Option<String>, OciError> {
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|h| h.to_str().ok())
            .and_then(auth::challenge);
        match challenge {
            Some(Challenge::Basic) => Ok(self.secret.as_ref().map(Secret::basic_header)),
            Some(Challenge::Bearer { realm, service, .. }) => {
                self.token(&realm, service.as_deref()).map(Some)
            }
            None => Ok(None),
        }
    }

    /// A bearer token from the registry's token service (anonymous, or with the secret).
    fn token(&self, realm: &str, service: Option<&str>) -> Result<String, OciError> {
        let what = "a token";
        let secure = realm.starts_with("https://");
        let local = realm
            .strip_prefix("http://")
            .is_some_and(|rest| loopback(rest.split('/').next().unwrap_or("")));
        if !secure && !local {
            return Err(self.unusable(format!("its token service {realm} is not https://")));
        }
        let actions = match self.access {
            Access::Pull => "pull",
            Access::Push => "pull,push",
        };
        let mut url = format!(
            "{realm}?scope={}",
            query(&format!("repository:{}:{actions}", self.repository))
        );
        if let Some(service) = service {
            url.push_str(&format!("&service={}", query(service)));
        }
        let mut request = self.agent.get(&url);
        if let Some(secret) = &self.secret {
            request = request.header("Authorization", &secret.basic_header());
        }
        let response = request.call().map_err(|e| self.failure(what, e))?;
        if !response.status().is_success() {
            return Err(self.status(what, response.status().as_u16()));
        }
        let body = self.read(response, what, MAX_TOKEN_BYTES)?;
        let answer: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| self.unusable(format!("its token service answered no JSON ({e})")))?;
        answer
            .get("token")
            .or_else(|| answer.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .map(|t| format!("Bearer {t}"))
            .ok_or_else(|| self.unusable("its token service answered no token".to_owned()))
    }

    fn read(
        &self,
        mut response: Response<ureq::Body>,
        what: &'static str,
        limit: u64,
    ) -> Result<Vec<u8>, OciError> {
        response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => OciError::TooLarge {
                    reference: self.label.clone(),
                    what,
                    limit,
                },
                e => self.failure(what, e),
            })
    }

    fn unusable(&self, why: String) -> OciError {
        OciError::Credentials {
            reference: self.label.clone(),
            why: format!(
                "the registry {} cannot be authenticated to: {why}",
                self.registry
            ),
        }
    }

    fn failure(&self, what: &'static str, e: ureq::Error) -> OciError {
        match self.access {
            Access::Pull => OciError::Unreachable {
                reference: self.label.clone(),
                registry: self.registry.clone(),
                why: format!("fetching {what}: {e}"),
            },
            Access::Push => OciError::PushUnreachable {
                reference: self.label.clone(),
                why: format!("sending {what}: {e}"),
            },
        }
    }

    fn status(&self, what: &'static str, status: u16) -> OciError {
        let todo = match status {
            401 | 403 => format!(
                "set {} to a token that may {} {} (and {}={}), or `docker login {}`{}",
                auth::TOKEN_ENV,
                match self.access {
                    Access::Pull => "pull",
                    Access::Push => "push to",
                },
                self.repository,
                auth::REGISTRY_ENV,
                self.registry,
                self.registry,
                self.withheld
                    .as_ref()
                    .map_or(String::new(), |why| format!(" ({why})"))
            ),
            404 if self.access == Access::Pull => "the registry does not have it: check the reference, or publish the component (`discern producers publish`)".to_owned(),
            _ if self.access == Access::Pull => {
                "check the registry, then run `discern producers fetch`".to_owned()
            }
            _ => "check the registry and the reference, then publish again".to_owned(),
        };
        OciError::Status {
            reference: self.label.clone(),
            what,
            status,
            todo,
        }
    }
}

fn with_auth<B>(
    request: ureq::RequestBuilder<B>,
    authorization: Option<&str>,
) -> ureq::RequestBuilder<B> {
    match authorization {
        Some(value) => request.header("Authorization", value),
        None => request,
    }
}

/// Percent-encode a query value.
fn query(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_is_loopback() {
        for local in [
            "127.0.0.1:5000",
            "localhost:5000",
            "localhost",
            "[::1]:5000",
            "127.1.2.3",
        ] {
            assert!(loopback(local), "{local}");
        }
        for remote in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.evil.com",
            "[::2]:5000",
            "128.0.0.1",
            "127.evil.com",
        ] {
            assert!(!loopback(remote), "{remote}");
        }
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            query("repository:a/b:pull,push"),
            "repository%3Aa%2Fb%3Apull%2Cpush"
        );
    }
}
