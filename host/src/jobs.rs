//! `[jobs]`: the project's own host commands (not sandboxed), each run as one labelled step
//! with captured, bounded output, the full output in a log file, and a timeout.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::Job;

/// How much of a job's stdout is kept in memory (what producers can read as `"stdout"`).
pub(crate) const MAX_STDOUT_BYTES: usize = 64 << 20;
/// How many trailing lines of output a step shows.
const TAIL_LINES: usize = 20;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct JobRun {
    pub name: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_s: f64,
    /// The last lines of combined output.
    pub output_tail: String,
    /// Where the full output is.
    pub output_path: PathBuf,
    pub reproduce_cmd: String,
    #[serde(skip)]
    pub stdout: Vec<u8>,
    /// Whether stdout was longer than [`MAX_STDOUT_BYTES`] (the rest is only in the log).
    pub stdout_truncated: bool,
}

impl JobRun {
    /// One sentence on how the job ended.
    pub(crate) fn summary(&self) -> String {
        if self.ok {
            format!("job {} passed in {:.1} s", self.name, self.duration_s)
        } else if self.timed_out {
            format!("job {} timed out after {:.1} s", self.name, self.duration_s)
        } else {
            match self.exit_code {
                Some(code) => format!("job {} failed with exit code {code}", self.name),
                None => format!("job {} was killed by a signal", self.name),
            }
        }
    }
}

/// Run `job` with `sh -c` in `dir` (with the checkout's identity, `crate::identity`), writing
/// its full output to `log_dir/<name>.log`.
pub(crate) fn run(job: &Job, dir: &Path, log_dir: &Path) -> JobRun {
    // Read before the clock starts: a job's time is its command's.
    let identity = crate::identity::Identity::of(dir);
    let started = Instant::now();
    let log_path = log_dir.join(format!("{}.log", job.name.replace(['/', '.'], "_")));
    let reproduce_cmd = job.run.clone();
    let fail = |message: String| JobRun {
        name: job.name.clone(),
        ok: false,
        exit_code: None,
        timed_out: false,
        duration_s: started.elapsed().as_secs_f64(),
        output_tail: message,
        output_path: log_path.clone(),
        reproduce_cmd: reproduce_cmd.clone(),
        stdout: Vec::new(),
        stdout_truncated: false,
    };
    if crate::cancel::requested() {
        return fail(crate::cancel::CANCELLED.to_owned());
    }
    if let Err(e) = std::fs::create_dir_all(log_dir) {
        return fail(format!("cannot create {}: {e}", log_dir.display()));
    }
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(&job.run)
        .current_dir(dir)
        .env_remove(crate::git::EVIDENCE_KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    identity.apply(&mut command);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return fail(format!("cannot start `sh -c {}`: {e}", job.run)),
    };
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_all(stdout));
    let err_reader = std::thread::spawn(move || read_all(stderr));

    let Waited {
        status,
        timed_out,
        cancelled,
    } = wait(&mut child, started, job.timeout);
    // Output that could not be read whole is not output: a Standard's DISCERN_METRIC line or
    // a failure's tail may be what was lost, so the job fails, naming why.
    let (stdout, stderr) = match (joined(out_reader), joined(err_reader)) {
        (Ok(stdout), Ok(stderr)) => (stdout, stderr),
        (Err(e), _) | (_, Err(e)) => {
            return fail(format!(
                "cannot read the output of `sh -c {}`: {e}",
                job.run
            ));
        }
    };

    let mut log = stdout.clone();
    if !stderr.is_empty() {
        log.extend_from_slice(b"\n--- stderr ---\n");
        log.extend_from_slice(&stderr);
    }
    let _ = crate::fsutil::write_atomic(&log_path, &log);
    let combined = String::from_utf8_lossy(&log);
    let lines: Vec<&str> = combined.lines().collect();
    let mut output_tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    if cancelled {
        output_tail = format!("{output_tail}\n{}", crate::cancel::CANCELLED);
    }
    let stdout_truncated = stdout.len() > MAX_STDOUT_BYTES;
    let mut stdout = stdout;
    stdout.truncate(MAX_STDOUT_BYTES);
    JobRun {
        name: job.name.clone(),
        ok: !timed_out && !cancelled && status.is_some_and(|s| s.success()),
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        duration_s: started.elapsed().as_secs_f64(),
        output_tail,
        output_path: log_path,
        reproduce_cmd,
        stdout,
        stdout_truncated,
    }
}

/// How a job's process ended.
struct Waited {
    /// Its exit status; `None` when it could not be read.
    status: Option<std::process::ExitStatus>,
    timed_out: bool,
    cancelled: bool,
}

/// Wait for `child` to exit; past `timeout_s` seconds (0: none), or when the caller gives up,
/// its whole process group is killed.
fn wait(child: &mut std::process::Child, started: Instant, timeout_s: f64) -> Waited {
    let timeout = (timeout_s > 0.0)
        .then(|| Duration::try_from_secs_f64(timeout_s.min(crate::config::MAX_TIMEOUT_S)).ok())
        .flatten();
    let cancel = crate::cancel::current();
    let (mut timed_out, mut cancelled) = (false, false);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if timeout.is_some_and(|t| started.elapsed() > t) {
            timed_out = true;
            kill_group(child);
            break child.wait().ok();
        }
        // A caller that gave up: the job's whole process group goes with it.
        if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            cancelled = true;
            kill_group(child);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Waited {
        status,
        timed_out,
        cancelled,
    }
}

fn read_all(stream: Option<impl Read>) -> std::io::Result<Vec<u8>> {
    let mut buffer = Vec::new();
    if let Some(mut stream) = stream {
        stream.read_to_end(&mut buffer)?;
    }
    Ok(buffer)
}

/// What a reader thread read, or why it has nothing.
fn joined(reader: std::thread::JoinHandle<std::io::Result<Vec<u8>>>) -> Result<Vec<u8>, String> {
    match reader.join() {
        Ok(read) => read.map_err(|e| e.to_string()),
        Err(_) => Err("its reader thread panicked".to_owned()),
    }
}

/// Kill the job's whole process group (the shell and everything it started).
/// Kill the job's whole process group (it was started as its own group leader), then the
/// child itself. Never through the `kill` command: procps-ng reads `kill -KILL -<pgid>`
/// without `--` as "every process", and a group id of 0 or 1 is never signalled.
fn kill_group(child: &mut std::process::Child) {
    let group = i32::try_from(child.id())
        .ok()
        .filter(|id| *id > 1)
        .and_then(rustix::process::Pid::from_raw);
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
}
