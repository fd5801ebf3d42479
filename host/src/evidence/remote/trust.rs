//! Which certificate authorities an `https://` remote cache is trusted by: the web's roots
//! compiled into discern, or — for a cache behind a team's own authority — only the ones in
//! the PEM file [`CA_ENV`] names.

use std::path::Path;

use super::RemoteError;

/// The environment variable naming a PEM file of CA certificates: when set, an `https://`
/// cache's certificate must chain to one of them (and to nothing else).
pub(crate) const CA_ENV: &str = "DISCERN_REMOTE_CACHE_CA";

/// The TLS settings that trust exactly the certificates in `file`.
#[cfg(feature = "remote-cache-tls")]
pub(super) fn only(file: &Path) -> Result<ureq::tls::TlsConfig, RemoteError> {
    use ureq::tls::{PemItem, RootCerts, TlsConfig};
    let refuse = |why: String| RemoteError::Trust {
        file: file.display().to_string(),
        why,
    };
    let pem = std::fs::read(file).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(certificate)) => certificates.push(certificate),
            Ok(_) => {}
            Err(e) => return Err(refuse(format!("is not PEM: {e}"))),
        }
    }
    if certificates.is_empty() {
        return Err(refuse("holds no CERTIFICATE".to_owned()));
    }
    Ok(TlsConfig::builder()
        .root_certs(RootCerts::new_with_certs(&certificates))
        .build())
}

/// What a TLS failure of `url` needs added to be acted on: a certificate the built-in roots do
/// not trust is most often a team's own authority.
pub(super) fn hint(url: &str, why: &str, custom: bool) -> String {
    let certificate = why.contains("certificate") || why.contains("Certificate");
    if url.starts_with("https://") && certificate && !custom {
        format!(
            "{why} (a cache whose certificate a team's own CA issued: set {CA_ENV} to that CA's PEM file)"
        )
    } else {
        why.to_owned()
    }
}
