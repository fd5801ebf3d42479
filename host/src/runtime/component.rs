//! A producer's component: its bytes, its identity (sha256) and the label users know it by;
//! for a built-in, also the machine code this binary carries for it.

use std::path::Path;
use std::sync::Arc;

use crate::digest::Digest;

#[derive(Clone)]
pub struct ProducerComponent {
    label: String,
    bytes: Arc<[u8]>,
    digest: Digest,
    /// The binary's own precompiled code of a built-in (never bytes from a repository or the
    /// user's cache): see `builtins.rs`.
    precompiled: Option<&'static [u8]>,
    /// Compile in this process: no compile-cache entry is trusted for it (the gate's Proof and
    /// a landing never run code a user-writable cache supplied).
    compiled_here: bool,
}

impl std::fmt::Debug for ProducerComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerComponent")
            .field("label", &self.label)
            .field("digest", &self.digest)
            .field("bytes", &self.bytes.len())
            .field("precompiled", &self.precompiled.map(<[u8]>::len))
            .finish()
    }
}

impl ProducerComponent {
    /// `label` names the producer in every message: `builtin:pattern` or the configured path.
    pub fn new(label: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        let bytes = bytes.into();
        Self {
            label: label.into(),
            digest: Digest::of(&bytes),
            bytes,
            precompiled: None,
            compiled_here: false,
        }
    }

    /// A built-in with the code the build script precompiled from `bytes` (empty: none).
    pub(crate) fn with_precompiled(mut self, precompiled: &'static [u8]) -> Self {
        self.precompiled = Some(precompiled).filter(|code| !code.is_empty());
        self
    }

    /// Require machine code compiled in this process (or built into the binary).
    pub fn compiled_here(mut self) -> Self {
        self.compiled_here = true;
        self
    }

    pub(crate) fn requires_compiled_here(&self) -> bool {
        self.compiled_here
    }

    pub(crate) fn precompiled(&self) -> Option<&'static [u8]> {
        self.precompiled
    }

    pub fn from_file(label: impl Into<String>, path: &Path) -> std::io::Result<Self> {
        Ok(Self::new(label, std::fs::read(path)?))
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn digest(&self) -> Digest {
        self.digest
    }
}
