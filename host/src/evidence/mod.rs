//! Evidence: a recorded producer execution that may be reused while its inputs are unchanged.
//!
//! A producer can only read through the `snapshot` interface, so the host knows exactly what it
//! read: the globs it listed and every path it read. That read set is a complete input closure:
//! when no path that changed between the recorded commit and a new snapshot was read or matches
//! a listed glob, every read has the same blob id and every listing the same entries, so the
//! reading is valid for that commit without running anything. The changed paths come from a
//! tree diff that opens only the subtrees whose ids differ, so checking an entry costs the size
//! of the change, not of the read set. A job-backed execution (artifacts, stdout), and one that
//! read nothing at all, is valid only for the exact commit it was measured on.
//!
//! The store lives in the git common dir (`discern/evidence/<identity>/<entry>.json`): one
//! content-addressed file per entry, written atomically, so concurrent writers never lose each
//! other's entries; bounded in size (oldest evicted). It is a cache: a missing or corrupt entry
//! is a miss, never an error. An entry's findings are kept beside it ([`findings`]).

pub(crate) mod bundle;
mod entry;
pub(crate) mod findings;
pub(crate) mod memo;
#[cfg(feature = "remote-cache")]
pub(crate) mod remote;
pub(crate) mod shared;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::runtime::{Metric, ReadSet};
use crate::snapshot::{Pathspec, Snapshot};

pub use entry::Entry;
use entry::Header;

/// Version 4: the findings beside an entry are binary (`findings.rs`), read back several times
/// faster than JSON. Version 3: findings kept beside the entry. Version 2: read paths as one NUL-separated
/// string and listings as their globs (version 1 stored every matched entry, which made a
/// large listing slow to load).
pub const VERSION: u32 = 4;
/// The store's size bound; the oldest entries are evicted beyond it.
pub(crate) const MAX_BYTES: u64 = 256 << 20;

/// Changed paths per (recorded commit, snapshot tree), computed once per store (all identities
/// usually share the commit they were recorded on).
type ChangedSince = HashMap<(String, gix::ObjectId), Option<Arc<Vec<String>>>>;

#[derive(Debug, Clone)]
pub(crate) struct Store {
    dir: PathBuf,
    changed: Arc<Mutex<ChangedSince>>,
    /// A store that is only read (a dry run): lookups touch nothing, saves write nothing.
    read_only: bool,
    /// A store that is only written (`standards --fresh`): nothing is reused, and what is
    /// measured now is recorded, the newest entry of its identity.
    write_only: bool,
    /// Evidence other clones published, consulted on a miss.
    shared: Option<Arc<shared::Shared>>,
    /// Reuse only what this clone measured (`--no-remote`): entries another clone published
    /// are misses, even those already imported.
    local_only: bool,
}

