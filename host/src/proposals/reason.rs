//! A proposal's reason carries technical justification only: no secrets, no claim of consent.

pub(crate) const MAX_CHARS: usize = 500;

const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xapp-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "AKIA",
    "ASIA",
    "AIza",
    "npm_",
    "pypi-",
];

const SECRET_ASSIGNMENTS: &[&str] = &[
    "password=",
    "password:",
    "passwd=",
    "pwd=",
    "secret=",
    "client_secret=",
    "token=",
    "api_key=",
    "apikey=",
    "access_key=",
    "private_key=",
];

const APPROVAL_CLAIMS: &[&str] = &[
    "owner approved",
    "owner has approved",
    "owner approves",
    "approved by",
    "owner agreed",
    "owner agrees",
    "owner consent",
    "consent given",
    "consent was given",
    "has consented",
    "pre-approved",
    "preapproved",
    "signed off",
    "sign-off",
    "authorized by",
    "authorised by",
    "permission granted",
    "lgtm",
];

/// Every problem with `reason`, as sentences naming what is wrong; empty when it is valid.
pub(crate) fn problems(reason: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if reason.trim().is_empty() {
        problems.push(
            "the reason is blank: say what in this work moved the metric and why that is right"
                .to_owned(),
        );
        return problems;
    }
    let chars = reason.chars().count();
    if chars > MAX_CHARS {
        problems.push(format!(
            "the reason is {chars} characters (at most {MAX_CHARS})"
        ));
    }
    if reason.chars().any(char::is_control) {
        problems.push(
            "the reason must be one paragraph: no line breaks, tabs or other control characters"
                .to_owned(),
        );
    }
    let lower = reason.to_lowercase();
    if lower.contains("-----begin") && lower.contains("private key") {
        problems.push("the reason contains a private key".to_owned());
    }
    if let Some(prefix) = TOKEN_PREFIXES.iter().find(|p| contains_token(reason, p)) {
        problems.push(format!(
            "the reason contains what looks like a credential ({prefix}…)"
        ));
    }
    if let Some(assignment) = SECRET_ASSIGNMENTS.iter().find(|a| lower.contains(*a)) {
        problems.push(format!(
            "the reason contains a secret assignment ({assignment}…)"
        ));
    }
    if let Some(claim) = APPROVAL_CLAIMS.iter().find(|c| lower.contains(*c)) {
        problems.push(format!(
            "the reason claims approval ({claim:?}); reasons carry technical justification only — the owner's approval is given separately, at accept"
        ));
    }
    problems
}

/// `prefix` at a word start, followed by at least 16 token characters.
fn contains_token(text: &str, prefix: &str) -> bool {
    text.match_indices(prefix).any(|(i, _)| {
        let boundary = text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        let body = text[i + prefix.len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .count();
        boundary && body >= 16
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_technical_reasons() {
        assert!(
            problems("The new parser adds 40 lines of generated tables that cannot be split.")
                .is_empty()
        );
        assert!(
            problems("Skip tokens in sk-learn docs").is_empty(),
            "a short word after sk- is not a token"
        );
    }

    #[test]
    fn refuses_each_kind_of_bad_reason() {
        let one = |r: &str| problems(r).join("; ");
        assert!(one("   ").contains("blank"));
        assert!(one(&"x".repeat(501)).contains("501 characters"));
        assert!(one("line one\nline two").contains("one paragraph"));
        assert!(one("-----BEGIN RSA PRIVATE KEY----- abc").contains("private key"));
        assert!(one("uses ghp_abcdefghijklmnopqrstuvwxyz0123").contains("credential"));
        assert!(one("AKIAABCDEFGHIJKLMNOP leaked").contains("credential"));
        assert!(one("set password=hunter2 first").contains("secret assignment"));
        assert!(one("The owner approved this breach").contains("claims approval"));
        assert!(one("LGTM, consent given").contains("claims approval"));
    }
}
