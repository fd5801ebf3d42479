//! Shared reads in a real repository: each blob inflated once for two readers, a reader that
//! stops reading blocks nobody, the budget holds.

use std::error::Error;
use std::sync::mpsc;
use std::time::Duration;

use discern_tests::TestRepo;

use crate::snapshot::Snapshot;
use crate::snapshot::runs::Counted;
use crate::snapshot::shared::{Member, SharedReads};
use crate::snapshot::shared_state::{State, Step};

type Outcome = Result<(), Box<dyn Error>>;

const FILES: usize = 120;
const FILE_BYTES: usize = 1_000;

/// A commit of [`FILES`] files of [`FILE_BYTES`] bytes, each different.
fn repository() -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..FILES {
        let line = format!("file {i:04} // TODO {}\n", i % 7);
        repo.write(
            &format!("src/f{i:04}.rs"),
            line.repeat(FILE_BYTES / line.len()),
        );
    }
    repo.commit("files");
    repo
}

/// Read every entry of `snapshot` as `member`, in path order, `pause` after each; the bytes
/// must be what a reader of its own reads.
fn read_all(snapshot: &Snapshot, member: &Member, pause: Duration) -> Result<usize, String> {
    let shared = snapshot.read_by(member);
    let mut reader = shared.reader();
    let mut alone = snapshot.reader();
    let mut read = 0;
    for entry in snapshot.entries() {
        let (_, bytes) = reader.read(entry.path()).map_err(|e| e.to_string())?;
        let (_, expected) = alone.read(entry.path()).map_err(|e| e.to_string())?;
        if bytes != expected {
            return Err(format!("{}: other bytes when shared", entry.path()));
        }
        read += 1;
        std::thread::sleep(pause);
    }
    Ok(read)
}

/// Two members reading every entry on threads of their own; their counts, or why not, within
/// a minute (a deadlock fails the test instead of hanging it).
fn two_readers(
    snapshot: &Snapshot,
    shared: &SharedReads,
    pauses: [Duration; 2],
) -> Result<Vec<usize>, Box<dyn Error>> {
    let members = [shared.join(0), shared.join(1)];
    let (sender, received) = mpsc::channel();
    std::thread::scope(|scope| {
        for (member, pause) in members.iter().zip(pauses) {
            let sender = sender.clone();
            scope.spawn(move || sender.send(read_all(snapshot, member, pause)));
        }
        drop(sender);
        let mut counts = Vec::new();
        for _ in 0..2 {
            counts.push(received.recv_timeout(Duration::from_secs(60))??);
        }
        Ok(counts)
    })
}

fn everything(snapshot: &Snapshot) -> Counted {
    Counted::of_ascending(0..snapshot.entries().len() as u32)
}

#[test]
fn each_blob_is_inflated_once_for_two_readers() -> Outcome {
    let repo = repository();
    let snapshot = Snapshot::open(repo.path(), "HEAD")?;
    let all = everything(&snapshot);
    let shared = snapshot.shared_reads(vec![all.clone(), all], 64 << 20);
    let counts = two_readers(&snapshot, &shared, [Duration::ZERO; 2])?;
    assert_eq!(counts, [FILES, FILES]);
    assert_eq!(shared.inflations(), FILES, "each blob inflated once");
    Ok(())
}

#[test]
fn a_member_that_joins_while_a_blob_is_inflated_is_handed_it_too() -> Outcome {
    let repo = repository();
    let snapshot = Snapshot::open(repo.path(), "HEAD")?;
    let all = everything(&snapshot);
    let mut state = State::new(vec![all.clone(), all], snapshot.entries());
    state.join(0);
    // A worker takes the first blob on for member 0 alone, before member 1 joins.
    assert_eq!(state.claim(64 << 20), Some(0));
    state.join(1);
    state.finish(0, Some(std::sync::Arc::new(b"blob".to_vec())));
    assert!(matches!(state.step(0, 0, 64 << 20), Step::Ready(_)));
    // Member 0 read it; it is still held for member 1 instead of inflated again.
    assert!(
        matches!(state.step(1, 0, 64 << 20), Step::Ready(_)),
        "the late member reads the blob a second time"
    );
    Ok(())
}

#[test]
fn a_reader_that_stops_reading_does_not_block_the_other() -> Outcome {
    let repo = repository();
    let snapshot = Snapshot::open(repo.path(), "HEAD")?;
    let all = everything(&snapshot);
    let budget = 4 * FILE_BYTES as u64;
    let shared = snapshot.shared_reads(vec![all.clone(), all], budget);
    // The second member joins and never reads: the blobs held for it fill the budget.
    let _idle = shared.join(1);
    let reader = shared.join(0);
    let (sender, received) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| sender.send(read_all(&snapshot, &reader, Duration::ZERO)));
        let read = received.recv_timeout(Duration::from_secs(60))??;
        assert_eq!(read, FILES);
        Ok::<_, Box<dyn Error>>(())
    })?;
    // Once it is let go, what is held stays within the budget (and a blob per thread).
    assert!(
        shared.peak() <= budget + 8 * FILE_BYTES as u64,
        "{}",
        shared.peak()
    );
    Ok(())
}

#[test]
fn a_slow_reader_paces_a_fast_one_within_the_budget() -> Outcome {
    let repo = repository();
    let snapshot = Snapshot::open(repo.path(), "HEAD")?;
    let all = everything(&snapshot);
    let budget = 6 * FILE_BYTES as u64;
    let shared = snapshot.shared_reads(vec![all.clone(), all], budget);
    let counts = two_readers(
        &snapshot,
        &shared,
        [Duration::ZERO, Duration::from_millis(2)],
    )?;
    assert_eq!(counts, [FILES, FILES]);
    // The fast reader waits for the slow one rather than read the blobs again (a thread
    // starved for half a second on a busy machine may cost a few).
    assert!(
        shared.inflations() < FILES + FILES / 4,
        "{} inflations for {FILES} blobs",
        shared.inflations()
    );
    assert!(
        shared.peak() <= budget + 8 * FILE_BYTES as u64,
        "{}",
        shared.peak()
    );
    Ok(())
}
