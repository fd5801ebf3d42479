//! The HTTP side: one blocking agent, bounded in time and in every body it reads or sends.

use std::path::PathBuf;
use std::time::Duration;

use prost::Message;
use ureq::Agent;

use super::layout::{self, Wanted};
use super::{ActionResult, RemoteError};
use crate::digest::Digest;
use crate::evidence::bundle::Bundle;

/// The environment variable whose value, when set, is sent as the `Authorization` header
/// (`Bearer <token>`, `Basic <base64>`): the credentials stay out of `discern.toml`.
pub(crate) const AUTHORIZATION_ENV: &str = "DISCERN_REMOTE_CACHE_AUTHORIZATION";

const AC: &str = "ac";
const CAS: &str = "cas";

/// How a [`Client`] talks to its server.
#[derive(Clone)]
pub struct Options {
    /// The longest one request may take, its body included.
    pub timeout: Duration,
    /// The longest connecting may take.
    pub connect_timeout: Duration,
    /// The largest blob read or written.
    pub max_blob_bytes: u64,
    /// The largest action result read or written.
    pub max_action_result_bytes: u64,
    /// The `Authorization` header's value.
    pub authorization: Option<String>,
    /// Whether `HTTP_PROXY`/`NO_PROXY` and their kin apply.
    pub proxy_from_env: bool,
    /// A PEM file of the only CAs an `https://` cache is trusted by (default: the web's roots).
    pub ca_file: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(5),
            max_blob_bytes: 64 << 20,
            max_action_result_bytes: 1 << 20,
            authorization: None,
            proxy_from_env: true,
            ca_file: None,
        }
    }
}

