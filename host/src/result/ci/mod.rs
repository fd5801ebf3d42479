//! The renderings CI systems read (`--output-format`): GitHub Actions workflow commands, SARIF
//! 2.1.0, JUnit XML and GitLab Code Quality JSON. Each reads the envelope as every surface
//! carries it — `data.standards` (verdict, value, limit, new findings), the diagnostics, the
//! refusal — so every verb renders, and none changes the exit code.

mod github;
mod gitlab;
mod junit;
mod sarif;
mod view;

pub use github::SHOWN_PER_STEP;
pub use sarif::FINGERPRINT_KEY;

use super::{Envelope, StepRenderer};

/// A CI format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiFormat {
    /// GitHub Actions workflow commands (annotations), then the human text.
    Github,
    /// SARIF 2.1.0, for code scanning (`github/codeql-action/upload-sarif`).
    Sarif,
    /// JUnit XML, one test case per Standard.
    Junit,
    /// GitLab Code Quality JSON.
    Gitlab,
}

impl CiFormat {
    pub const ALL: [CiFormat; 4] = [
        CiFormat::Github,
        CiFormat::Sarif,
        CiFormat::Junit,
        CiFormat::Gitlab,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CiFormat::Github => "github",
            CiFormat::Sarif => "sarif",
            CiFormat::Junit => "junit",
            CiFormat::Gitlab => "gitlab",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

/// `envelope` in `format`; `steps` spells the steps hints name (GitHub's log shows the human
/// text).
pub fn render(format: CiFormat, envelope: &Envelope, steps: StepRenderer) -> String {
    match format {
        CiFormat::Github => github::render(envelope, steps),
        CiFormat::Sarif => sarif::render(envelope),
        CiFormat::Junit => junit::render(envelope),
        CiFormat::Gitlab => gitlab::render(envelope),
    }
}