impl Store {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            changed: Arc::default(),
            read_only: false,
            write_only: false,
            shared: None,
            local_only: false,
        }
    }

    /// This store, consulting `shared` on a miss.
    pub(crate) fn with_shared(self, shared: Arc<shared::Shared>) -> Self {
        Self {
            shared: Some(shared),
            ..self
        }
    }

    /// What the remote evidence sources could not answer during this store's lookups.
    pub(crate) fn shared_problems(&self) -> Vec<String> {
        self.shared
            .as_ref()
            .map(|s| s.problems())
            .unwrap_or_default()
    }

    /// This store, reusing only what this clone measured.
    pub(crate) fn local_only(self) -> Self {
        Self {
            local_only: true,
            shared: None,
            ..self
        }
    }

    /// A store that is only written: nothing is reused, every execution is recorded afresh.
    pub(crate) fn write_only(dir: PathBuf) -> Self {
        Self {
            write_only: true,
            ..Self::new(dir)
        }
    }

    /// The key `identity`'s entries are stored under (`evidence/<key>/`).
    pub(crate) fn key(identity: &str) -> String {
        crate::digest::Digest::of(identity.as_bytes()).hex()
    }

    /// A store that is only read: valid entries are reused, nothing is written or touched.
    pub(crate) fn read_only(dir: PathBuf) -> Self {
        Self {
            read_only: true,
            ..Self::new(dir)
        }
    }

    /// The paths that changed from `commit` to `snapshot`, or `None` if `commit` is unreadable.
    fn changed_since(&self, commit: &str, snapshot: &Snapshot) -> Option<Arc<Vec<String>>> {
        let mut cache = self.changed.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry((commit.to_owned(), snapshot.tree()))
            .or_insert_with(|| snapshot.changed_since(commit).map(Arc::new))
            .clone()
    }

    fn identity_dir(&self, identity: &str) -> PathBuf {
        self.dir.join(Self::key(identity))
    }

    /// The newest entry for `identity` that is valid on `snapshot`: one this clone recorded,
    /// else a verified one another clone published (imported into this store).
    pub(crate) fn lookup(&self, identity: &str, snapshot: &Snapshot) -> Option<Entry> {
        if self.write_only {
            return None;
        }
        self.lookup_local(identity, snapshot)
            .or_else(|| self.lookup_shared(identity, snapshot))
    }

    /// The first verified published entry for `identity` valid on `snapshot`, kept in this
    /// store with where it came from (unless the store is only read).
    fn lookup_shared(&self, identity: &str, snapshot: &Snapshot) -> Option<Entry> {
        let shared = self.shared.as_ref()?;
        shared
            .entries(identity)
            .into_iter()
            .find(|(entry, _)| self.valid_on(entry, snapshot))
            .and_then(|(mut entry, findings)| {
                if let Some(bytes) = &findings {
                    entry.findings = Some(findings::Kept::parse(bytes.clone())?);
                }
                if !self.read_only {
                    let _ = self.import(&entry, findings.as_deref());
                }
                Some(entry)
            })
    }

    /// Keep a published `entry` (with its findings' bytes) in this store.
    fn import(&self, entry: &Entry, findings: Option<&[u8]>) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        let name = format!("{}.json", crate::digest::Digest::of(&bytes).hex());
        let path = self.identity_dir(&entry.identity).join(name);
        if let Some(findings) = findings {
            findings::write(&path, findings)?;
        }
        crate::fsutil::write_cache(&path, &bytes)?;
        self.evict(MAX_BYTES);
        Ok(())
    }

    /// The newest entry this store holds for `identity` that is valid on `snapshot`.
    fn lookup_local(&self, identity: &str, snapshot: &Snapshot) -> Option<Entry> {
        let dir = self.identity_dir(identity);
        let mut candidates: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        candidates.into_iter().find_map(|(_, path)| {
            let mut entry = self.candidate(identity, &path, snapshot)?;
            if entry.has_findings {
                entry.findings = Some(findings::read(&path)?);
            }
            // Touch it: eviction is least-recently-used.
            if !self.read_only {
                touch(&path);
                if entry.has_findings {
                    touch(&findings::path_of(&path));
                }
            }
            Some(entry)
        })
    }

    /// The entry at `path` when it is one of `identity`'s and valid on `snapshot`. Its header
    /// is read first, without the read set: an entry of another version or identity, one valid
    /// only on another commit, or one whose commit cannot be read is a miss at that cost; the
    /// read set is decoded only when the changes since its commit must be held against it.
    fn candidate(&self, identity: &str, path: &Path, snapshot: &Snapshot) -> Option<Entry> {
        let bytes = std::fs::read(path).ok()?;
        let header: Header = serde_json::from_slice(&bytes).ok()?;
        let same_commit = header.commit.parse().ok() == Some(snapshot.commit());
        if header.version != VERSION
            || header.identity != identity
            || (header.exact_commit && !same_commit)
        {
            return None;
        }
        if !same_commit {
            let changed = self.changed_since(&header.commit, snapshot)?;
            if entry::names_a_read(&bytes, &changed) {
                return None;
            }
        }
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        let usable = entry.version == VERSION
            && entry.identity == identity
            && !(self.local_only && entry.source.is_some())
            && self.valid_on(&entry, snapshot);
        usable.then_some(entry)
    }

    /// Record an execution. Errors only cost reuse later, so they are ignored by callers.
    pub(crate) fn save(
        &self,
        identity: &str,
        commit: &str,
        (metrics, encoded): (&[Metric], Option<&findings::Kept>),
        read_set: &ReadSet,
    ) -> std::io::Result<()> {
        if self.read_only {
            return Ok(());
        }
        // A kept reading's findings are written from where they are held, not copied first.
        let encoded_now;
        let kept = match encoded {
            Some(kept) => Some(kept.bytes()),
            None => {
                encoded_now = findings::encode(metrics)?;
                encoded_now.as_deref()
            }
        };
        let entry = Entry::measured(identity, commit, metrics, read_set, kept.is_some());
        let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
        let name = format!("{}.json", crate::digest::Digest::of(&bytes).hex());
        let path = self.identity_dir(identity).join(name);
        // The findings first: an entry is only ever visible with its findings in place.
        if let Some(kept) = &kept {
            findings::write(&path, kept)?;
        }
        crate::fsutil::write_cache(&path, &bytes)?;
        self.evict(MAX_BYTES);
        Ok(())
    }

    /// Remove the least recently used entries until the store fits in `max_bytes`.
    pub(crate) fn evict(&self, max_bytes: u64) {
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for dir in std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            // An identity's entries, and the parts of its group memo one folder down.
            for entry in listed(&dir.path()) {
                match entry.1.is_dir() {
                    true => files.extend(listed(&entry.0).into_iter().map(aged)),
                    false => files.push(aged(entry)),
                }
            }
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= max_bytes {
            return;
        }
        files.sort();
        for (_, size, path) in files {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }

    /// Whether this store serves what it holds (a store that is only written reads nothing).
    pub(crate) fn reads(&self) -> bool {
        !self.write_only
    }

    /// The group memo of `identity` ([`memo`]); empty when this store reads nothing, and
    /// without the parts that are missing or damaged.
    pub(crate) fn memo(&self, identity: &str) -> memo::Memo {
        match self.write_only {
            true => memo::Memo {
                identity: identity.to_owned(),
                parts: Default::default(),
            },
            false => memo::read(&self.identity_dir(identity).join(memo::DIR), identity),
        }
    }

    /// Keep `memo` as its identity's group memo, writing the parts of `written` (nothing in a
    /// store that is only read). A failed write is a part missing next time, never an error.
    pub(crate) fn save_memo(&self, memo: memo::Memo, written: &HashSet<String>) {
        if self.read_only {
            return;
        }
        let dir = self.identity_dir(&memo.identity);
        let _ = std::fs::remove_file(dir.join(memo::OLD_FILE));
        let _ = memo::write(&dir.join(memo::DIR), memo, written);
    }
}

