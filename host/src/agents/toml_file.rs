//! discern's entry in Codex's TOML config (`[mcp_servers.discern]`), read, written and taken
//! out with `toml_edit`: every other table, key and comment stays as it was.

use serde_json::{Map, Value};
use toml_edit::{Array, DocumentMut, Item, Table};

use super::FileError;
use super::clients::SERVER;

const SERVERS: &str = "mcp_servers";

fn parse(text: &str) -> Result<DocumentMut, FileError> {
    text.parse::<DocumentMut>()
        .map_err(|e| FileError::Parse(e.to_string().trim().to_owned()))
}

fn shape(what: &str) -> FileError {
    FileError::Shape(format!(
        "its `{what}` is not a table (write it as `[{what}]` to let discern edit it)"
    ))
}

/// discern's entry, if the file has one.
pub(crate) fn entry(text: &str) -> Result<Option<Value>, FileError> {
    let doc = parse(text)?;
    let Some(servers) = doc.get(SERVERS) else {
        return Ok(None);
    };
    let servers = servers.as_table_like().ok_or_else(|| shape(SERVERS))?;
    Ok(servers.get(SERVER).map(json_of))
}

/// The file with `[mcp_servers.discern]` set to `entry`: a table added after the other
/// servers, or the existing one's keys set where it stands.
pub(crate) fn upsert(text: &str, entry: &Value) -> Result<String, FileError> {
    let mut doc = parse(text)?;
    let servers = doc.entry(SERVERS).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let servers = servers.as_table_mut().ok_or_else(|| shape(SERVERS))?;
    let fields = entry.as_object().cloned().unwrap_or_default();
    match servers.get_mut(SERVER) {
        Some(Item::Table(table)) => set_fields(table, &fields),
        Some(_) => return Err(shape(&format!("{SERVERS}.{SERVER}"))),
        None => {
            let mut table = Table::new();
            set_fields(&mut table, &fields);
            servers.insert(SERVER, Item::Table(table));
        }
    }
    Ok(doc.to_string())
}

/// The file without `[mcp_servers.discern]` (and without `mcp_servers` when it held nothing
/// else and was only implied); `None` when nothing is left, so the file discern made goes.
pub(crate) fn remove(text: &str) -> Result<Option<String>, FileError> {
    let mut doc = parse(text)?;
    if let Some(item) = doc.get_mut(SERVERS) {
        let servers = item.as_table_like_mut().ok_or_else(|| shape(SERVERS))?;
        servers.remove(SERVER);
        let implicit = item.as_table().is_some_and(Table::is_implicit);
        if implicit && item.as_table().is_some_and(Table::is_empty) {
            doc.remove(SERVERS);
        }
    }
    let left = doc.to_string();
    Ok((!left.trim().is_empty()).then_some(left))
}

/// `table` holding exactly `fields`, in their order; keys already there keep their place.
fn set_fields(table: &mut Table, fields: &Map<String, Value>) {
    let stale: Vec<String> = table
        .iter()
        .map(|(k, _)| k.to_owned())
        .filter(|k| !fields.contains_key(k))
        .collect();
    for key in stale {
        table.remove(&key);
    }
    for (key, value) in fields {
        if table.get(key).map(json_of).as_ref() != Some(value) {
            table.insert(key, Item::Value(toml_of(value)));
        }
    }
}

fn toml_of(value: &Value) -> toml_edit::Value {
    match value {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::Array(items) => {
            let mut array = Array::new();
            for item in items {
                array.push(toml_of(item));
            }
            array.into()
        }
        Value::Object(map) => {
            let mut inline = toml_edit::InlineTable::new();
            for (k, v) in map {
                inline.insert(k, toml_of(v));
            }
            inline.into()
        }
        Value::String(s) => s.as_str().into(),
        Value::Null => "".into(),
    }
}

fn json_of(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(value) => json_of_value(value),
        Item::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), json_of(v)))
                .collect(),
        ),
        Item::ArrayOfTables(tables) => Value::Array(
            tables
                .iter()
                .map(|t| json_of(&Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn json_of_value(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as V;
    match value {
        V::String(s) => Value::String(s.value().clone()),
        V::Integer(i) => Value::from(*i.value()),
        V::Float(f) => Value::from(*f.value()),
        V::Boolean(b) => Value::Bool(*b.value()),
        V::Datetime(d) => Value::String(d.value().to_string()),
        V::Array(items) => Value::Array(items.iter().map(json_of_value).collect()),
        V::InlineTable(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), json_of_value(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COMMENTED: &str = "# the team's Codex config\nmodel = \"o3\" # kept\n\n[mcp_servers.other]\ncommand = \"x\"\n\n# profiles\n[profiles.fast]\nmodel = \"mini\"\n";

    #[test]
    fn an_entry_added_then_removed_leaves_the_file_byte_for_byte() {
        let entry = json!({ "command": "discern", "args": ["mcp"], "tool_timeout_sec": 1800 });
        let added = upsert(COMMENTED, &entry).unwrap();
        assert!(added.contains("# kept") && added.contains("[mcp_servers.discern]"));
        assert_eq!(super::entry(&added).unwrap(), Some(entry.clone()));
        assert_eq!(upsert(&added, &entry).unwrap(), added, "idempotent");
        assert_eq!(remove(&added).unwrap().as_deref(), Some(COMMENTED));
    }

    #[test]
    fn a_file_discern_made_is_nothing_once_its_entry_is_out() {
        let added = upsert("", &json!({ "command": "d" })).unwrap();
        assert_eq!(remove(&added).unwrap(), None);
    }

    #[test]
    fn a_changed_field_is_set_in_place() {
        let text = "[mcp_servers.discern]\ncommand = \"old\" # mine\nextra = 1\n";
        let updated = upsert(text, &json!({ "command": "new" })).unwrap();
        assert_eq!(
            super::entry(&updated).unwrap(),
            Some(json!({ "command": "new" }))
        );
    }
}
