//! The owner asked through the client: `elicitation/create` with one required yes/no per
//! item and no default. The verb's thread blocks on the answer; while it waits, progress
//! notifications keep the client from timing the call out, and a cancelled call is a no.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::Peer;
use serde_json::Value;

use discern::asker::Asker;
use discern::cancel::Cancel;

/// How often a waiting call looks for a cancellation.
const POLL: Duration = Duration::from_millis(250);
/// Every how many polls it tells the client it is still alive (about every 10 s).
const HEARTBEAT: u32 = 40;

/// One tool call's way to ask the owner.
pub struct Elicit {
    pub peer: Peer<RoleServer>,
    pub runtime: tokio::runtime::Handle,
    pub cancelled: Cancel,
    pub input_ended: super::gate::Ended,
    pub progress: tokio::sync::mpsc::UnboundedSender<String>,
}

impl Asker for Elicit {
    fn ask(&self, title: &str, items: &[String]) -> Option<bool> {
        let can = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if !can {
            return None;
        }
        let Some(params) = request(title, items) else {
            return Some(false);
        };
        let answer = self.runtime.block_on(self.wait(params));
        Some(answer.is_some_and(|a| every_yes(&a, items.len())))
    }
}

impl Elicit {
    async fn wait(&self, params: ElicitRequestParams) -> Option<ElicitResult> {
        let asked = self.peer.create_elicitation(params);
        tokio::pin!(asked);
        let mut poll = tokio::time::interval(POLL);
        let mut polls = 0u32;
        let mut ended_polls = 0u32;
        loop {
            tokio::select! {
                answer = &mut asked => return answer.ok(),
                _ = poll.tick() => {
                    // A client whose input ended cannot answer; a poll's grace lets an answer
                    // it sent just before arrive.
                    ended_polls += u32::from(self.input_ended.get());
                    if self.cancelled.is_cancelled() || ended_polls > 1 {
                        return None;
                    }
                    polls += 1;
                    if polls.is_multiple_of(HEARTBEAT) {
                        let _ = self.progress.send("waiting for the owner's answer".to_owned());
                    }
                }
            }
        }
    }
}

/// The form: `item_1` … `item_n`, each a required boolean described by its line.
fn request(title: &str, items: &[String]) -> Option<ElicitRequestParams> {
    let mut schema = ElicitationSchema::builder();
    for (n, item) in items.iter().enumerate() {
        let description = item.clone();
        schema =
            schema.required_bool_with(format!("item_{}", n + 1), |b| b.description(description));
    }
    let requested_schema = schema.build().ok()?;
    let mut message = format!("{title} Answer yes only to what you approve; there is no default.");
    for (n, item) in items.iter().enumerate() {
        message.push_str(&format!("\n{}. {item}", n + 1));
    }
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    })
}

/// An accepted form with `true` for every item (anything else approves nothing).
fn every_yes(answer: &ElicitResult, items: usize) -> bool {
    if answer.action != ElicitationAction::Accept {
        return false;
    }
    let Some(Value::Object(content)) = &answer.content else {
        return false;
    };
    (1..=items).all(|n| content.get(&format!("item_{n}")) == Some(&Value::Bool(true)))
}
