//! The CNCF "Wasm OCI artifact" layout (what `wkg`, wasmCloud and Spin push): an OCI image
//! manifest whose config is `application/vnd.wasm.config.v0+json` and whose one layer is the
//! component, `application/wasm`.

use oci_spec::image::{
    Descriptor, DescriptorBuilder, ImageManifest, ImageManifestBuilder, MediaType,
};

pub(crate) const WASM_LAYER: &str = "application/wasm";
pub(crate) const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
pub(crate) const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

/// The largest manifest read (a manifest of one layer is well under 1 KiB).
pub(crate) const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The largest component read (a componentize-py component is about 18 MB).
pub(crate) const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// The component layer a manifest names: its sha256 (64 hex digits) and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer {
    pub digest: String,
    pub size: u64,
}

/// The one `application/wasm` layer of `manifest`, checked against the layout.
pub(crate) fn component_layer(manifest: &[u8]) -> Result<Layer, String> {
    let manifest: ImageManifest = serde_json::from_slice(manifest)
        .map_err(|e| format!("the manifest is not an OCI image manifest: {e}"))?;
    if let Some(kind) = manifest.media_type()
        && kind.to_string() != OCI_MANIFEST
    {
        return Err(format!(
            "the manifest's media type is {kind}, not {OCI_MANIFEST}"
        ));
    }
    let config = manifest.config().media_type().to_string();
    if config != WASM_CONFIG {
        return Err(format!("its config is {config}, not {WASM_CONFIG}"));
    }
    let [layer] = manifest.layers().as_slice() else {
        return Err(format!(
            "it has {} layers, not one",
            manifest.layers().len()
        ));
    };
    let kind = layer.media_type().to_string();
    if kind != WASM_LAYER {
        return Err(format!("its layer is {kind}, not {WASM_LAYER}"));
    }
    let digest = layer.digest();
    let hex = digest.digest();
    let sha256 = digest.algorithm().to_string() == "sha256"
        && hex.len() == 64
        && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !sha256 {
        return Err(format!("its layer's digest {digest} is not sha256"));
    }
    if layer.size() > MAX_COMPONENT_BYTES {
        return Err(format!(
            "its layer declares {} bytes, more than the {MAX_COMPONENT_BYTES} discern reads",
            layer.size()
        ));
    }
    Ok(Layer {
        digest: hex.to_owned(),
        size: layer.size(),
    })
}

/// The config blob of a component: the fields the CNCF layout requires, and nothing that
/// changes between two pushes of the same bytes (no time), so a push is reproducible.
pub(crate) fn config_blob(layer_digest: &str) -> Result<Vec<u8>, String> {
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [format!("sha256:{layer_digest}")],
    });
    serde_json::to_vec(&config)
        .map_err(|e| format!("the component's config cannot be written: {e}"))
}

/// The manifest naming `config` and `component` (each sha256 hex and bytes).
pub(crate) fn manifest(config: (&str, u64), component: (&str, u64)) -> Result<Vec<u8>, String> {
    let descriptor = |kind: &str, (hex, size): (&str, u64)| -> Result<Descriptor, String> {
        let digest = format!("sha256:{hex}")
            .parse::<oci_spec::image::Digest>()
            .map_err(|e| e.to_string())?;
        DescriptorBuilder::default()
            .media_type(MediaType::Other(kind.to_owned()))
            .digest(digest)
            .size(size)
            .build()
            .map_err(|e| e.to_string())
    };
    let manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .artifact_type(MediaType::Other(WASM_CONFIG.to_owned()))
        .config(descriptor(WASM_CONFIG, config)?)
        .layers(vec![descriptor(WASM_LAYER, component)?])
        .build()
        .map_err(|e| e.to_string())?;
    serde_json::to_vec(&manifest).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn a_pushed_manifest_reads_back_as_its_layer() {
        let bytes = manifest((A, 10), (B, 20)).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains(WASM_CONFIG) && text.contains(WASM_LAYER),
            "{text}"
        );
        assert_eq!(
            component_layer(&bytes).unwrap(),
            Layer {
                digest: B.to_owned(),
                size: 20
            }
        );
    }

    #[test]
    fn other_layouts_are_refused_with_what_differs() {
        let image = String::from_utf8(manifest((A, 10), (B, 20)).unwrap())
            .unwrap()
            .replace(WASM_CONFIG, "application/vnd.oci.image.config.v1+json");
        let why = component_layer(image.as_bytes()).unwrap_err();
        assert!(
            why.contains("its config is application/vnd.oci.image.config.v1+json"),
            "{why}"
        );
        let huge =
            String::from_utf8(manifest((A, 10), (B, MAX_COMPONENT_BYTES + 1)).unwrap()).unwrap();
        assert!(
            component_layer(huge.as_bytes())
                .unwrap_err()
                .contains("declares")
        );
        assert!(
            component_layer(b"{}")
                .unwrap_err()
                .contains("not an OCI image manifest")
        );
    }
}
