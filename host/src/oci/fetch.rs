//! A pinned component from the store, else fetched: the manifest by its digest, then its one
//! layer, each checked against its digest before anything is written.

use std::path::Path;

use super::client::{Access, Client};
use super::error::OciError;
use super::layout;
use super::options::Options;
use super::reference::{Reference, Unpinned};
use super::store::Store;
use crate::digest::Digest;

/// Whether a component came from the store or the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Store,
    Registry,
}

impl Source {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Store => "cached",
            Source::Registry => "fetched",
        }
    }
}

/// The component `reference` pins: from the per-user store under `cache_dir`, else fetched,
/// verified and stored.
pub(crate) fn component(
    reference: &Reference,
    cache_dir: Option<&Path>,
    options: &Options,
) -> Result<(Vec<u8>, Source), OciError> {
    let dir = cache_dir.ok_or_else(|| OciError::NoCache {
        reference: reference.to_string(),
    })?;
    let store = Store::in_cache(dir);
    if let Some(bytes) = store.load(reference) {
        return Ok((bytes, Source::Store));
    }
    fetch_into(&store, reference, options).map(|bytes| (bytes, Source::Registry))
}

fn fetch_into(
    store: &Store,
    reference: &Reference,
    options: &Options,
) -> Result<Vec<u8>, OciError> {
    let label = reference.to_string();
    let (client, manifest) = pinned_manifest(reference, options)?;
    let layer = layout::component_layer(&manifest).map_err(|why| OciError::Layout {
        reference: label.clone(),
        why,
    })?;
    let component = client.blob(&layer.digest, layer.size)?;
    verify(&label, "the component layer", &layer.digest, &component)?;
    store.save(reference, &manifest, &component)?;
    Ok(component)
}

/// Whether the store under `cache_dir` holds the component `reference` pins (verified).
pub(crate) fn cached(reference: &Reference, cache_dir: &Path) -> bool {
    Store::in_cache(cache_dir).load(reference).is_some()
}

/// Whether the registry answers for `reference`: its manifest fetched by digest and checked
/// against it, nothing stored (`doctor`).
pub(crate) fn reachable(reference: &Reference, options: &Options) -> Result<(), OciError> {
    pinned_manifest(reference, options).map(|_| ())
}

/// A pulling client of `reference`'s registry, and the manifest it pins, checked against it.
fn pinned_manifest(
    reference: &Reference,
    options: &Options,
) -> Result<(Client, Vec<u8>), OciError> {
    let label = reference.to_string();
    let client = Client::new(
        &reference.registry,
        &reference.repository,
        &label,
        options,
        Access::Pull,
    )?;
    let manifest = client.manifest(&reference.digest_ref())?;
    verify(&label, "the manifest", &reference.digest, &manifest)?;
    Ok((client, manifest))
}

/// `unpinned` pinned to the digest its tag (else `latest`) names on the registry now.
pub(crate) fn resolve(unpinned: &Unpinned, options: &Options) -> Result<Reference, OciError> {
    let label = format!(
        "{}{}/{}:{}",
        super::SCHEME,
        unpinned.registry,
        unpinned.repository,
        unpinned.tag_or_latest()
    );
    let client = Client::new(
        &unpinned.registry,
        &unpinned.repository,
        &label,
        options,
        Access::Pull,
    )?;
    let manifest = client.manifest(unpinned.tag_or_latest())?;
    layout::component_layer(&manifest).map_err(|why| OciError::Layout {
        reference: label.clone(),
        why,
    })?;
    Ok(unpinned.pinned_to(Digest::of(&manifest).hex()))
}

fn verify(label: &str, what: &'static str, expected: &str, bytes: &[u8]) -> Result<(), OciError> {
    let actual = Digest::of(bytes).hex();
    match actual == expected {
        true => Ok(()),
        false => Err(OciError::Tampered {
            reference: label.to_owned(),
            what,
            expected: format!("sha256:{expected}"),
            actual: format!("sha256:{actual}"),
        }),
    }
}
