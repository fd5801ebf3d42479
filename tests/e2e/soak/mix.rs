//! What an agent can do, and the seeded generator (one per agent) that draws its next act.

/// splitmix64: a seeded generator, one per agent.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub(super) fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// An index into `weights`, drawn by weight.
    pub(super) fn pick(&mut self, weights: &[u64]) -> usize {
        let mut left = self.below(weights.iter().sum());
        for (i, w) in weights.iter().enumerate() {
            if left < *w {
                return i;
            }
            left -= w;
        }
        weights.len() - 1
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Act {
    Start(String),
    Commit,
    Done,
    Update,
    Accept,
    Pin,
    Propose,
    Withdraw,
    Status,
    Measure,
    AwaitGreen,
    AwaitLanded(String),
    AwaitTrunk,
    Approve,
    /// The owner publishes from the main checkout: the trunk and its Proof notes to the forge.
    SyncPush,
    /// The owner gives an effort up from the main checkout, discarding its work (`--force`).
    Abandon,
}

impl Act {
    pub(super) fn label(&self) -> &'static str {
        match self {
            Act::Start(_) => "start",
            Act::Commit => "git commit",
            Act::Done => "done",
            Act::Update => "update",
            Act::Accept => "accept",
            Act::Pin => "standards --pin",
            Act::Propose => "standards propose",
            Act::Withdraw => "standards withdraw",
            Act::Status => "status",
            Act::Measure => "standards",
            Act::AwaitGreen | Act::AwaitLanded(_) | Act::AwaitTrunk => "await",
            Act::Approve => "approve (owner)",
            Act::SyncPush => "sync --push (owner)",
            Act::Abandon => "abandon (owner)",
        }
    }
}