/// The files and folders in `dir`, with their metadata.
fn listed(dir: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| Some((entry.path(), entry.metadata().ok()?)))
        .collect()
}

/// A file as eviction orders it: oldest first.
fn aged((path, meta): (PathBuf, std::fs::Metadata)) -> (SystemTime, u64, PathBuf) {
    (
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        meta.len(),
        path,
    )
}

impl Store {
    /// Whether `entry`, served by a lookup of a store of the same folder, is one this store's
    /// lookup may serve on `snapshot`: this store reads evidence and the entry is valid there.
    pub(crate) fn serves(&self, entry: &Entry, snapshot: &Snapshot) -> bool {
        !self.write_only && entry.version == VERSION && self.valid_on(entry, snapshot)
    }

    /// Whether everything `entry` read is unchanged in `snapshot`: no path that changed since
    /// the recorded commit was read or matches a listed glob. An entry that read nothing (no
    /// path, listing or artifact) holds for its own commit only: an empty read set says nothing
    /// about any other snapshot, and is what a hand-written entry looks like.
    pub(crate) fn valid_on(&self, entry: &Entry, snapshot: &Snapshot) -> bool {
        let same_commit = entry.commit.parse().ok() == Some(snapshot.commit());
        if entry.exact_commit || same_commit || entry.reads_nothing() {
            return same_commit && !snapshot.is_worktree();
        }
        let Some(changed) = self.changed_since(&entry.commit, snapshot) else {
            return false;
        };
        if changed.is_empty() {
            return true;
        }
        // A listing recorded before the dialect refused it cannot be re-read: measure again.
        let Ok(listings) = entry
            .listings
            .iter()
            .map(|g| Pathspec::parse(g, None))
            .collect::<Result<Vec<_>, _>>()
        else {
            return false;
        };
        !changed
            .iter()
            .any(|path| entry.has_read(path) || listings.iter().any(|spec| spec.matches(path)))
    }
}

fn touch(path: &Path) {
    let _ = std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
}

