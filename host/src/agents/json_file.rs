//! discern's entry in a client's JSON (or JSONC) file, read, written and taken out through a
//! concrete syntax tree: every other server, key, comment and the file's formatting stay as
//! they were.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use super::FileError;
use super::clients::SERVER;

pub(super) fn parse(text: &str) -> Result<CstRootNode, FileError> {
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| FileError::Parse(e.to_string()))
}

/// The top-level object, when the file has one (an empty file has none).
pub(super) fn root_object(root: &CstRootNode) -> Result<Option<CstObject>, FileError> {
    match (root.value(), root.object_value()) {
        (None, _) => Ok(None),
        (Some(_), Some(object)) => Ok(Some(object)),
        (Some(_), None) => Err(FileError::Shape(
            "its top level is not an object".to_owned(),
        )),
    }
}

/// The servers object under `key`, when there is one.
pub(super) fn servers_object(
    object: &CstObject,
    key: &str,
) -> Result<Option<CstObject>, FileError> {
    match (object.get(key), object.object_value(key)) {
        (None, _) => Ok(None),
        (Some(_), Some(servers)) => Ok(Some(servers)),
        (Some(_), None) => Err(FileError::Shape(format!("its `{key}` is not an object"))),
    }
}

/// discern's entry under `key`, if the file has one.
pub(crate) fn entry(text: &str, key: &str) -> Result<Option<Value>, FileError> {
    let root = parse(text)?;
    let Some(object) = root_object(&root)? else {
        return Ok(None);
    };
    let Some(servers) = servers_object(&object, key)? else {
        return Ok(None);
    };
    Ok(servers
        .get(SERVER)
        .and_then(|prop| prop.value())
        .and_then(|value| value.to_serde_value()))
}

/// The file with discern's entry under `key` set to `entry` (added at the end of the servers,
/// or replaced where it stands).
pub(crate) fn upsert(text: &str, key: &str, entry: &Value) -> Result<String, FileError> {
    let root = parse(text)?;
    let object = match root_object(&root)? {
        Some(object) => object,
        None => root.object_value_or_set(),
    };
    let servers = match servers_object(&object, key)? {
        Some(servers) => servers,
        None => object.object_value_or_set(key),
    };
    match servers.get(SERVER) {
        Some(prop) => prop.set_value(input(entry)),
        None => {
            servers.append(SERVER, input(entry));
        }
    }
    Ok(root.to_string())
}

/// The file without discern's entry under `key` (and without the servers object when it held
/// nothing else); `None` when nothing else is left, so the file discern made goes.
pub(crate) fn remove(text: &str, key: &str) -> Result<Option<String>, FileError> {
    let root = parse(text)?;
    let Some(object) = root_object(&root)? else {
        return Ok(Some(text.to_owned()));
    };
    if let Some(servers) = servers_object(&object, key)? {
        if let Some(prop) = servers.get(SERVER) {
            prop.remove();
        }
        if servers.properties().is_empty()
            && let Some(prop) = object.get(key)
        {
            prop.remove();
        }
    }
    let left = root.to_string();
    let bare: String = left.split_whitespace().collect();
    Ok((bare != "{}").then_some(left))
}

/// A JSON value as the syntax tree takes it.
pub(super) fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const WITH_COMMENTS: &str = "{\n  // the team's theme\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }, // kept\n  },\n}\n";

    #[test]
    fn an_entry_added_then_removed_leaves_the_file_byte_for_byte() {
        let entry = json!({ "command": "discern", "args": ["mcp"] });
        let added = upsert(WITH_COMMENTS, "mcpServers", &entry).unwrap();
        assert!(added.contains("// the team's theme") && added.contains("// kept"));
        assert_eq!(super::entry(&added, "mcpServers").unwrap(), Some(entry));
        let removed = remove(&added, "mcpServers").unwrap();
        assert_eq!(removed.as_deref(), Some(WITH_COMMENTS));
    }

    #[test]
    fn a_file_discern_made_is_nothing_once_its_entry_is_out() {
        let added = upsert("", "servers", &json!({ "command": "d" })).unwrap();
        assert_eq!(remove(&added, "servers").unwrap(), None);
    }

    #[test]
    fn an_entry_that_differs_is_replaced_where_it_stands() {
        let text = "{\n  \"mcpServers\": {\n    \"discern\": { \"command\": \"old\" },\n    \"other\": {}\n  }\n}\n";
        let entry = json!({ "command": "new" });
        let replaced = upsert(text, "mcpServers", &entry).unwrap();
        assert!(
            replaced.find("discern") < replaced.find("other"),
            "{replaced}"
        );
        assert_eq!(super::entry(&replaced, "mcpServers").unwrap(), Some(entry));
    }

    #[test]
    fn a_file_of_another_shape_is_refused_untouched() {
        assert!(matches!(
            upsert("[1, 2]", "mcpServers", &json!({})),
            Err(FileError::Shape(_))
        ));
        assert!(matches!(
            upsert("{\"mcpServers\": 3}", "mcpServers", &json!({})),
            Err(FileError::Shape(_))
        ));
        assert!(matches!(
            upsert("{\"a\": ", "mcpServers", &json!({})),
            Err(FileError::Parse(_))
        ));
    }
}
