//! The version `discern --version` prints: the package version and the commit it was built
//! from (baked in by the build script; absent outside a git checkout).

/// The commit the binary was built from (12 hex digits), or empty.
pub const COMMIT: &str = env!("DISCERN_COMMIT");

/// `0.1.0 (commit 0123456789ab)`, or the bare version without a commit.
pub fn long(version: &str) -> String {
    match COMMIT {
        "" => version.to_owned(),
        commit => format!("{version} (commit {commit})"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_commit_is_hex_or_absent() {
        assert!(super::COMMIT.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(super::long("1.2.3").starts_with("1.2.3"));
    }
}
