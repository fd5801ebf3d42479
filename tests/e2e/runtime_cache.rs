//! The per-user compiled-component cache: hits are observable, damage means a recompile. The
//! built-ins never use it: they load the code precompiled into the binary, unless it does not
//! load on this host, and then they are compiled once through the cache, with a note.

use discern::testing::runtime::{Origin, ProducerComponent, Runtime};

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, builtin};

/// A built-in's wasm as a user's component: no precompiled code, so the cache decides.
fn as_user_component(name: &str) -> ProducerComponent {
    ProducerComponent::new(format!("{name}.wasm"), builtin(name).bytes().to_vec())
}

#[test]
fn the_second_run_loads_from_the_cache_and_a_truncated_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let component = as_user_component("file-size");

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
    let component = as_user_component("extent");
    assert_eq!(runtime.load(&component).unwrap().origin, Origin::Compiled);
    assert_eq!(runtime.describe(&component).unwrap().name, "extent");
}

#[test]
fn built_ins_load_precompiled_code_and_never_touch_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::with_cache_dir(Some(dir.path().to_owned())).unwrap();
    for name in discern::testing::builtins::names() {
        let component = builtin(name);
        assert_eq!(
            runtime.load(&component).unwrap().origin,
            Origin::Precompiled,
            "{name}"
        );
        assert_eq!(runtime.describe(&component).unwrap().name, name);
    }
    assert!(!dir.path().join("components").exists());
}

#[test]
fn precompiled_code_that_does_not_load_falls_back_to_compiling_once_with_a_note() {
    let config = Config::new().standard(Standard::todo(5));
    let fixture = Fixture::new(&config);
    let normal = fixture.run(&["standards", "--json"]);
    assert_eq!(normal.json()["ok"], true, "{}", normal.stdout);
    assert!(!normal.stderr.contains("precompiled"), "{}", normal.stderr);

    // Debug builds hand wasmtime a truncated copy of the precompiled code: it refuses it, the
    // wasm is compiled (and cached), the reading is the same, and stderr says why.
    // A fixture of its own: in the first one, evidence would answer without loading anything.
    let fault = [("DISCERN_FAULT_PRECOMPILED", "1")];
    let faulted = Fixture::new(&config).run_with(&["standards", "--json"], &fault);
    let json = faulted.json();
    assert_eq!(json["ok"], true, "{}", faulted.stdout);
    let value = &json["data"]["standards"][0]["value"];
    assert!(value.is_number(), "{json}");
    assert_eq!(*value, normal.json()["data"]["standards"][0]["value"]);
    assert!(
        faulted
            .stderr
            .contains("builtin:pattern: the precompiled code does not load on this host"),
        "{}",
        faulted.stderr
    );
}
