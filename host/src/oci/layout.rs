//! The CNCF "Wasm OCI artifact" layout (what `wkg`, wasmCloud and Spin push): an OCI image
//! manifest whose config is `application/vnd.wasm.config.v0+json` and whose one layer is the
//! component, `application/wasm`.

use serde::{Deserialize, Serialize};

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

/// An OCI image manifest: the fields this layout reads and writes, in the order the OCI image
/// spec lists them (a published manifest's bytes, and with them its digest, depend on it).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    artifact_type: Option<String>,
    config: Descriptor,
    layers: Vec<Descriptor>,
}

/// A content descriptor: what a blob is, its digest (`algorithm:hex`) and its size.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    media_type: String,
    digest: String,
    size: u64,
}

/// The one `application/wasm` layer of `manifest`, checked against the layout.
pub(crate) fn component_layer(manifest: &[u8]) -> Result<Layer, String> {
    let manifest: Manifest = serde_json::from_slice(manifest)
        .map_err(|e| format!("the manifest is not an OCI image manifest: {e}"))?;
    if manifest.schema_version != 2 {
        return Err(format!(
            "the manifest's schema version is {}, not 2",
            manifest.schema_version
        ));
    }
    if let Some(kind) = &manifest.media_type
        && kind != OCI_MANIFEST
    {
        return Err(format!(
            "the manifest's media type is {kind}, not {OCI_MANIFEST}"
        ));
    }
    let config = &manifest.config.media_type;
    if config != WASM_CONFIG {
        return Err(format!("its config is {config}, not {WASM_CONFIG}"));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(format!("it has {} layers, not one", manifest.layers.len()));
    };
    if layer.media_type != WASM_LAYER {
        return Err(format!(
            "its layer is {}, not {WASM_LAYER}",
            layer.media_type
        ));
    }
    let Some(hex) = layer
        .digest
        .strip_prefix("sha256:")
        .filter(|hex| is_sha256(hex))
    else {
        return Err(format!("its layer's digest {} is not sha256", layer.digest));
    };
    if layer.size > MAX_COMPONENT_BYTES {
        return Err(format!(
            "its layer declares {} bytes, more than the {MAX_COMPONENT_BYTES} discern reads",
            layer.size
        ));
    }
    Ok(Layer {
        digest: hex.to_owned(),
        size: layer.size,
    })
}

/// Whether `hex` is a sha256 digest as OCI spells it: 64 lowercase hex digits.
fn is_sha256(hex: &str) -> bool {
    hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
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
        if !is_sha256(hex) {
            return Err(format!("{hex} is not a sha256 digest"));
        }
        Ok(Descriptor {
            media_type: kind.to_owned(),
            digest: format!("sha256:{hex}"),
            size,
        })
    };
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(OCI_MANIFEST.to_owned()),
        artifact_type: Some(WASM_CONFIG.to_owned()),
        config: descriptor(WASM_CONFIG, config)?,
        layers: vec![descriptor(WASM_LAYER, component)?],
    };
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
