#[path = "build/wasm_crates.rs"]
mod wasm_crates;

#[path = "build/precompile.rs"]
mod precompile;

// The runtime's engine configuration, shared so that the precompiled built-ins match it.
#[path = "src/runtime/engine_config.rs"]
mod engine_config;

const BUILTINS: [(&str, &str); 6] = [
    ("discern-producer-extent", "extent"),
    ("discern-producer-pattern", "pattern"),
    ("discern-producer-lcov", "lcov"),
    ("discern-producer-discern-metric", "discern-metric"),
    ("discern-producer-file-size", "file-size"),
    ("discern-producer-sarif", "sarif"),
];

fn main() {
    let files: Vec<(&str, String)> = BUILTINS
        .iter()
        .map(|(package, name)| (*package, format!("{name}.wasm")))
        .collect();
    let packages: Vec<(&str, &str)> = files.iter().map(|(p, f)| (*p, f.as_str())).collect();
    wasm_crates::build(&packages);
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let names: Vec<&str> = BUILTINS.iter().map(|(_, name)| *name).collect();
    precompile::precompile(&out_dir, &names);
    println!("cargo:rerun-if-changed=src/runtime/engine_config.rs");
    println!("cargo:rerun-if-changed=build");
}
