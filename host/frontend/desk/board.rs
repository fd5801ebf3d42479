//! The fleet as the owner decides on it: the observation `status` reads, grouped in decision
//! order (ready to land, awaiting the owner's approval, needs attention, working), each effort
//! with what the desk can do to it. Pure: an observation in, a board out.

use discern::status::observation::{FleetRow, GitCount, Observation};

/// The groups, in the order the owner decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Ready,
    Approval,
    Attention,
    Working,
}

impl Group {
    pub const ALL: [Group; 4] = [
        Group::Ready,
        Group::Approval,
        Group::Attention,
        Group::Working,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Group::Ready => "Ready to land (Proof honoured)",
            Group::Approval => "Awaiting the owner's approval",
            Group::Attention => "Needs attention",
            Group::Working => "Working",
        }
    }
}

/// What the desk can do to an effort; each is one CLI command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Inspect,
    Approve,
    Land,
    Update,
    Abandon,
    Shell,
}

impl Act {
    /// The key that takes the action, and its name in the footer.
    pub fn key(self) -> (char, &'static str) {
        match self {
            Act::Inspect => ('i', "inspect"),
            Act::Approve => ('a', "approve"),
            Act::Land => ('l', "land"),
            Act::Update => ('u', "update"),
            Act::Abandon => ('x', "abandon"),
            Act::Shell => ('s', "shell"),
        }
    }
}

/// One effort (or an effort branch without a worktree) on the desk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// How the verbs name it (`--effort ID`): its id, else its branch.
    pub id: String,
    pub branch: Option<String>,
    /// Its worktree; `None` for a branch without one.
    pub path: Option<String>,
    pub group: Group,
    /// One line: clean or dirty, ahead and behind, the Proof.
    pub state: String,
    /// Why it needs attention, when it does.
    pub reasons: Vec<String>,
    /// The loosenings and protected changes awaiting the owner, exactly as `status` lists them.
    pub awaiting: Vec<String>,
    pub approved_by: Option<String>,
    pub proof_line: Option<String>,
    pub task: Option<String>,
    pub collisions: Vec<String>,
    pub running: Option<String>,
    /// It holds work the trunk lacks (commits or uncommitted changes): abandoning it asks for
    /// its name typed back.
    pub unlanded: bool,
    pub acts: Vec<Act>,
}

/// The whole desk: the trunk, every effort in group order, and what could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Board {
    pub root: String,
    pub trunk: String,
    pub items: Vec<Item>,
    pub problems: Vec<String>,
}

fn known(count: Option<GitCount>) -> Option<u64> {
    match count {
        Some(GitCount::Known(n)) => Some(n),
        _ => None,
    }
}

fn count(count: Option<GitCount>) -> String {
    known(count).map_or_else(|| "?".to_owned(), |n| n.to_string())
}

/// Why a row needs the owner's attention (empty when it does not).
fn reasons(row: &FleetRow, trunk: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    if row.broken {
        reasons.push("its worktree folder is missing".to_owned());
    }
    if row.unreadable {
        reasons.push("git cannot read its worktree".to_owned());
    }
    if let Some(setup) = &row.setup {
        reasons.push(format!("setup: {setup}"));
    }
    let (ahead, behind) = (known(row.ahead), known(row.behind));
    if ahead.is_some_and(|n| n > 0) && behind.is_some_and(|n| n > 0) {
        reasons.push(format!("diverged from {trunk}: update brings the trunk in"));
    }
    if row.stale {
        reasons.push("idle for a week with unlanded work".to_owned());
    }
    reasons
}

fn group(row: &FleetRow, reasons: &[String]) -> Group {
    let ahead = known(row.ahead).is_some_and(|n| n > 0);
    let ready = row.clean == Some(true)
        && ahead
        && known(row.behind) == Some(0)
        && row.proof.map(|p| p.as_str()) == Some("honored");
    match () {
        _ if row.broken || row.unreadable || row.setup.is_some() => Group::Attention,
        _ if !row.awaiting_approval.is_empty() => Group::Approval,
        _ if ready => Group::Ready,
        _ if !reasons.is_empty() => Group::Attention,
        _ => Group::Working,
    }
}

