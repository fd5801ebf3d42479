//! The line gate between stdio and the MCP service: every line a client sends gets exactly one
//! answer (none for a notification), and the session goes on. The judging is the library's
//! ([`discern::mcp_wire`]: which line is forwarded, answered by the gate, or skipped, how a
//! batch is split, which response belongs to which request); this module does the I/O.
//!
//! Three duties beyond judging: a batch's responses go back as one JSON array line (its
//! requests are forwarded one by one); what the service sends back is held to the echo bound
//! and to [`mcp_wire::MAX_RESPONSE`]; and when the client's input ends, the service's input stays open
//! until every forwarded request has had its response, so that a client that sends a request
//! and closes its end still gets the answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use discern::mcp_wire::{self, ledger::Dispatch, ledger::Ledger};
use rmcp::model::ClientJsonRpcMessage;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How often a gate whose input ended looks whether the service still owes an answer.
const SETTLE_POLL: Duration = Duration::from_millis(10);

/// Whether the client's input ended (what tells a client that left from a broken server).
#[derive(Clone, Default)]
pub struct Ended(Arc<AtomicBool>);

impl Ended {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The session state the two directions share.
#[derive(Clone, Default)]
pub struct Gate {
    ledger: Arc<Mutex<Ledger>>,
    pub input_ended: Ended,
    service_ended: Arc<AtomicBool>,
}

/// Whether the MCP service can decode `text` (its own message type), and if not, why.
fn service_reads(text: &str) -> Result<(), String> {
    serde_json::from_str::<ClientJsonRpcMessage>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl Gate {
    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn judge(&self, line: &[u8]) -> Dispatch {
        let mut ledger = self.ledger();
        let verdict = mcp_wire::judge(line, ledger.session(), &service_reads);
        ledger.dispatch(verdict)
    }

    /// Wait until the service owes no response, or is gone.
    async fn settled(&self) {
        while !self.ledger().is_settled() && !self.service_ended.load(Ordering::SeqCst) {
            tokio::time::sleep(SETTLE_POLL).await;
        }
    }
}

/// `bytes` without its line ending.
fn without_newline(bytes: &[u8]) -> &[u8] {
    let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Read the client's lines from `input`: forward what the service should see to `service`,
/// send the gate's own answers through `answers`. When the input ends, marks it and closes
/// the service's input once no response is owed.
pub async fn read(
    input: impl AsyncRead + Unpin,
    mut service: impl AsyncWrite + Unpin,
    answers: mpsc::UnboundedSender<String>,
    gate: Gate,
) {
    let mut input = BufReader::new(input);
    let mut bytes = Vec::new();
    'lines: loop {
        bytes.clear();
        match read_line_capped(&mut input, &mut bytes, mcp_wire::MAX_REQUEST).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let dispatch = gate.judge(without_newline(&bytes));
        for answer in dispatch.answers {
            let _ = answers.send(answer);
        }
        for message in dispatch.forward {
            let forwarded = async {
                service.write_all(message.as_bytes()).await?;
                service.write_all(b"\n").await?;
                service.flush().await
            };
            if forwarded.await.is_err() {
                break 'lines;
            }
        }
    }
    gate.input_ended.0.store(true, Ordering::SeqCst);
    gate.settled().await;
    let _ = service.shutdown().await;
}

/// One line of `input` into `bytes`, at most `cap` + 1 bytes of it kept: the rest is read and
/// dropped, so a line over the cap holds no more memory than that (and its first bytes still
/// show its id). How many bytes were read; 0 at the end of the input.
async fn read_line_capped(
    input: &mut (impl AsyncBufRead + Unpin),
    bytes: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(read);
        }
        let (taken, ends) = match buffer.iter().position(|&b| b == b'\n') {
            Some(newline) => (newline + 1, true),
            None => (buffer.len(), false),
        };
        let room = (cap + 1).saturating_sub(bytes.len());
        bytes.extend_from_slice(&buffer[..taken.min(room)]);
        input.consume(taken);
        read += taken;
        if ends {
            return Ok(read);
        }
    }
}

/// Copy the service's lines to `output` through the ledger (bounded, batches assembled),
/// interleaved whole with the gate's answers.
pub async fn write(
    from_service: impl AsyncRead + Unpin,
    mut answers: mpsc::UnboundedReceiver<String>,
    mut output: impl AsyncWrite + Unpin,
    gate: Gate,
) {
    let mut lines = BufReader::new(from_service).lines();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => gate.ledger().from_service(line),
                _ => break,
            },
            Some(answer) = answers.recv() => Some(answer),
        };
        let Some(line) = line else { continue };
        let written = async {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await
        };
        if written.await.is_err() {
            break;
        }
    }
    gate.service_ended.store(true, Ordering::SeqCst);
    while let Ok(answer) = answers.try_recv() {
        let _ = output.write_all(format!("{answer}\n").as_bytes()).await;
    }
    let _ = output.flush().await;
}
