//! Whether a client's entry starts a server that answers MCP `initialize`: the entry's command
//! started as the client would (its args, `${workspaceFolder}` given, in the repository), one
//! `initialize` request written, the first line read back within a timeout, the process ended.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// How long a server gets to answer `initialize`.
const TIMEOUT: Duration = Duration::from_secs(10);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"discern-doctor","version":"1"}}}"#;

/// The server's name and version from its `initialize` answer, or why there was none.
pub(crate) fn initialize(entry: &Value, root: &Path) -> Result<String, String> {
    let command = entry["command"]
        .as_str()
        .ok_or("the entry names no command")?;
    let program = super::launch::resolve(command).ok_or_else(|| {
        super::launch::does_not_run(command).unwrap_or_else(|| format!("`{command}` is not found"))
    })?;
    let folder = root.display().to_string();
    let args: Vec<String> = entry["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| s.replace("${workspaceFolder}", &folder))
                .collect()
        })
        .unwrap_or_default();
    let mut child = Command::new(program)
        .args(&args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("`{command}` does not start: {e}"))?;
    let answer = exchange(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    let line = answer?;
    let reply: Value = serde_json::from_str(&line)
        .map_err(|e| format!("its answer to initialize is not JSON ({e})"))?;
    let info = &reply["result"]["serverInfo"];
    match info["name"].as_str() {
        Some(name) => Ok(format!(
            "{name} {}",
            info["version"].as_str().unwrap_or("?")
        )),
        None => Err(format!("it answered initialize without a result: {reply}")),
    }
}

/// Write `initialize`, read the first line back within [`TIMEOUT`].
fn exchange(child: &mut std::process::Child) -> Result<String, String> {
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    writeln!(stdin, "{INITIALIZE}").map_err(|e| format!("it does not read stdin: {e}"))?;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line).map(|_| line);
        let _ = send.send(read);
    });
    match receive.recv_timeout(TIMEOUT) {
        Ok(Ok(line)) if !line.trim().is_empty() => Ok(line),
        Ok(Ok(_)) => Err("it exited without answering initialize".to_owned()),
        Ok(Err(e)) => Err(format!("its output cannot be read: {e}")),
        Err(_) => Err(format!(
            "it did not answer initialize within {} s",
            TIMEOUT.as_secs()
        )),
    }
}
