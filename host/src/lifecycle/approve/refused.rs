//! Why `discern approve` approves nothing, each reason with its slug and the owner's way past
//! it; the envelope is built once, from [`Refusal`].

use crate::result::{ErrorSlug, Hint, HintId, Refusal};

/// Every reason `approve` refuses, by cause.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotApproved {
    // What to approve.
    #[error("Name what to approve once: a branch or revision, or --effort ID, not both.")]
    TargetTwice,
    #[error("{flag} is not used {when}: {why}, so it would be ignored.")]
    Unused {
        flag: &'static str,
        when: &'static str,
        why: &'static str,
    },
    #[error("This checkout has the trunk out; name what to approve.")]
    TrunkCheckedOut,
    #[error(
        "{local} is a local branch: its approval commit goes on it, so --branch does not apply."
    )]
    BranchFlagOnLocalBranch { local: String },
    #[error("{rev} is not a branch; name the local branch its approval commit goes on.")]
    NotABranch { rev: String },
    #[error(
        "The local branch {name} is at {at}, not at {rev} ({head}); the approval commit goes on top of exactly what is approved."
    )]
    BranchElsewhere {
        name: String,
        at: String,
        rev: String,
        head: String,
    },
    #[error(
        "{rev:?} names no branch, remote-tracking or pull-request ref, or commit id here (tags are not approved)."
    )]
    UnknownRevision { rev: String },
    #[error("{what} cannot be read.")]
    Unreadable { what: String },
    #[error("--head takes the id of the commit you reviewed; {given:?} names no commit here.")]
    NotACommit { given: String },
    #[error(
        "{target} is at {at}, {past} past {reviewed}, which you reviewed; nothing was signed: an approval is for what the owner reviewed."
    )]
    MovedPast {
        target: String,
        dry_run: String,
        at: String,
        reviewed: String,
        /// How far past: "N commit(s)", or why that cannot be told (never a guessed 0).
        past: String,
    },
    #[error(
        "{target} is at {at}, which does not contain {reviewed}, which you reviewed (the branch was rewritten since); nothing was signed."
    )]
    Rewritten {
        target: String,
        dry_run: String,
        at: String,
        reviewed: String,
    },
    #[error(
        "Name what you reviewed: a signed approval is for exactly the head you looked at (--head SHA) or the items you were shown (--token, each), never whatever {target} holds when this runs."
    )]
    NotReviewed { target: String, dry_run: String },
    // What it is judged against.
    #[error("How approvals are given cannot be told: {why}.")]
    PolicyUnreadable { why: String },
    #[error("The trunk {trunk} cannot be read.")]
    TrunkUnreadable { trunk: String },
    #[error("What the trunk is cannot be told: {0}.")]
    TrunkDiverged(crate::git::DivergedTrunk),
    #[error(
        "{head} does not contain the trunk {trunk}; an approval is for the commit that lands, which must contain it."
    )]
    TrunkNotContained { head: String, trunk: String },
    #[error("What needs approval cannot be told: {why}.")]
    RequiredUnknown { why: String },
    #[error(
        "The trunk's discern.toml names no repository ([acceptance].repository), and a signed approval names the repository it is for, so it cannot be copied into another one."
    )]
    NoRepository,
    #[error("Stale proposals authorize nothing: {}.", .standards.join(", "))]
    StaleProposals { standards: Vec<String> },
    // The owner's tokens.
    #[error(
        "The token {prefix:?} names {matches} of the items awaiting approval; give a unique prefix (at least 4 characters) of one."
    )]
    AmbiguousToken { prefix: String, matches: usize },
    #[error(
        "The token {prefix:?} names none of the items awaiting approval: what awaits approval changed since you were shown it; nothing was signed."
    )]
    TokenMoved { prefix: String, dry_run: String },
    #[error(
        "The tokens name {named} of the {wanted} items awaiting approval; an approval covers all of them at once."
    )]
    NotEveryToken { named: usize, wanted: usize },
    // How it is given.
    #[error(
        "Nothing was approved: no signing key is named (--key PATH, or git's user.signingkey)."
    )]
    NoSigningKey,
    #[error("Nothing was approved: {0}.")]
    NotSigned(#[from] crate::approval::SignError),
    #[error("Nothing was approved: {why}.")]
    NotCommitted { why: String },
    #[error(
        "Nothing was approved: without allowed signers on the trunk, approval is answered on an interactive terminal, and this is none."
    )]
    NoTerminal,
    #[error("Nothing was approved: an item was not answered yes.")]
    NotAnsweredYes,
    #[error("Nothing was approved: {why}.")]
    NoteNotWritten { why: String },
}

