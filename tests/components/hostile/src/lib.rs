//! A deliberately hostile producer for the sandbox tests. `config.mode` picks the attack.
//! Every attack must end in a clean, named error (or, for the probes, in readings showing
//! that the sandbox gave nothing away); the host must survive all of them.
#![allow(clippy::unwrap_used)]

use discern_sdk::{Config, Error, Finding, Info, Metric, Producer, Snapshot};

pub struct Hostile;

impl Producer for Hostile {
    fn describe() -> Info {
        Info::new("hostile", "0.0.0", &["ok"])
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        match config.str("mode")? {
            "ok" => Ok(vec![Metric::new("ok", 1.0)]),
            // Lists the snapshot exactly once (a call the host can count), then emits the
            // metrics `config.emit` names with their values.
            "emit" => {
                let files = snapshot.files(&["**".to_owned()]);
                let mut metrics = vec![Metric::new("listed_files", files.len() as f64)];
                if let Some(serde_json::Value::Object(emit)) = config.get("emit") {
                    for (name, value) in emit {
                        metrics.push(Metric::new(name, value.as_f64().unwrap_or(f64::NAN)));
                    }
                }
                Ok(metrics)
            }
            "escape" => escape(),
            "probe" => Ok(probe()),
            "loop" => {
                let mut x: u64 = 0;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            "alloc" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "recurse" => Ok(vec![Metric::new("depth", recurse(0) as f64)]),
            "recurse-shadow" => Ok(vec![Metric::new("depth", recurse_shadow(0) as f64)]),
            "nan" => Ok(vec![Metric::new("ok", f64::NAN)]),
            "million" => Ok((0..1_000_000)
                .map(|i| Metric::new(&format!("m{i}"), 1.0))
                .collect()),
            "findings" => Ok(vec![
                Metric::new("ok", 1.0).with_findings(
                    (0..100_001)
                        .map(|i| Finding::new("r", "p", &i.to_string(), 0, String::new()))
                        .collect(),
                ),
            ]),
            "long-name" => Ok(vec![Metric::new(&"x".repeat(129), 1.0)]),
            "panic" => panic!("hostile producer panicked on purpose"),
            "stderr" => loop {
                eprintln!(
                    "flooding stderr with a line that never ends ..........................."
                );
            },
            "sleep" => {
                std::thread::sleep(std::time::Duration::from_secs(3600));
                Ok(vec![])
            }
            "exit" => std::process::exit(3),
            "read-all" => {
                let files = snapshot.files(&config.globs("paths")?);
                let mut bytes = 0;
                for file in &files {
                    bytes += snapshot.read(&file.path)?.len();
                }
                Ok(vec![
                    Metric::new("files", files.len() as f64),
                    Metric::new("bytes", bytes as f64),
                ])
            }
            other => Err(Error::new(format!("unknown mode {other}"))),
        }
    }
}

/// Try every way out of the sandbox; report the first that worked as an error naming it, or
/// the denials.
fn escape() -> Result<Vec<Metric>, Error> {
    let mut denials = Vec::new();
    match std::fs::read("/etc/passwd") {
        Ok(_) => return Err(Error::new("ESCAPED: read /etc/passwd")),
        Err(e) => denials.push(format!("/etc/passwd: {e}")),
    }
    match std::fs::read_dir("..") {
        Ok(_) => return Err(Error::new("ESCAPED: listed ..")),
        Err(e) => denials.push(format!("..: {e}")),
    }
    match std::fs::read_dir(".") {
        Ok(_) => return Err(Error::new("ESCAPED: listed .")),
        Err(e) => denials.push(format!(".: {e}")),
    }
    match std::net::TcpStream::connect("127.0.0.1:22") {
        Ok(_) => return Err(Error::new("ESCAPED: opened a socket")),
        Err(e) => denials.push(format!("socket: {e}")),
    }
    Err(Error::new(format!(
        "sandbox denied every escape: {}",
        denials.join("; ")
    )))
}

/// What the environment looks like from inside: all of it must be empty or fixed.
fn probe() -> Vec<Metric> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(-1.0);
    let start = std::time::Instant::now();
    let mut spin = 0u64;
    for i in 0..1000 {
        spin = std::hint::black_box(spin.wrapping_add(i));
    }
    let elapsed = start.elapsed().as_nanos() as f64;
    let mut random = [0u8; 8];
    getrandom(&mut random);
    let mut stdin = String::new();
    let stdin_bytes = std::io::Read::read_to_string(&mut std::io::stdin(), &mut stdin).unwrap_or(0);
    vec![
        Metric::new("env_vars", std::env::vars_os().count() as f64),
        Metric::new("args", std::env::args_os().count() as f64),
        Metric::new("wall_clock_secs", now),
        Metric::new("monotonic_elapsed_nanos", elapsed),
        Metric::new("random", u64::from_le_bytes(random) as f64),
        Metric::new("stdin_bytes", stdin_bytes as f64),
        Metric::new(
            "root_listable",
            f64::from(u8::from(std::fs::read_dir("/").is_ok())),
        ),
    ]
}

fn getrandom(buf: &mut [u8]) {
    // std's HashMap seeds come from wasi:random; read them through a RandomState.
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    buf.copy_from_slice(&hasher.finish().to_le_bytes());
}

/// Recursion that lives on the wasm stack (no address-taken locals): the engine's stack limit.
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    std::hint::black_box(recurse(std::hint::black_box(depth + 1))) + 1
}

/// Recursion with a big local whose address is taken, so it lives on the Rust shadow stack in
/// linear memory: it runs off the bottom of memory instead of the wasm stack.
#[allow(unconditional_recursion)]
fn recurse_shadow(depth: u64) -> u64 {
    let pad = std::hint::black_box([depth; 256]);
    recurse_shadow(depth + 1) + pad[0]
}

discern_sdk::export_producer!(Hostile);