fn state(row: &FleetRow) -> String {
    if row.broken {
        return "folder missing".to_owned();
    }
    if row.unreadable {
        return "git state unavailable".to_owned();
    }
    let clean = match row.clean {
        Some(true) => "clean",
        Some(false) => "dirty",
        None => "unreadable",
    };
    let proof = row.proof.map_or("missing", |p| p.as_str());
    format!(
        "{clean}, {} ahead, {} behind, Proof {proof}",
        count(row.ahead),
        count(row.behind)
    )
}

fn acts(group: Group, row: &FleetRow) -> Vec<Act> {
    let mut acts = vec![Act::Inspect];
    match group {
        Group::Ready => acts.push(Act::Land),
        Group::Approval => acts.push(Act::Approve),
        _ => {}
    }
    let lags = known(row.behind).is_some_and(|n| n > 0);
    if lags && !row.broken && !row.unreadable {
        acts.push(Act::Update);
    }
    acts.push(Act::Abandon);
    if !row.broken {
        acts.push(Act::Shell);
    }
    acts
}

fn item(row: &FleetRow, trunk: &str) -> Item {
    let reasons = reasons(row, trunk);
    let group = group(row, &reasons);
    let id = match row.id.is_empty() {
        false => row.id.clone(),
        true => row.branch.clone().unwrap_or_else(|| row.path.clone()),
    };
    Item {
        id,
        branch: row.branch.clone(),
        path: Some(row.path.clone()),
        group,
        state: state(row),
        awaiting: row.awaiting_approval.clone(),
        approved_by: row.approved_by.clone(),
        proof_line: row.proof_line.clone(),
        task: row.task.as_ref().map(|t| t.title.clone()),
        collisions: row
            .collisions
            .iter()
            .map(|c| format!("{}: {}", c.effort, c.paths.join(", ")))
            .collect(),
        running: row
            .running
            .as_ref()
            .map(|r| format!("{} ({}) for {}s", r.verb, r.phase, r.seconds)),
        unlanded: row.clean != Some(true) || known(row.ahead) != Some(0),
        acts: acts(group, row),
        reasons,
    }
}

/// An effort branch with no worktree whose work is not on the trunk.
fn branch_item(branch: &str) -> Item {
    Item {
        id: branch.to_owned(),
        branch: Some(branch.to_owned()),
        path: None,
        group: Group::Attention,
        state: "no worktree".to_owned(),
        reasons: vec!["an effort branch without a worktree, not on the trunk".to_owned()],
        awaiting: Vec::new(),
        approved_by: None,
        proof_line: None,
        task: None,
        collisions: Vec::new(),
        running: None,
        unlanded: true,
        acts: vec![Act::Inspect, Act::Abandon],
    }
}

/// The board of an observation: every effort (the main checkout apart) and every unlanded
/// branch without a worktree, in group order, by id within a group.
pub fn board(observation: &Observation) -> Board {
    let trunk = observation.git.trunk.clone();
    let mut items: Vec<Item> = observation
        .fleet
        .iter()
        .filter(|row| !row.is_main)
        .map(|row| item(row, &trunk))
        .chain(observation.unlanded_branches.iter().map(|b| branch_item(b)))
        .collect();
    items.sort_by(|a, b| a.group.cmp(&b.group).then_with(|| a.id.cmp(&b.id)));
    let problems = [observation
        .fleet_unreadable
        .as_ref()
        .map(|why| format!("The fleet cannot be listed: {why}"))]
    .into_iter()
    .flatten()
    .collect();
    Board {
        root: observation.root.display().to_string(),
        trunk,
        items,
        problems,
    }
}