/// Paths `read_set` touched outside `inputs` (read, or matched by a listing).
pub(crate) fn outside(read_set: &ReadSet, inputs: &[String]) -> Vec<String> {
    let spec = Pathspec::new(inputs);
    let mut outside: Vec<String> = read_set
        .paths()
        .filter(|p| !spec.matches(p))
        .map(str::to_owned)
        .collect();
    outside.sort();
    outside.dedup();
    outside
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn entry(reads: &[&str]) -> Entry {
        Entry {
            version: VERSION,
            identity: "id".into(),
            commit: "c".into(),
            exact_commit: false,
            metrics: Vec::new(),
            listings: Vec::new(),
            reads: reads.join("\0"),
            artifacts: BTreeMap::new(),
            has_findings: false,
            findings: None,
            source: None,
        }
    }

    #[test]
    fn a_read_is_one_whole_name_of_the_list() {
        let e = entry(&["a/b.rs", "a/bc.rs", "src/x"]);
        for read in ["a/b.rs", "a/bc.rs", "src/x"] {
            assert!(e.has_read(read), "{read}");
        }
        for not in [
            "a/b",
            "b.rs",
            "a/bc",
            "c.rs",
            "src/",
            "x",
            "",
            "a/b.rs\0a/bc.rs",
        ] {
            assert!(!e.has_read(not), "{not:?}");
        }
        assert!(!entry(&[]).has_read("a"));
        assert_eq!(e.read_paths(), ["a/b.rs", "a/bc.rs", "src/x"]);
    }

    /// An entry names only the reads no listing matched, and every path its producer read is
    /// still one whose change `valid_on` sees: named, or matched by a listing's globs read
    /// again. A listing whose globs no longer parse covers nothing.
    #[test]
    fn an_entry_names_the_reads_its_listings_do_not_cover() {
        let paths = ["docs/a.md", "src/a.rs", "src/b.rs", "src/c.txt"];
        let entries: crate::snapshot::Entries = (paths.iter())
            .map(|path| {
                crate::snapshot::Entry::new(
                    path,
                    gix::ObjectId::null(gix::hash::Kind::Sha1),
                    false,
                    crate::snapshot::EntryKind::Blob,
                )
            })
            .collect();
        let unparsable = ":(nonsense)src/c.txt".to_owned();
        assert!(Pathspec::parse(std::slice::from_ref(&unparsable), None).is_err());
        let mut set = ReadSet::over(entries);
        for path in ["src/b.rs", "docs/a.md", "gone.rs", "src/a.rs", "src/c.txt"] {
            set.record_read(path);
        }
        set.record_listing(&["src/**/*.rs".to_owned()], [1, 2]);
        set.record_listing(&[unparsable], [3]);
        let set = set.sealed();
        let e = Entry::measured("id", "c", &[], &set, false);
        assert_eq!(e.read_paths(), ["docs/a.md", "gone.rs", "src/c.txt"]);
        let listings: Vec<Pathspec> = (e.listings.iter())
            .filter_map(|globs| Pathspec::parse(globs, None).ok())
            .collect();
        for path in set.read_paths() {
            let seen = e.has_read(path) || listings.iter().any(|spec| spec.matches(path));
            assert!(seen, "a change to {path} would go unseen");
        }
    }

    #[test]
    fn a_read_is_found_in_an_entry_as_saved_and_a_part_of_one_is_not() {
        let reads = [
            "a/b.rs",
            "a/bc.rs",
            "q\"uote.rs",
            "new\nline",
            "tab\there",
            "\u{e9}t\u{e9}",
        ];
        let bytes = serde_json::to_vec(&entry(&reads)).unwrap();
        for read in reads {
            assert!(entry::names_a_read(&bytes, &[read.to_owned()]), "{read:?}");
        }
        for not in [
            "a/b", "b.rs", "a/bc", "uote.rs", "q", "line", "new", "\u{e9}t",
        ] {
            assert!(!entry::names_a_read(&bytes, &[not.to_owned()]), "{not:?}");
        }
        // The first and last of a list, and a list of one.
        let one = serde_json::to_vec(&entry(&["only.rs"])).unwrap();
        assert!(entry::names_a_read(&one, &["only.rs".to_owned()]));
    }

    #[test]
    fn the_header_is_read_from_an_entry_as_saved() {
        let mut e = entry(&["a\"quoted\\path", "b"]);
        e.commit = "0123abcd".into();
        let bytes = serde_json::to_vec(&e).expect("serializes");
        let header: Header = serde_json::from_slice(&bytes).expect("header");
        assert_eq!(
            (
                header.version,
                &*header.identity,
                &*header.commit,
                header.exact_commit
            ),
            (VERSION, "id", "0123abcd", false)
        );
        let back: Entry = serde_json::from_slice(&bytes).expect("entry");
        assert!(back.has_read("a\"quoted\\path") && back.has_read("b"));
    }
}
