//! Settling a suspect tracked file by its content, in-process, the way `git status` does when
//! stat data cannot tell (a racily clean entry, or a file touched but of the same size): the
//! file as git would store it — read, converted worktree→git by gix's filter pipeline with the
//! attributes and configuration git reads (global and system ones included) — hashed as a blob
//! and compared with the index entry's id; a symlink's target is hashed as git stores it.
//!
//! Fail closed: whatever gix cannot reproduce exactly as git would is "cannot tell" and left to
//! git — a `filter=` driver (whatever its config says), `ident`, `working-tree-encoding`,
//! configuration from the command line (`GIT_CONFIG_PARAMETERS`), attributes from a tree
//! (`GIT_ATTR_SOURCE`, `attr.tree`), a repository gix does not fully trust, an unreadable or
//! very large file, a file whose size changed while it was read, any error.

use std::cell::Cell;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use gix::attrs::StateRef;
use gix::attrs::search::Outcome;
use gix::filter::plumbing::pipeline::CrlfRoundTripCheck;
use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
use gix::index::State;
use gix::index::entry::Mode;
use gix::objs::Find;

/// What the content of one suspect tracked file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// Git would store exactly the blob (or symlink target) the index records.
    Unchanged,
    /// Git would store something else.
    Changed,
    /// Not reproducible in-process exactly as git would: git decides.
    CannotTell,
}

/// Files larger than this are left to git rather than read into memory.
const MAX_FILE: u64 = 64 << 20;

/// Environment through which git would read settings or attributes that gix does not.
const GIT_ONLY_ENV: [&str; 4] = [
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_ATTR_SOURCE",
    "GIT_ATTR_NOSYSTEM",
];

/// The repository at a work tree, opened as git sees it (the discovered one is isolated from
/// global and system config), shared by the walk's threads; opened once, when a first file
/// needs its content read.
pub(super) struct Filters {
    root: std::path::PathBuf,
    opened: OnceLock<Option<gix::ThreadSafeRepository>>,
}

impl Filters {
    pub(super) fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            opened: OnceLock::new(),
        }
    }

    fn repo(&self) -> Option<&gix::ThreadSafeRepository> {
        self.opened
            .get_or_init(|| open_as_git_does(&self.root))
            .as_ref()
    }
}

pub(super) fn open_as_git_does(root: &Path) -> Option<gix::ThreadSafeRepository> {
    if GIT_ONLY_ENV
        .iter()
        .any(|var| std::env::var_os(var).is_some())
    {
        return None;
    }
    let repo = gix::ThreadSafeRepository::open_opts(
        root,
        gix::open::Options::default().cli_overrides(["core.useReplaceRefs=false"]),
    )
    .ok()?;
    let local = repo.to_thread_local();
    // Reduced trust drops settings git would apply (or git refuses the repository).
    let trusted = local.git_dir_trust() == gix::sec::Trust::Full;
    let tree_attributes = local.config_snapshot().string("attr.tree").is_some();
    (trusted && !tree_attributes).then_some(repo)
}

/// One thread's settling over one index: made on first use, `None` inside when the pipeline
/// cannot be set up (everything is then "cannot tell").
pub(super) struct Settling<'a> {
    filters: &'a Filters,
    index: &'a State,
    settler: Option<Option<Settler>>,
}

impl<'a> Settling<'a> {
    pub(super) fn new(filters: &'a Filters, index: &'a State) -> Self {
        Self {
            filters,
            index,
            settler: None,
        }
    }

    /// Settle the tracked file at `path` (its index entry `entry`, its `lstat` `meta`).
    pub(super) fn settle(
        &mut self,
        entry: &gix::index::Entry,
        path: &[u8],
        meta: &super::lstat::Lstat,
    ) -> Settled {
        let (filters, index) = (self.filters, self.index);
        let settler = self
            .settler
            .get_or_insert_with(|| Settler::new(filters.repo()?, index, &filters.root));
        match settler {
            Some(settler) => settler
                .settle(index, entry, path, meta)
                .unwrap_or(Settled::CannotTell),
            None => Settled::CannotTell,
        }
    }
}

struct Settler {
    repo: gix::Repository,
    pipeline: gix::filter::plumbing::Pipeline,
    attributes: gix::worktree::Stack,
    root: std::path::PathBuf,
    content: Vec<u8>,
}

