//! A test's `discern.toml`, written by a builder instead of pasted: the common Standards are
//! named constructors ([`Standard::todo`]), the common configs too ([`Config::landing`],
//! [`Config::signed`]). A test about the literal text (a parse error, odd spacing that an edit
//! must keep, an attacker's input) keeps its text.

use std::fmt;

use super::APPROVAL_REPOSITORY;

/// Where a signed-approval trunk lists its signers (`[acceptance].allowed_signers`).
pub const SIGNERS: &str = ".discern/allowed_signers";

/// A TOML basic string holding `text`.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A TOML array of strings.
pub fn strings(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|i| quoted(i)).collect();
    format!("[{}]", items.join(", "))
}

/// Keys of one table in the order they were first set; a key set again keeps its place.
#[derive(Clone, Debug, Default)]
struct Table {
    name: String,
    keys: Vec<(String, String)>,
}

impl Table {
    fn set(&mut self, key: &str, value: String) {
        match self.keys.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.keys.push((key.to_owned(), value)),
        }
    }

    fn remove(&mut self, key: &str) {
        self.keys.retain(|(k, _)| k != key);
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "[{}]", self.name)?;
        for (key, value) in &self.keys {
            writeln!(f, "{key} = {value}")?;
        }
        Ok(())
    }
}

/// One `[standards.<name>]` table.
#[derive(Clone, Debug)]
pub struct Standard(Table);

impl Standard {
    /// A ceiling (`direction = "down"`) measured by `producer`; give it a limit.
    pub fn new(name: &str, producer: &str) -> Self {
        let mut table = Table {
            name: format!("standards.{name}"),
            keys: Vec::new(),
        };
        table.set("direction", quoted("down"));
        table.set("limit", "0".to_owned());
        table.set("producer", quoted(producer));
        Self(table)
    }

    /// `builtin:pattern` counting `pattern`'s matches in `paths`.
    pub fn pattern(name: &str, pattern: &str, paths: &[&str]) -> Self {
        Self::new(name, "builtin:pattern")
            .config(&format!(
                "{{ pattern = {}, paths = {} }}",
                quoted(pattern),
                strings(paths)
            ))
            .metric("matches")
    }

    /// The fixture's Standard: TODO markers in `src/**` (two in the fixture), at most `limit`.
    pub fn todo(limit: impl fmt::Display) -> Self {
        Self::pattern("todo", "TODO", &["src/**"]).limit(limit)
    }

    /// `builtin:extent`'s `metric` (`lines`, `files`, `max_lines`…) over `paths`.
    pub fn extent(name: &str, metric: &str, paths: &[&str]) -> Self {
        Self::new(name, "builtin:extent")
            .config(&format!("{{ paths = {} }}", strings(paths)))
            .metric(metric)
    }

    /// `builtin:file-size`'s `metric` (`max_bytes`, `bytes`…) over `paths`.
    pub fn file_size(name: &str, metric: &str, paths: &[&str]) -> Self {
        Self::new(name, "builtin:file-size")
            .config(&format!("{{ paths = {} }}", strings(paths)))
            .metric(metric)
    }

    /// A compatibility Standard: a command printing `DISCERN_METRIC` lines, no producer.
    pub fn command(name: &str, run: &str) -> Self {
        let mut standard = Self::new(name, "");
        standard.0.remove("producer");
        standard.set("run", quoted(run))
    }

    pub fn limit(self, limit: impl fmt::Display) -> Self {
        self.set("limit", limit.to_string())
    }

    /// A floor (`direction = "up"`).
    pub fn up(self) -> Self {
        self.set("direction", quoted("up"))
    }

    pub fn metric(self, metric: &str) -> Self {
        self.set("metric", quoted(metric))
    }

    pub fn margin(self, margin: impl fmt::Display) -> Self {
        self.set("margin", margin.to_string())
    }

    /// The producer's `config`, an inline TOML table as written.
    pub fn config(self, inline: &str) -> Self {
        self.set("config", inline.to_owned())
    }

    /// Any other key, its value as TOML (`quoted("…")` for a string).
    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.0.set(key, value.into());
        self
    }

    /// Leave `key` out (a Standard with no metric, say).
    pub fn without(mut self, key: &str) -> Self {
        self.0.remove(key);
        self
    }
}