impl Refusal for NotApproved {
    fn slug(&self) -> ErrorSlug {
        match self {
            Self::TargetTwice
            | Self::Unused { .. }
            | Self::BranchFlagOnLocalBranch { .. }
            | Self::NotABranch { .. }
            | Self::AmbiguousToken { .. }
            | Self::NotEveryToken { .. }
            | Self::NotACommit { .. }
            | Self::NotReviewed { .. } => ErrorSlug::InvalidArguments,
            Self::UnknownRevision { .. } => ErrorSlug::NotFound,
            Self::StaleProposals { .. } => ErrorSlug::ProposalStale,
            Self::NoTerminal | Self::NotAnsweredYes => ErrorSlug::AwaitingStandardApproval,
            Self::TrunkCheckedOut | Self::BranchElsewhere { .. } => ErrorSlug::WrongCheckout,
            Self::Unreadable { .. }
            | Self::PolicyUnreadable { .. }
            | Self::RequiredUnknown { .. } => ErrorSlug::CannotTell,
            Self::TrunkUnreadable { .. } | Self::TrunkDiverged(_) => ErrorSlug::TrunkUnreadable,
            Self::TrunkNotContained { .. }
            | Self::MovedPast { .. }
            | Self::Rewritten { .. }
            | Self::TokenMoved { .. }
            | Self::NoRepository
            | Self::NoSigningKey
            | Self::NotSigned(_)
            | Self::NotCommitted { .. }
            | Self::NoteNotWritten { .. } => ErrorSlug::PreconditionFailed,
        }
    }

