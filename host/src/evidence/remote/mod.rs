//! Published evidence in a remote cache that speaks Bazel's HTTP protocol (bazel-remote,
//! BuildBuddy, NativeLink, nginx with WebDAV): `GET`/`PUT` on `<base>/ac/<key>` and
//! `<base>/cas/<sha256>`.
//!
//! A [`Bundle`](crate::evidence::bundle::Bundle) is kept as one CAS blob per part (`entry.json`,
//! `entry.findings` when it has findings, `entry.sig`) and, under its key
//! ([`remote_key`](crate::evidence::bundle::remote_key)), a real
//! `build.bazel.remote.execution.v2.ActionResult` whose output files name those blobs, so servers
//! that validate action cache entries accept it. A writer stores the blobs first and the action
//! result last: a reader never finds an action result of ours naming a blob we had not written.
//!
//! The server is untrusted storage. Every body is capped before it is read; an action result
//! must be well-formed (known output paths, each once, lowercase SHA-256 digests within the cap)
//! before any blob it names is fetched; every blob is checked against its digest (size, then
//! SHA-256). A key or blob that is not there is `Ok(None)`; anything else that keeps a bundle
//! from being read whole is a [`RemoteError`] the caller reports and treats as a miss. A bundle
//! that is read is still only bytes: its signature, repository and read set are the caller's to
//! check ([`crate::evidence::bundle`]).

mod action_result;
mod client;
mod layout;
mod trust;

pub use action_result::{ActionResult, Digest as BlobDigest, OutputFile};
pub use client::{Client, Options};
pub use layout::{ENTRY, FINDINGS, SIGNATURE};

/// Why a remote cache could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The configured base URL cannot be used.
    #[error("remote cache URL {url:?}: {why}")]
    Url { url: String, why: String },
    /// No answer in time (connecting, sending or receiving).
    #[error("remote cache {url}: no answer in time ({what})")]
    Timeout { url: String, what: String },
    /// The server could not be reached or the exchange broke off.
    #[error("remote cache {url}: {why}")]
    Transport { url: String, why: String },
    /// The CA file an `https://` cache is to be trusted by cannot be used.
    #[error("remote cache CA file {file} ({}): {why}", trust::CA_ENV)]
    Trust { file: String, why: String },
    /// The server answered with a status other than success or 404.
    #[error("remote cache {url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    /// A body over its cap (a blob to write, or a body the server sent).
    #[error("remote cache {url}: more than {limit} bytes")]
    TooLarge { url: String, limit: u64 },
    /// The action result under `key` is not one discern can read.
    #[error("remote cache entry {key}: the action result {why}")]
    Malformed { key: String, why: String },
    /// A blob is not what the action result under `key` says it is.
    #[error("remote cache entry {key}: {path} is {why}")]
    Mismatch {
        key: String,
        path: &'static str,
        why: String,
    },
}
