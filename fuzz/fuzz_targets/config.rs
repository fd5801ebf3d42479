//! Any bytes as `discern.toml`: parsing (strict and tolerant) never panics, and what parses
//! holds every documented range.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = discern::testing::config::Config::parse_tolerant(text);
    if let Ok(config) = discern::testing::config::Config::parse(text) {
        for standard in &config.standards {
            assert!(standard.limit.is_finite());
            assert!(standard.margin >= 0.0);
            assert!((0.0..=discern::testing::config::MAX_TIMEOUT_S).contains(&standard.timeout));
        }
    }
});
