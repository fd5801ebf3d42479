#[path = "../host/build/wasm_crates.rs"]
mod wasm_crates;

fn main() {
    wasm_crates::build(&[
        ("discern-test-hostile", "hostile.wasm"),
        ("discern-test-future-wit", "future-wit.wasm"),
        ("discern-test-legacy-v01", "legacy-v01.wasm"),
    ]);
}
