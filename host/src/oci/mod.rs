//! Producer components from an OCI registry (`producer = "oci://REGISTRY/REPO:TAG@sha256:…"`):
//! the reference (`reference.rs`), the CNCF Wasm artifact layout (`layout.rs`), credentials
//! (`auth.rs`), the distribution API (`client.rs`), the per-user content-addressed store beside
//! the compile cache (`store.rs`), fetching (`fetch.rs`) and pushing (`publish.rs`).
//! **Invariant:** nothing is stored or run that did not hash to the digest the Standard pins.

mod auth;
mod client;
mod error;
mod fetch;
mod layout;
mod options;
mod publish;
mod reference;
mod store;

pub(crate) use error::OciError;
pub(crate) use fetch::{cached, component, reachable, resolve};
pub(crate) use options::Options;
pub(crate) use publish::push;
pub(crate) use reference::Reference;
pub(crate) use reference::{ReferenceError, SCHEME, Unpinned};