impl Options {
    /// The defaults, with the `Authorization` header from [`AUTHORIZATION_ENV`] and the CA
    /// file from [`super::CA_ENV`].
    pub fn from_env() -> Self {
        Self {
            authorization: std::env::var(AUTHORIZATION_ENV)
                .ok()
                .filter(|v| !v.is_empty()),
            ca_file: std::env::var_os(super::trust::CA_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            ..Self::default()
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_blob_bytes", &self.max_blob_bytes)
            .field("max_action_result_bytes", &self.max_action_result_bytes)
            .field("authorization", &self.authorization.as_ref().map(|_| "…"))
            .field("proxy_from_env", &self.proxy_from_env)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// A remote cache at one base URL.
#[derive(Debug)]
pub struct Client {
    base: String,
    agent: Agent,
    options: Options,
}

impl Client {
    /// A client of the cache at `base_url` (`http://host:port/prefix`; `https://` in a build
    /// with the `remote-cache-tls` feature). Nothing is sent yet.
    pub fn new(base_url: &str, options: Options) -> Result<Self, RemoteError> {
        let base = checked_base(base_url)?;
        let mut config = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(options.timeout))
            .timeout_connect(Some(options.connect_timeout))
            .user_agent(concat!("discern/", env!("CARGO_PKG_VERSION")));
        if !options.proxy_from_env {
            config = config.proxy(None);
        }
        #[cfg(feature = "remote-cache-tls")]
        if let Some(file) = &options.ca_file {
            config = config.tls_config(super::trust::only(file)?);
        }
        Ok(Self {
            base,
            agent: Agent::new_with_config(config.build()),
            options,
        })
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The bundle kept under `key`, read whole and checked against every digest; `Ok(None)`
    /// when the key, or a blob its action result names, is not there.
    pub fn get(&self, key: &Digest) -> Result<Option<Bundle>, RemoteError> {
        let key = key.hex();
        let limit = self.options.max_action_result_bytes;
        let Some(raw) = self.fetch(AC, &key, limit)? else {
            return Ok(None);
        };
        let malformed = |why: String| RemoteError::Malformed {
            key: key.clone(),
            why,
        };
        let result = ActionResult::decode(raw.as_slice())
            .map_err(|e| malformed(format!("is not a protobuf ActionResult ({e})")))?;
        let wanted = layout::wanted(result, self.options.max_blob_bytes).map_err(malformed)?;
        let mut parts = Vec::with_capacity(wanted.len());
        for blob in wanted {
            let Some(bytes) = self.blob(&key, &blob)? else {
                return Ok(None);
            };
            parts.push((blob.path, bytes));
        }
        Ok(layout::bundle(parts))
    }

    /// Keep `bundle` under `key`: every part as a CAS blob first, the action result naming
    /// them last. A part over the cap is refused before anything is sent.
    pub fn put(&self, key: &Digest, bundle: &Bundle) -> Result<(), RemoteError> {
        let parts = layout::parts(bundle);
        let max_blob = self.options.max_blob_bytes;
        if let Some(big) = parts.iter().find(|p| p.bytes.len() as u64 > max_blob) {
            return Err(self.too_large(CAS, &big.hash, max_blob));
        }
        let encoded = layout::action_result(&parts).encode_to_vec();
        let key = key.hex();
        if encoded.len() as u64 > self.options.max_action_result_bytes {
            return Err(self.too_large(AC, &key, self.options.max_action_result_bytes));
        }
        for part in &parts {
            self.store(CAS, &part.hash, part.bytes)?;
        }
        self.store(AC, &key, &encoded)
    }

    /// One blob an action result names, checked against its digest.
    fn blob(&self, key: &str, wanted: &Wanted) -> Result<Option<Vec<u8>>, RemoteError> {
        let bytes = match &wanted.inline {
            Some(inline) => inline.clone(),
            None if wanted.size == 0 => Vec::new(),
            None => match self.fetch(CAS, &wanted.hash, wanted.size)? {
                Some(bytes) => bytes,
                None => return Ok(None),
            },
        };
        layout::verify(key, wanted, &bytes)?;
        Ok(Some(bytes))
    }

    fn url(&self, kind: &str, hash: &str) -> String {
        format!("{}/{kind}/{hash}", self.base)
    }

    /// `GET` a body of at most `limit` bytes; `None` on 404.
    fn fetch(&self, kind: &str, hash: &str, limit: u64) -> Result<Option<Vec<u8>>, RemoteError> {
        let url = self.url(kind, hash);
        let mut request = self.agent.get(&url);
        if let Some(value) = &self.options.authorization {
            request = request.header("Authorization", value);
        }
        let mut response = request.call().map_err(|e| self.failure(&url, e))?;
        match response.status().as_u16() {
            404 => return Ok(None),
            200..=299 => {}
            status => return Err(RemoteError::Status { url, status }),
        }
        let body = response.body_mut().with_config().limit(limit).read_to_vec();
        body.map(Some).map_err(|e| self.failure(&url, e))
    }

    /// `PUT` one body.
    fn store(&self, kind: &str, hash: &str, body: &[u8]) -> Result<(), RemoteError> {
        let url = self.url(kind, hash);
        let mut request = self
            .agent
            .put(&url)
            .header("Content-Type", "application/octet-stream");
        if let Some(value) = &self.options.authorization {
            request = request.header("Authorization", value);
        }
        let response = request.send(body).map_err(|e| self.failure(&url, e))?;
        match response.status().as_u16() {
            200..=299 => Ok(()),
            status => Err(RemoteError::Status { url, status }),
        }
    }

    fn too_large(&self, kind: &str, hash: &str, limit: u64) -> RemoteError {
        RemoteError::TooLarge {
            url: self.url(kind, hash),
            limit,
        }
    }

    fn failure(&self, url: &str, error: ureq::Error) -> RemoteError {
        let url = url.to_owned();
        match error {
            ureq::Error::Timeout(what) => RemoteError::Timeout {
                url,
                what: what.to_string(),
            },
            ureq::Error::Io(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                RemoteError::Timeout {
                    url,
                    what: e.to_string(),
                }
            }
            ureq::Error::BodyExceedsLimit(limit) => RemoteError::TooLarge { url, limit },
            other => RemoteError::Transport {
                why: super::trust::hint(&url, &other.to_string(), self.options.ca_file.is_some()),
                url,
            },
        }
    }
}

/// `base_url` without its trailing slashes, refused unless it is an `http://` URL (or
/// `https://` where TLS is built in) with a host and no query or fragment.
fn checked_base(base_url: &str) -> Result<String, RemoteError> {
    let refuse = |why: &str| RemoteError::Url {
        url: base_url.to_owned(),
        why: why.to_owned(),
    };
    let base = base_url.trim_end_matches('/');
    let uri: ureq::http::Uri = base
        .parse()
        .map_err(|e: ureq::http::uri::InvalidUri| refuse(&e.to_string()))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some("https") if cfg!(feature = "remote-cache-tls") => {}
        Some("https") => {
            return Err(refuse(
                "this discern is built without HTTPS (cargo feature remote-cache-tls)",
            ));
        }
        _ => return Err(refuse("must start with http:// or https://")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(refuse("names no host"));
    }
    if base.contains(['?', '#']) {
        return Err(refuse("must not have a query or a fragment"));
    }
    Ok(base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked() {
        assert_eq!(
            checked_base("http://cache:8080/discern/").expect("fine"),
            "http://cache:8080/discern"
        );
        assert!(checked_base("http://127.0.0.1:9").is_ok());
        for bad in [
            "cache:8080",
            "ftp://cache/x",
            "http://",
            "http://c/x?y=1",
            "http://c/#f",
        ] {
            assert!(checked_base(bad).is_err(), "{bad}");
        }
        assert_eq!(
            checked_base("https://cache/x").is_ok(),
            cfg!(feature = "remote-cache-tls")
        );
    }

    #[test]
    fn the_authorization_is_not_printed() {
        let options = Options {
            authorization: Some("Bearer secret".into()),
            ..Options::default()
        };
        assert!(!format!("{options:?}").contains("secret"));
    }

    #[test]
    fn an_oversize_part_is_refused_before_anything_is_sent() {
        // Port 9 (discard) on loopback: nothing is sent, so nothing needs to listen.
        let options = Options {
            max_blob_bytes: 4,
            ..Options::default()
        };
        let client = Client::new("http://127.0.0.1:9/c", options).expect("a client");
        let bundle = Bundle {
            entry: b"{\"too\":\"long\"}".to_vec(),
            findings: None,
            signature: b"s".to_vec(),
        };
        let put = client.put(&Digest::of(b"k"), &bundle);
        assert!(matches!(put, Err(RemoteError::TooLarge { .. })), "{put:?}");
    }
}
