//! Approval tokens: the exact handle the owner's consent names at `accept`.

use serde::Serialize;

use super::store::ProposalRecord;

pub use crate::protected::limit_token as approval_token;

/// What the owner needs to decide on one proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ApprovalItem {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    pub measured: f64,
    pub delta: f64,
    pub reason: String,
    pub responsible_paths: Vec<String>,
    pub token: String,
}

impl ApprovalItem {
    pub(crate) fn of(record: &ProposalRecord) -> Self {
        Self {
            standard: record.standard.clone(),
            trunk_limit: record.trunk_limit,
            proposed_limit: record.proposed_limit,
            measured: record.measurement,
            delta: record.delta,
            reason: record.reason.clone(),
            responsible_paths: record.evidence_paths.clone(),
            token: approval_token(&record.standard, record.proposed_limit, &record.reason),
        }
    }

    /// One line an owner can read: `name trunk → proposed (measured, delta): reason [paths] token`.
    pub(crate) fn line(&self) -> String {
        format!(
            "{}: {} → {} (measured {}, delta {:+}): {} — responsible: {} — approval token {}",
            self.standard,
            self.trunk_limit,
            self.proposed_limit,
            self.measured,
            self.delta,
            self.reason,
            self.responsible_paths.join(", "),
            self.token
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_stable_and_binds_value_and_reason() {
        let token = approval_token("coverage", 80.5, "generated code");
        assert_eq!(token.len(), 64);
        assert_eq!(token, approval_token("coverage", 80.5, "generated code"));
        assert_ne!(token, approval_token("coverage", 80.4, "generated code"));
        assert_ne!(token, approval_token("coverage", 80.5, "generated code."));
        let expected = crate::digest::Digest::of(
            b"standard-limit-approval-v1\n{\"standard\":\"coverage\",\"proposed_limit\":80.5,\"reason\":\"generated code\"}",
        );
        assert_eq!(token, expected.hex());
    }
}