    fn hint(&self) -> Hint {
        let (id, text) = match self {
            Self::TargetTwice => (
                HintId::AskOwner,
                "Run `discern approve BRANCH` or `discern approve --effort ID`.".to_owned(),
            ),
            Self::Unused { flag, when, .. } => (
                HintId::SeeHelp,
                format!("Run `discern approve` again without {flag} {when}."),
            ),
            Self::TrunkCheckedOut => (
                HintId::AskOwner,
                "Run `discern approve BRANCH` (a branch, `origin/BRANCH` or `refs/pull/N/head`), or `discern approve --effort ID` (`discern status` lists the efforts).".to_owned(),
            ),
            Self::BranchFlagOnLocalBranch { local } => (
                HintId::AskOwner,
                format!("Run `discern approve {local}` without --branch."),
            ),
            Self::NotABranch { rev } => (
                HintId::AskOwner,
                format!("Run `discern approve {rev} --branch NAME`."),
            ),
            Self::BranchElsewhere { name, rev, .. } => (
                HintId::AskOwner,
                format!(
                    "Move it there (`git branch -f {name} {rev}`, or `git merge --ff-only {rev}` where it is checked out), or name another branch with `--branch NAME`; then approve again."
                ),
            ),
            Self::UnknownRevision { .. } => (
                HintId::AskOwner,
                "Fetch it first (`git fetch origin BRANCH`, or `git fetch origin pull/N/head` for a pull request), then `discern approve origin/BRANCH` or `discern approve FETCHED_COMMIT --branch NAME`.".to_owned(),
            ),
            Self::Unreadable { .. } => (
                HintId::CheckRepository,
                "Check the repository (`git status`), then approve again.".to_owned(),
            ),
            Self::NotACommit { .. } => (
                HintId::AskOwner,
                "Give the full commit id you reviewed (the pull request's head), or run `discern approve TARGET --dry-run`: it prints the command with the head it shows.".to_owned(),
            ),
            Self::MovedPast {
                dry_run,
                at,
                reviewed,
                ..
            } => (
                HintId::AskOwner,
                format!(
                    "Review what was pushed after it (`git diff {reviewed} {at}`), then run `{dry_run}` and the command it prints."
                ),
            ),
            Self::Rewritten {
                dry_run,
                at,
                reviewed,
                ..
            } => (
                HintId::AskOwner,
                format!(
                    "Review the branch as it now is (`git diff {reviewed} {at}`), then run `{dry_run}` and the command it prints."
                ),
            ),
            Self::NotReviewed { dry_run, .. } => (
                HintId::AskOwner,
                format!(
                    "Run `{dry_run}`: it lists the items at the head it reads and prints the command that signs exactly them (`--head SHA`)."
                ),
            ),
            Self::TokenMoved { dry_run, .. } => (
                HintId::AskOwner,
                format!(
                    "Run `{dry_run}` to see what awaits approval now, and the command that signs exactly it."
                ),
            ),
            Self::NoRepository => (
                HintId::AskOwner,
                "Name the repository on the trunk: add `repository = \"HOST/OWNER/NAME\"` (e.g. \"github.com/acme/app\") under [acceptance] in discern.toml, in a change the owner approves (this verb signs the change that adds it), then approve again.".to_owned(),
            ),
            Self::PolicyUnreadable { .. } => (
                HintId::CheckRepository,
                "Fix [acceptance] on the trunk, then approve again.".to_owned(),
            ),
            Self::TrunkUnreadable { .. } => (
                HintId::CheckRepository,
                "Fetch it (`git fetch origin`), then approve again.".to_owned(),
            ),
            Self::TrunkDiverged(diverged) => {
                (HintId::CheckRepository, diverged.hint("approve again"))
            }
            Self::TrunkNotContained { .. } => (
                HintId::UpdateFromTrunk,
                "Bring in the trunk (`discern update` on the branch), run the gate, then approve."
                    .to_owned(),
            ),
            Self::RequiredUnknown { .. } => (
                HintId::CheckRepository,
                "Fix what is named above, then approve again.".to_owned(),
            ),
            Self::StaleProposals { .. } => (
                HintId::StandardsPropose,
                "The effort renews them (repeating the same proposal batch) and proves the new commit; then approve.".to_owned(),
            ),
            Self::AmbiguousToken { .. } => (
                HintId::AskOwner,
                "Run `discern approve --dry-run` to list the items and their tokens.".to_owned(),
            ),
            Self::NotEveryToken { .. } => (
                HintId::AskOwner,
                "Name every item's token, or none (the listing is what you approve).".to_owned(),
            ),
            Self::NoSigningKey => (
                HintId::AskOwner,
                "Run `discern approve --key ~/.ssh/id_ed25519 …`, or `git config --global user.signingkey PATH`.".to_owned(),
            ),
            Self::NotSigned(_) => (
                HintId::AskOwner,
                "Sign with a key the trunk's allowed-signers file lists (`--key PATH`, or git's user.signingkey).".to_owned(),
            ),
            Self::NotCommitted { .. } => (
                HintId::CheckRepository,
                "Fix what is named, then approve again.".to_owned(),
            ),
            Self::NoTerminal => (
                HintId::AskOwner,
                "The owner runs `discern approve` in a terminal; teams and CI set [acceptance].allowed_signers for signed approvals.".to_owned(),
            ),
            Self::NotAnsweredYes => (
                HintId::AskOwner,
                "Run `discern approve` again to decide once more.".to_owned(),
            ),
            Self::NoteNotWritten { .. } => (
                HintId::CheckRepository,
                "Let the other discern writer finish, then approve again.".to_owned(),
            ),
        };
        Hint::next_step(id, text)
    }
}
