//! The per-user store of registry components, beside the compile cache:
//! `<cache>/oci/manifests/sha256/<hex>` (the manifest, named by the digest a Standard pins) and
//! `<cache>/oci/blobs/sha256/<hex>` (the component it names). Content-addressed, so every
//! repository that pins one digest shares one copy. Nothing enters unverified (the fetch checks
//! both digests before the first write), and every read is checked again: a file that does not
//! hash to its name is a miss, never a component.

use std::path::{Path, PathBuf};

use super::error::OciError;
use super::layout;
use super::reference::Reference;
use crate::digest::Digest;

#[derive(Debug, Clone)]
pub(crate) struct Store {
    root: PathBuf,
}

impl Store {
    /// The store under the per-user cache folder `cache_dir` (`DISCERN_CACHE_DIR`, XDG).
    pub(crate) fn in_cache(cache_dir: &Path) -> Self {
        Self {
            root: cache_dir.join("oci"),
        }
    }

    fn manifest_path(&self, hex: &str) -> PathBuf {
        self.root.join("manifests").join("sha256").join(hex)
    }

    fn blob_path(&self, hex: &str) -> PathBuf {
        self.root.join("blobs").join("sha256").join(hex)
    }

    /// The component `reference` pins, when the store holds it whole and true.
    pub(crate) fn load(&self, reference: &Reference) -> Option<Vec<u8>> {
        let manifest = read_verified(&self.manifest_path(&reference.digest), &reference.digest)?;
        let layer = layout::component_layer(&manifest).ok()?;
        let component = read_verified(&self.blob_path(&layer.digest), &layer.digest)?;
        (component.len() as u64 == layer.size).then_some(component)
    }

    /// Keep `manifest` and its `component`, both already verified against their digests: the
    /// component first, so a manifest in the store always has its component beside it (a crash
    /// between the two leaves an unnamed blob, which a later fetch overwrites).
    pub(crate) fn save(
        &self,
        reference: &Reference,
        manifest: &[u8],
        component: &[u8],
    ) -> Result<(), OciError> {
        let layer = Digest::of(component).hex();
        // What a write cut short left (discern's temp files, an hour old) goes first.
        for path in [
            self.blob_path(&layer),
            self.manifest_path(&reference.digest),
        ] {
            if let Some(dir) = path.parent() {
                crate::fsutil::clean_temp(dir, std::time::Duration::from_secs(3600));
            }
        }
        self.write(&self.blob_path(&layer), component)?;
        self.write(&self.manifest_path(&reference.digest), manifest)
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), OciError> {
        crate::fsutil::write_cache(path, bytes).map_err(|e| OciError::Cache {
            action: "write",
            path: path.display().to_string(),
            why: e.to_string(),
        })
    }
}

/// The bytes at `path` if they hash to `hex`.
fn read_verified(path: &Path, hex: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    (Digest::of(&bytes).hex() == hex).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> (tempfile::TempDir, Store, Reference, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_cache(dir.path());
        let component = b"\0asm component".to_vec();
        let config = layout::config_blob(&Digest::of(&component).hex()).unwrap();
        let manifest = layout::manifest(
            (&Digest::of(&config).hex(), config.len() as u64),
            (&Digest::of(&component).hex(), component.len() as u64),
        )
        .unwrap();
        let text = format!("oci://127.0.0.1:1/x@sha256:{}", Digest::of(&manifest).hex());
        let reference = Reference::parse(&text).unwrap();
        store.save(&reference, &manifest, &component).unwrap();
        (dir, store, reference, component)
    }

    #[test]
    fn a_saved_component_loads_by_its_manifest_digest() {
        let (_dir, store, reference, component) = stored();
        assert_eq!(store.load(&reference), Some(component));
    }

    #[test]
    fn a_changed_file_in_the_store_is_a_miss() {
        let (_dir, store, reference, component) = stored();
        let blob = store.blob_path(&Digest::of(&component).hex());
        std::fs::write(&blob, b"\0asm other bytes").unwrap();
        assert_eq!(store.load(&reference), None);
        std::fs::write(&blob, &component).unwrap();
        std::fs::write(store.manifest_path(&reference.digest), b"{}").unwrap();
        assert_eq!(store.load(&reference), None);
    }
}
