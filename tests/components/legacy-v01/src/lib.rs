//! A producer built against `discern:producer@0.1.0`, the first released contract: the host
//! keeps running it through its adapter, beside 0.2 producers in the same batch. It counts
//! the files matching `config.paths` that contain `LEGACY`, one finding per file (0.1
//! findings carry no line or column).

#[cfg(target_arch = "wasm32")]
mod bindings {
    wit_bindgen::generate!({ path: "../../../wit/v0.1", world: "producer" });

    use discern::producer::snapshot;
    use exports::discern::producer::measure::{Finding, Guest, Info, Metric};

    struct Legacy;

    impl Guest for Legacy {
        fn describe() -> Info {
            Info {
                name: "legacy".into(),
                version: "0.1.0".into(),
                metrics: vec!["legacy_files".into()],
                config_schema: None,
            }
        }

        fn run(config: String) -> Result<Vec<Metric>, String> {
            let globs = paths(&config)?;
            let mut findings = Vec::new();
            for entry in snapshot::files(&globs) {
                let bytes = snapshot::read(&entry.path)?;
                if bytes.windows(6).any(|w| w == b"LEGACY") {
                    findings.push(Finding {
                        fingerprint: format!("legacy:{}", entry.path),
                        path: Some(entry.path.clone()),
                        message: format!("{} mentions LEGACY", entry.path),
                    });
                }
            }
            Ok(vec![Metric {
                name: "legacy_files".into(),
                value: findings.len() as f64,
                findings,
            }])
        }
    }

    /// `config.paths` as a list of strings, parsed by hand (the component has no JSON crate).
    fn paths(config: &str) -> Result<Vec<String>, String> {
        let start = config
            .find("\"paths\"")
            .and_then(|i| config[i..].find('[').map(|j| i + j + 1))
            .ok_or("config.paths (a list of globs) is required")?;
        let end = config[start..]
            .find(']')
            .ok_or("config.paths is not a list")?
            + start;
        Ok(config[start..end]
            .split(',')
            .map(|s| s.trim().trim_matches('"').to_owned())
            .filter(|s| !s.is_empty())
            .collect())
    }

    export!(Legacy);
}
