//! The session-start hook: a `SessionStart` element in Claude Code's `.claude/settings.json`,
//! Gemini CLI's `.gemini/settings.json` and Codex's `.codex/hooks.json` (one shape for the three)
//! runs `discern status --brief --output-format session-start`, whose JSON hands the client the
//! brief as the session's added context. It never fails the session: `status --brief` exits 0,
//! and `|| true` covers a binary gone. Edited like the MCP entries: only discern's element of
//! `hooks.SessionStart` is touched.

use jsonc_parser::cst::{CstArray, CstObject};
use serde_json::{Value, json};

use super::FileError;
use super::json_file::{input, parse, root_object, servers_object};

const HOOKS: &str = "hooks";
const EVENT: &str = "SessionStart";
/// What marks a hook as discern's, whatever the path of the binary it names.
const MARK: &str = " status --brief";
const FORMAT: &str = " --output-format session-start";

/// The hook's command for an entry that starts `command`.
pub(crate) fn command(program: &str) -> String {
    let quoted = match program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        true => program.to_owned(),
        false => format!("'{}'", program.replace('\'', "'\\''")),
    };
    format!("{quoted}{MARK}{FORMAT} || true")
}

fn element(command: &str) -> Value {
    json!({ "hooks": [{ "type": "command", "command": command }] })
}

fn ours(value: &Value) -> bool {
    value[HOOKS].as_array().is_some_and(|hooks| {
        hooks.iter().any(|h| {
            h["command"]
                .as_str()
                .is_some_and(|c| c.contains("discern") && c.contains(MARK))
        })
    })
}

/// The `SessionStart` array, when the file has one.
fn events(object: &CstObject) -> Result<Option<CstArray>, FileError> {
    let Some(hooks) = servers_object(object, HOOKS)? else {
        return Ok(None);
    };
    match (hooks.get(EVENT), hooks.array_value(EVENT)) {
        (None, _) => Ok(None),
        (Some(_), Some(array)) => Ok(Some(array)),
        (Some(_), None) => Err(FileError::Shape(format!(
            "its `{HOOKS}.{EVENT}` is not an array"
        ))),
    }
}

/// The command of discern's hook, if the file has one.
pub(crate) fn entry(text: &str) -> Result<Option<String>, FileError> {
    let root = parse(text)?;
    let Some(object) = root_object(&root)? else {
        return Ok(None);
    };
    let Some(array) = events(&object)? else {
        return Ok(None);
    };
    Ok(array
        .elements()
        .iter()
        .filter_map(|e| e.to_serde_value())
        .find(ours)
        .and_then(|v| v[HOOKS][0]["command"].as_str().map(str::to_owned)))
}

/// The file with discern's hook running `command`: replaced where it stands, or appended.
pub(crate) fn upsert(text: &str, command: &str) -> Result<String, FileError> {
    let root = parse(text)?;
    let object = match root_object(&root)? {
        Some(object) => object,
        None => root.object_value_or_set(),
    };
    let array = match events(&object)? {
        Some(array) => array,
        None => {
            let hooks = match servers_object(&object, HOOKS)? {
                Some(hooks) => hooks,
                None => object.object_value_or_set(HOOKS),
            };
            hooks.array_value_or_set(EVENT)
        }
    };
    let existing = array
        .elements()
        .into_iter()
        .find(|e| e.to_serde_value().is_some_and(|v| ours(&v)));
    let place = existing
        .and_then(|e| e.as_object())
        .and_then(|o| o.array_value(HOOKS))
        .and_then(|hooks| {
            hooks.elements().into_iter().find_map(|h| {
                let command = h.as_object()?.get("command")?;
                let value = command.value()?.to_serde_value()?;
                value.as_str()?.contains(MARK).then_some(command)
            })
        });
    match place {
        // Set where it stands, so the file's formatting stays as it was.
        Some(old) => old.set_value(input(&json!(command))),
        None => {
            array.append(input(&element(command)));
        }
    }
    Ok(root.to_string())
}

/// The file without discern's hook (and without the containers that held nothing else);
/// `None` when nothing else is left.
pub(crate) fn remove(text: &str) -> Result<Option<String>, FileError> {
    let root = parse(text)?;
    let Some(object) = root_object(&root)? else {
        return Ok(Some(text.to_owned()));
    };
    if let Some(array) = events(&object)? {
        for element in array.elements() {
            if element.to_serde_value().is_some_and(|v| ours(&v)) {
                element.remove();
            }
        }
    }
    if let Some(hooks) = servers_object(&object, HOOKS)? {
        if hooks
            .array_value(EVENT)
            .is_some_and(|a| a.elements().is_empty())
            && let Some(prop) = hooks.get(EVENT)
        {
            prop.remove();
        }
        if hooks.properties().is_empty()
            && let Some(prop) = object.get(HOOKS)
        {
            prop.remove();
        }
    }
    let left = root.to_string();
    let bare: String = left.split_whitespace().collect();
    Ok((bare != "{}").then_some(left))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEAM: &str = "{\n  \"permissions\": { \"allow\": [\"Bash(cargo test)\"] },\n  \"hooks\": {\n    \"SessionStart\": [\n      { \"hooks\": [{ \"type\": \"command\", \"command\": \"echo hi\" }] }\n    ]\n  }\n}\n";

    #[test]
    fn the_hook_goes_in_beside_the_teams_and_out_byte_for_byte() {
        let cmd = command("/opt/my tools/discern");
        assert_eq!(
            cmd,
            "'/opt/my tools/discern' status --brief --output-format session-start || true"
        );
        let added = upsert(TEAM, &cmd).unwrap();
        assert!(added.contains("echo hi"), "{added}");
        assert_eq!(entry(&added).unwrap().as_deref(), Some(cmd.as_str()));
        assert_eq!(upsert(&added, &cmd).unwrap(), added, "idempotent");
        let moved = upsert(&added, &command("discern")).unwrap();
        assert_eq!(entry(&moved).unwrap(), Some(command("discern")));
        assert_eq!(remove(&added).unwrap().as_deref(), Some(TEAM));
        let alone = upsert("", &cmd).unwrap();
        assert_eq!(remove(&alone).unwrap(), None);
    }
}
