//! The `discern` binary: the two frontends over the library. They are modules of the binary
//! crate, not of the library, so the compiler enforces that the core never reaches a terminal
//! or JSON-RPC: nothing in `discern` (the library) can import `cli` or `mcp`.
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod cli;
mod desk;
mod mcp;

fn main() {
    std::process::exit(cli::main());
}
