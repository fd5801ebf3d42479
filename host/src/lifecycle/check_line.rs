//! One line of `doctor`'s report: what was checked, how it went, and what fixes it.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    Ok,
    /// Worth fixing; nothing fails for it.
    Warn,
    Fail,
}

/// One check: what, how it went, and what fixes it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    pub check: String,
    pub status: Status,
    pub result: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

pub(crate) fn check(name: &str, status: Status, result: String, fix: Option<&str>) -> Check {
    Check {
        check: name.to_owned(),
        status,
        result,
        fix: fix.map(str::to_owned),
    }
}

pub(crate) fn ok(name: &str, result: String) -> Check {
    check(name, Status::Ok, result, None)
}
