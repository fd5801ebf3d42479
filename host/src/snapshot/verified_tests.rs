//! Objects rewritten in place under their ids, in a real repository's loose objects: read as
//! they are by a plain snapshot, refused by a verifying one.

use std::error::Error;
use std::path::PathBuf;

use discern_tests::TestRepo;

use crate::snapshot::{ReadError, Snapshot};

type Outcome = Result<(), Box<dyn Error>>;

/// The loose object file of `id` in `repo`.
fn loose(repo: &TestRepo, id: &str) -> PathBuf {
    let id = id.trim();
    repo.path()
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..])
}

/// Make object `target` read as object `source` (both loose): the file copied over it.
fn rewrite(repo: &TestRepo, target: &str, source: &str) -> Outcome {
    let target = loose(repo, target);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644))?;
    std::fs::copy(loose(repo, source), target)?;
    Ok(())
}

fn repository() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/todo.rs", "// TODO one\n// TODO two\n")
        .write("src/clean.rs", "pub fn clean() {}\n")
        .write("other/x.rs", "x\n");
    repo.commit("first");
    repo
}

#[test]
fn an_untouched_commit_verifies_and_reads() -> Outcome {
    let repo = repository();
    let snapshot = Snapshot::open(repo.path(), "HEAD")?.verifying();
    snapshot.verify_listing()?;
    let mut reader = snapshot.reader();
    let (_, bytes) = reader.read("src/todo.rs")?;
    assert_eq!(bytes.as_slice(), b"// TODO one\n// TODO two\n");
    assert_eq!(reader.size(0)?, 2);
    Ok(())
}

#[test]
fn a_blob_rewritten_in_place_fails_a_verifying_read() -> Outcome {
    let repo = repository();
    let todo = repo.git(&["rev-parse", "HEAD:src/todo.rs"]);
    let clean = repo.git(&["rev-parse", "HEAD:src/clean.rs"]);
    rewrite(&repo, &todo, &clean)?;
    let plain = Snapshot::open(repo.path(), "HEAD")?;
    let (_, bytes) = plain.reader().read("src/todo.rs")?;
    assert_eq!(
        bytes.as_slice(),
        b"pub fn clean() {}\n",
        "the rewrite did not take"
    );
    let verifying = plain.verifying();
    let read = verifying.reader().read("src/todo.rs");
    assert!(matches!(read, Err(ReadError::Tampered { .. })), "{read:?}");
    let mut reader = verifying.reader();
    let index = verifying
        .entries()
        .iter()
        .position(|e| e.path() == "src/todo.rs")
        .ok_or("src/todo.rs is listed")?;
    let size = reader.size(index);
    assert!(matches!(size, Err(ReadError::Tampered { .. })), "{size:?}");
    Ok(())
}

#[test]
fn a_tree_rewritten_in_place_fails_the_listing_check() -> Outcome {
    let repo = repository();
    let src = repo.git(&["rev-parse", "HEAD:src"]);
    let other = repo.git(&["rev-parse", "HEAD:other"]);
    rewrite(&repo, &src, &other)?;
    let snapshot = Snapshot::open(repo.path(), "HEAD")?;
    assert!(
        snapshot.entries().iter().any(|e| e.path() == "src/x.rs"),
        "the rewrite did not take"
    );
    let checked = snapshot.verify_listing();
    assert!(
        matches!(
            checked,
            Err(crate::snapshot::listing::ListingError::Tampered { .. })
        ),
        "{checked:?}"
    );
    Ok(())
}
