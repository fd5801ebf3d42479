fn main() {
    std::process::exit(discern::cli::main());
}
