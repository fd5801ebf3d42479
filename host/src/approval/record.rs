//! What an approval approves, and where it travels. The owner approves a *subject*: the exact
//! token set, the HEAD it is for and the trunk commit it lands on. `discern approve` records
//! the approval as a note on the approved commit (`refs/notes/discern-approvals`; push it with
//! `git push origin 'refs/notes/*'`), and the landing copies it into the Proof note, so any
//! clone, CI included, can verify it.

use std::collections::BTreeSet;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::git::{Repo, RepoError};

pub(crate) const NOTES_REF: &str = "refs/notes/discern-approvals";
pub(crate) const VERSION: u32 = 1;

/// Exactly what one approval covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subject {
    pub trunk: String,
    pub trunk_commit: ObjectId,
    pub head: ObjectId,
    pub tokens: BTreeSet<String>,
}

impl Subject {
    /// The signed text: versioned, one fact a line, tokens sorted.
    pub(crate) fn payload(&self) -> String {
        let mut text = format!(
            "discern-approval-v1\ntrunk {}\ntrunk-commit {}\nhead {}\n",
            self.trunk, self.trunk_commit, self.head
        );
        for token in &self.tokens {
            text.push_str(&format!("token {token}\n"));
        }
        text
    }

    /// The subject a payload states, when it is one discern wrote.
    pub(crate) fn parse(payload: &str) -> Option<Self> {
        let mut lines = payload.lines();
        if lines.next()? != "discern-approval-v1" {
            return None;
        }
        let field = |line: Option<&str>, name: &str| -> Option<String> {
            line?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_owned)
        };
        let trunk = field(lines.next(), "trunk")?;
        let trunk_commit = field(lines.next(), "trunk-commit")?.parse().ok()?;
        let head = field(lines.next(), "head")?.parse().ok()?;
        let tokens = lines
            .map(|l| l.strip_prefix("token ").map(str::to_owned))
            .collect::<Option<BTreeSet<_>>>()?;
        let subject = Self {
            trunk,
            trunk_commit,
            head,
            tokens,
        };
        (subject.payload() == payload).then_some(subject)
    }
}

/// How the owner gave an approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "channel", rename_all = "snake_case")]
pub(crate) enum Channel {
    /// A signature by a key the trunk's allowed-signers file lists: the boundary.
    Signed {
        principal: String,
        fingerprint: String,
        signature: String,
    },
    /// A prompt on an interactive terminal (forgeable by an agent with a shell).
    Terminal,
    /// MCP elicitation (forgeable by an agent that runs its own client).
    Elicitation,
}

impl Channel {
    /// Who gave the approval, for people: the signer's principal, or the channel.
    pub(crate) fn approver(&self) -> String {
        match self {
            Channel::Signed { principal, .. } => principal.clone(),
            Channel::Terminal => "the owner at a terminal".to_owned(),
            Channel::Elicitation => "the owner in conversation (elicitation)".to_owned(),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Channel::Signed { .. } => "signed",
            Channel::Terminal => "terminal",
            Channel::Elicitation => "elicitation",
        }
    }
}

/// One approval as recorded: the payload it approves and the channel it came through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Granted {
    pub version: u32,
    pub payload: String,
    #[serde(flatten)]
    pub channel: Channel,
}

/// The approval recorded on `commit`, if a readable one is there.
pub(crate) fn recorded(repo: &Repo, commit: ObjectId) -> Result<Option<Granted>, RepoError> {
    let Some(bytes) = repo.note(NOTES_REF, commit)? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice::<Granted>(&bytes)
        .ok()
        .filter(|g| g.version == VERSION))
}
