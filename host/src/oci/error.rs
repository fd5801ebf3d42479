//! Every way fetching, verifying, caching or pushing a registry component fails: each names
//! the reference and what to do.

/// A failure of one registry reference (`reference` is the text the config or the command
/// line gave).
#[derive(Debug, thiserror::Error)]
pub(crate) enum OciError {
    #[error(
        "{reference} is not in the component cache and the registry cannot be reached ({why}); run `discern producers fetch` once {registry} is reachable (a digest fetched once measures offline)"
    )]
    Unreachable {
        reference: String,
        registry: String,
        why: String,
    },
    #[error(
        "cannot push {reference}: the registry cannot be reached ({why}); check the address and the network, then publish again"
    )]
    PushUnreachable { reference: String, why: String },
    #[error("the registry refused {what} of {reference} (HTTP {status}); {todo}")]
    Status {
        reference: String,
        what: &'static str,
        status: u16,
        todo: String,
    },
    #[error(
        "the registry sent more than {limit} bytes for {what} of {reference} (what its manifest declares, or the most discern reads); nothing was cached and nothing runs: check that the reference names a producer component and that the registry serves it whole"
    )]
    TooLarge {
        reference: String,
        what: &'static str,
        limit: u64,
    },
    #[error(
        "the registry sent {what} of {reference} whose sha256 is {actual}, not {expected}; nothing was cached and nothing runs: the registry (or something between) serves other bytes under this digest, so fetch it from a registry you trust"
    )]
    Tampered {
        reference: String,
        what: &'static str,
        expected: String,
        actual: String,
    },
    #[error(
        "{reference} is not a wasm component in the OCI layout discern reads ({why}): one `application/wasm` layer and an `application/vnd.wasm.config.v0+json` config, as `discern producers publish` pushes it"
    )]
    Layout { reference: String, why: String },
    #[error(
        "cannot {action} the component cache {path}: {why}; make it writable, or point DISCERN_CACHE_DIR at a writable folder"
    )]
    Cache {
        action: &'static str,
        path: String,
        why: String,
    },
    #[error(
        "{reference} cannot be fetched: there is no per-user cache folder to keep it in; set DISCERN_CACHE_DIR (or HOME)"
    )]
    NoCache { reference: String },
    #[error("{reference}: {why}; fix it, or set DISCERN_OCI_TOKEN to a token the registry takes")]
    Credentials { reference: String, why: String },
}
