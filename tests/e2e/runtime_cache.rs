//! The per-user compiled-component cache: hits are observable, damage means a recompile.

use discern::runtime::{Origin, Runtime};

use crate::support::builtin;

#[test]
fn the_second_run_loads_from_the_cache_and_a_truncated_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let component = builtin("file-size");

    let first = Runtime::with_cache_dir(Some(dir.path().to_owned())).unwrap();
    assert_eq!(first.load(&component).unwrap().origin, Origin::Compiled);
    assert_eq!(first.load(&component).unwrap().origin, Origin::Memory);
    let entry = first
        .cache()
        .entry_path(first.engine(), component.digest())
        .unwrap();
    let written = std::fs::metadata(&entry).unwrap().len();
    assert!(written > 1000);

    let second = Runtime::with_cache_dir(Some(dir.path().to_owned())).unwrap();
    assert_eq!(second.load(&component).unwrap().origin, Origin::Cache);
    assert_eq!(second.describe(&component).unwrap().name, "file-size");

    // Truncate the entry: it must be recompiled (and rewritten), never trusted.
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, &bytes[..bytes.len() / 2]).unwrap();
    let third = Runtime::with_cache_dir(Some(dir.path().to_owned())).unwrap();
    assert_eq!(third.load(&component).unwrap().origin, Origin::Compiled);
    assert_eq!(third.describe(&component).unwrap().name, "file-size");
    assert_eq!(std::fs::metadata(&entry).unwrap().len(), written);

    // Flip one byte of the payload: same treatment.
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let fourth = Runtime::with_cache_dir(Some(dir.path().to_owned())).unwrap();
    assert_eq!(fourth.load(&component).unwrap().origin, Origin::Compiled);
}

#[test]
fn no_cache_dir_still_works() {
    let runtime = Runtime::with_cache_dir(None).unwrap();
    let component = builtin("extent");
    assert_eq!(runtime.load(&component).unwrap().origin, Origin::Compiled);
    assert_eq!(runtime.describe(&component).unwrap().name, "extent");
}
