//! `tools/list`, built from the verb table: names and order, descriptions, input schemas (the
//! request types' own, plus `path`), one output schema (the envelope), truthful annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use discern::verbs::{self, Entry};

/// The key every tool takes besides its request: the checkout to act on.
pub const PATH: &str = "path";

/// The envelope every tool returns as `structuredContent`. Clients pay for it once per tool in
/// every session, so it states only what every result promises: an object with `ok` and
/// `verb`, `data` an object and `error` a slug when present.
fn output_schema() -> Arc<JsonObject> {
    let schema = json!({
        "type": "object",
        "required": ["ok", "verb"],
        "properties": {
            "ok": { "type": "boolean" },
            "verb": { "type": "string" },
            "data": { "type": "object" },
            "error": { "type": "string" }
        }
    });
    Arc::new(as_object(schema))
}

fn as_object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The input schema of `entry`'s tool: its request's schema, plus `path`.
pub fn input_schema(entry: &dyn Entry) -> Arc<JsonObject> {
    let mut schema = entry.input_schema();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            PATH.to_owned(),
            json!({ "type": "string", "description": "Absolute path of the checkout to act on (default: the server's working root)." }),
        );
    }
    Arc::new(schema)
}

fn tool(entry: &dyn Entry, name: &'static str) -> Tool {
    let info = entry.info();
    let a = info.annotations;
    Tool::new(name, info.tool_description, input_schema(entry))
        .with_raw_output_schema(output_schema())
        .with_annotations(
            ToolAnnotations::new()
                .read_only(a.read_only)
                .destructive(a.destructive)
                .idempotent(a.idempotent)
                .open_world(false),
        )
}

/// Every tool, in the table's order.
pub fn all() -> Vec<Tool> {
    verbs::TABLE
        .iter()
        .filter_map(|entry| Some(tool(*entry, entry.info().tool?)))
        .collect()
}