/// A whole `discern.toml`: tables in the order first touched, then any verbatim text.
#[derive(Clone, Debug, Default)]
pub struct Config {
    tables: Vec<Table>,
    verbatim: String,
}

impl Config {
    pub fn new() -> Self {
        Self::default()
    }

    /// The landing tests' config: no pin on `done` (the proven commit is the one committed), a
    /// `test` job, and [`Standard::todo`] at 5 (three of slack over the fixture's two).
    pub fn landing() -> Self {
        Self::new()
            .repository("pin_on_done", "false")
            .job("test", "true")
            .standard(Standard::todo(5))
    }

    /// Signed approvals required: the owner's keys in [`SIGNERS`], bound to
    /// [`APPROVAL_REPOSITORY`].
    pub fn signed(self) -> Self {
        self.acceptance("allowed_signers", quoted(SIGNERS))
            .acceptance("repository", quoted(APPROVAL_REPOSITORY))
    }

    /// `key = value` in `[table]` (value as TOML).
    pub fn set(mut self, table: &str, key: &str, value: impl Into<String>) -> Self {
        let value = value.into();
        match self.tables.iter_mut().find(|t| t.name == table) {
            Some(found) => found.set(key, value),
            None => {
                let mut new = Table {
                    name: table.to_owned(),
                    keys: Vec::new(),
                };
                new.set(key, value);
                self.tables.push(new);
            }
        }
        self
    }

    pub fn repository(self, key: &str, value: impl Into<String>) -> Self {
        self.set("repository", key, value)
    }

    pub fn acceptance(self, key: &str, value: impl Into<String>) -> Self {
        self.set("acceptance", key, value)
    }

    /// Each `key = value` line of `text` (values as TOML) set in `[table]`.
    pub fn lines(mut self, table: &str, text: &str) -> Self {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line.split_once('=').expect("a line is key = value");
            self = self.set(table, key.trim(), value.trim());
        }
        self
    }

    /// `[jobs] name = "command"`.
    pub fn job(self, name: &str, command: &str) -> Self {
        self.set("jobs", name, quoted(command))
    }

    /// Drop `key` from `[table]`, and the table when nothing is left in it.
    pub fn unset(mut self, table: &str, key: &str) -> Self {
        for found in self.tables.iter_mut().filter(|t| t.name == table) {
            found.remove(key);
        }
        self.tables.retain(|t| !t.keys.is_empty());
        self
    }

    /// `[jobs.<name>]` with its `stage` and `run`.
    pub fn staged_job(self, name: &str, stage: &str, run: &str) -> Self {
        let table = format!("jobs.{name}");
        self.set(&table, "stage", quoted(stage))
            .set(&table, "run", quoted(run))
    }

    /// Add `standard`, or replace the one of its name in place.
    pub fn standard(mut self, standard: Standard) -> Self {
        match self.tables.iter_mut().find(|t| t.name == standard.0.name) {
            Some(found) => *found = standard.0,
            None => self.tables.push(standard.0),
        }
        self
    }

    /// TOML the builder does not model, appended as written after the tables.
    pub fn verbatim(mut self, text: &str) -> Self {
        self.verbatim.push_str(text);
        self
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for table in &self.tables {
            writeln!(f, "{table}")?;
        }
        f.write_str(&self.verbatim)
    }
}

#[test]
fn the_builder_writes_the_tables_it_was_given_and_discern_reads_them() {
    let written = Config::landing().signed().to_string();
    let expected = "[repository]\npin_on_done = false\n\n[jobs]\ntest = \"true\"\n\n\
        [standards.todo]\ndirection = \"down\"\nlimit = 5\nproducer = \"builtin:pattern\"\n\
        config = { pattern = \"TODO\", paths = [\"src/**\"] }\nmetric = \"matches\"\n\n\
        [acceptance]\nallowed_signers = \".discern/allowed_signers\"\n\
        repository = \"example.com/acme/app\"\n\n";
    assert_eq!(written, expected);
    discern::testing::config::Config::parse(&written).unwrap();
    let pattern = Standard::pattern("p", r#"\.unwrap\(\) "x""#, &["a/**"]);
    let written = Config::new().standard(pattern).to_string();
    assert!(
        written.contains(r#"pattern = "\\.unwrap\\(\\) \"x\"""#),
        "{written}"
    );
    discern::testing::config::Config::parse(&written).unwrap();
}