impl Settler {
    fn new(repo: &gix::ThreadSafeRepository, index: &State, root: &Path) -> Option<Self> {
        let repo = repo.to_thread_local();
        let source = gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping;
        let stack = repo.attributes_only(index, source).ok()?.detach();
        let (mut pipeline, attributes) =
            gix::filter::Pipeline::new(&repo, stack).ok()?.into_parts();
        let options = pipeline.options_mut();
        // No driver ever runs from here (paths that name one are "cannot tell"), and git
        // checks no round trip when it compares content.
        options.drivers.clear();
        options.crlf_roundtrip_check = CrlfRoundTripCheck::Skip;
        Some(Self {
            repo,
            pipeline,
            attributes,
            root: root.to_owned(),
            content: Vec::new(),
        })
    }

    /// `None` is "cannot tell".
    fn settle(
        &mut self,
        index: &State,
        entry: &gix::index::Entry,
        path: &[u8],
        meta: &super::lstat::Lstat,
    ) -> Option<Settled> {
        let full = self.root.join(OsStr::from_bytes(path));
        let id = match entry.mode {
            Mode::SYMLINK if meta.is_symlink() => {
                let target = std::fs::read_link(&full).ok()?;
                self.blob_id(target.as_os_str().as_bytes())?
            }
            Mode::FILE | Mode::FILE_EXECUTABLE if meta.is_file() => {
                self.read(&full, meta.size)?;
                self.converted_id(index, path)?
            }
            _ => return None,
        };
        Some(match id == entry.id {
            true => Settled::Unchanged,
            false => Settled::Changed,
        })
    }

    /// The file's bytes into `content`; `None` when it cannot be read or its size is not the
    /// `size` its `lstat` gave (it is being written).
    fn read(&mut self, full: &Path, size: u64) -> Option<()> {
        if size > MAX_FILE {
            return None;
        }
        self.content.clear();
        self.content.reserve(usize::try_from(size).ok()? + 1);
        let file = std::fs::File::open(full).ok()?;
        file.take(size + 1).read_to_end(&mut self.content).ok()?;
        (self.content.len() as u64 == size).then_some(())
    }

    /// The id of `content` converted as git would store the file at `path`.
    fn converted_id(&mut self, index: &State, path: &[u8]) -> Option<gix::ObjectId> {
        let rela = Path::new(OsStr::from_bytes(path));
        let platform = self
            .attributes
            .at_path(rela, Some(Mode::FILE), &self.repo.objects)
            .ok()?;
        let needs_git = Cell::new(false);
        let objects = &self.repo.objects;
        let outcome = self.pipeline.convert_to_git(
            self.content.as_slice(),
            rela,
            &mut |_, attributes| {
                platform.matching_attributes(attributes);
                needs_git.set(needs_git.get() || only_git_applies(attributes));
            },
            &mut |buf| {
                let Some(entry) = index.entry_by_path(path.into()) else {
                    return Ok(None);
                };
                let found = objects.try_find(&entry.id, buf)?;
                Ok(found
                    .filter(|o| o.kind == gix::objs::Kind::Blob)
                    .map(|_| ()))
            },
        );
        let hash = self.repo.object_hash();
        let id = match outcome.ok()? {
            ToGitOutcome::Unchanged(bytes) => {
                gix::objs::compute_hash(hash, gix::objs::Kind::Blob, bytes)
            }
            ToGitOutcome::Buffer(bytes) => {
                gix::objs::compute_hash(hash, gix::objs::Kind::Blob, bytes)
            }
            ToGitOutcome::Process(_) => return None,
        };
        if needs_git.get() {
            return None;
        }
        id.ok()
    }

    fn blob_id(&self, data: &[u8]) -> Option<gix::ObjectId> {
        gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, data).ok()
    }
}

/// Attributes whose conversion only git itself can be trusted to apply: a filter driver (its
/// definition may come from anywhere git reads config), `ident`, `working-tree-encoding`.
fn only_git_applies(attributes: &Outcome) -> bool {
    attributes.iter_selected().any(|m| {
        let name = m.assignment.name.as_str();
        let state = m.assignment.state;
        match name {
            "filter" | "working-tree-encoding" => {
                matches!(state, StateRef::Set | StateRef::Value(_))
            }
            "ident" => !matches!(state, StateRef::Unset | StateRef::Unspecified),
            _ => false,
        }
    })
}
