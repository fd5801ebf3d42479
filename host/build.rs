#[path = "build/wasm_crates.rs"]
mod wasm_crates;

fn main() {
    wasm_crates::build(&[
        ("discern-producer-extent", "extent.wasm"),
        ("discern-producer-pattern", "pattern.wasm"),
        ("discern-producer-lcov", "lcov.wasm"),
        ("discern-producer-discern-metric", "discern-metric.wasm"),
        ("discern-producer-file-size", "file-size.wasm"),
        ("discern-producer-sarif", "sarif.wasm"),
    ]);
}
