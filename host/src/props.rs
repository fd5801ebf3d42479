//! Shared settings of the property tests (proptest): how many cases each runs. CI runs the
//! default; `PROPTEST_CASES=N` scales every property up for a long local sweep.

/// The cases per property: `PROPTEST_CASES`, else 256.
pub(crate) fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}
