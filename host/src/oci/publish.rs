//! `discern producers publish`'s push: the component as one `application/wasm` layer, its
//! config, then the manifest under the tag; the reference returned is pinned by the manifest's
//! digest, which is what a Standard names.

use super::client::{Access, Client};
use super::error::OciError;
use super::layout;
use super::options::Options;
use super::reference::{Reference, Unpinned};
use crate::digest::Digest;

/// Push `component` to `to` (its tag, else `latest`) and return the pinned reference.
pub(crate) fn push(
    component: &[u8],
    to: &Unpinned,
    label: &str,
    options: &Options,
) -> Result<Reference, OciError> {
    let client = Client::new(&to.registry, &to.repository, label, options, Access::Push)?;
    let component_hex = Digest::of(component).hex();
    let layout_error = |why| OciError::Layout {
        reference: label.to_owned(),
        why,
    };
    let config = layout::config_blob(&component_hex).map_err(layout_error)?;
    let config_hex = Digest::of(&config).hex();
    let manifest = layout::manifest(
        (&config_hex, config.len() as u64),
        (&component_hex, component.len() as u64),
    )
    .map_err(layout_error)?;
    client.push_blob(component)?;
    client.push_blob(&config)?;
    client.push_manifest(to.tag_or_latest(), &manifest)?;
    let mut pinned = to.pinned_to(Digest::of(&manifest).hex());
    pinned.tag = Some(to.tag_or_latest().to_owned());
    Ok(pinned)
}
