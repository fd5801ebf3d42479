//! The session's record of what the service owes the client: each forwarded request until
//! its response passes, each batch until all its responses are in (then sent as one JSON
//! array), and the revision `initialize` negotiated. Every response line passes through
//! [`Ledger::from_service`], which also holds JSON-RPC errors to the echo bound and every
//! line to [`MAX_RESPONSE`].

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{Forward, Id, MAX_RESPONSE, Session, Verdict, error};
use crate::result::echo;

/// Where a pending request's response goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Alone,
    Batch(u64),
}

/// A batch whose responses are still coming in.
#[derive(Debug, Default)]
struct Open {
    waiting: usize,
    answers: Vec<Value>,
}

#[derive(Debug, Default)]
pub struct Ledger {
    pending: HashMap<Id, Route>,
    /// Requests the client cancelled: a response the service sent anyway (it raced the
    /// cancellation) is dropped, as the client would ignore it, and a batch stays one line.
    cancelled: HashSet<Id>,
    batches: HashMap<u64, Open>,
    next_batch: u64,
    /// The batch being split, which no response completes until all of it is noted.
    building: Option<u64>,
    initialize: Option<Id>,
    revision: Option<String>,
    started: bool,
}

/// What the gate does with a judged line.
#[derive(Debug, Default, PartialEq)]
pub struct Dispatch {
    /// Messages for the service, in order.
    pub forward: Vec<String>,
    /// Lines for the client now: a refusal, a batch all answered by the gate, or a batch a
    /// cancellation completed.
    pub answers: Vec<String>,
}

fn in_use(id: &Id) -> Value {
    let text = "invalid request: this `id` belongs to a request still in flight";
    error(id.to_value(), -32600, text)
}

impl Ledger {
    /// What the session knows, for judging the next line.
    pub fn session(&self) -> Session<'_> {
        Session {
            revision: self.revision.as_deref(),
            started: self.started,
        }
    }

    /// The revision `initialize` negotiated, once its response has passed.
    pub fn revision(&self) -> Option<&str> {
        self.revision.as_deref()
    }

    /// Whether every forwarded request has had its response (or was cancelled).
    pub fn is_settled(&self) -> bool {
        self.pending.is_empty()
    }

    /// Note `forward` as sent, or refuse it: an id still in flight would make two responses
    /// that cannot be told apart. A cancellation releases the request it names; the line of
    /// a batch that completes is returned.
    fn note(&mut self, forward: &Forward, route: Route) -> Result<Option<String>, Value> {
        self.started |= forward.initialize;
        if let Some(id) = &forward.answer_to {
            if self.pending.contains_key(id) {
                return Err(in_use(id));
            }
            self.pending.insert(id.clone(), route);
            if forward.initialize {
                self.initialize = Some(id.clone());
            }
        }
        Ok(forward.cancels.as_ref().and_then(|id| self.release(id)))
    }

    /// No response is owed for `id` any more.
    fn release(&mut self, id: &Id) -> Option<String> {
        let route = self.pending.remove(id)?;
        self.cancelled.insert(id.clone());
        match route {
            Route::Alone => None,
            Route::Batch(number) => self.settle(number, None),
        }
    }

    /// What to do with `verdict`, noting what is forwarded.
    pub fn dispatch(&mut self, verdict: Verdict) -> Dispatch {
        match verdict {
            Verdict::Skip => Dispatch::default(),
            Verdict::Answer(answer) => Dispatch {
                forward: Vec::new(),
                answers: vec![answer.to_string()],
            },
            Verdict::Forward(forward) => match self.note(&forward, Route::Alone) {
                Ok(done) => Dispatch {
                    forward: vec![forward.text],
                    answers: done.into_iter().collect(),
                },
                Err(refusal) => Dispatch {
                    forward: Vec::new(),
                    answers: vec![refusal.to_string()],
                },
            },
            Verdict::Batch(elements) => self.batch(elements),
        }
    }

    fn batch(&mut self, elements: Vec<Verdict>) -> Dispatch {
        let number = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(number, Open::default());
        self.building = Some(number);
        let mut dispatch = Dispatch::default();
        for element in elements {
            let answer = match element {
                Verdict::Answer(answer) => Some(answer),
                Verdict::Forward(message) => match self.note(&message, Route::Batch(number)) {
                    Ok(done) => {
                        dispatch.answers.extend(done);
                        if message.answer_to.is_some()
                            && let Some(open) = self.batches.get_mut(&number)
                        {
                            open.waiting += 1;
                        }
                        dispatch.forward.push(message.text);
                        None
                    }
                    Err(refusal) => Some(refusal),
                },
                Verdict::Skip | Verdict::Batch(_) => None,
            };
            if let (Some(answer), Some(open)) = (answer, self.batches.get_mut(&number)) {
                open.answers.push(answer);
            }
        }
        self.building = None;
        dispatch.answers.extend(self.finish(number));
        dispatch
    }

    /// One of batch `number`'s requests answered (or released): its line once all are.
    fn settle(&mut self, number: u64, response: Option<Value>) -> Option<String> {
        let open = self.batches.get_mut(&number)?;
        open.answers.extend(response);
        open.waiting = open.waiting.saturating_sub(1);
        self.finish(number)
    }

    /// Batch `number`'s line, if nothing more is owed for it (none if it owes nothing).
    fn finish(&mut self, number: u64) -> Option<String> {
        if self.building == Some(number) || self.batches.get(&number)?.waiting > 0 {
            return None;
        }
        let open = self.batches.remove(&number)?;
        (!open.answers.is_empty()).then(|| array_line(open.answers))
    }

    /// A line the service sent: what to send the client now (`None` while it waits for the
    /// rest of its batch).
    pub fn from_service(&mut self, line: String) -> Option<String> {
        let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
            return Some(bounded(line));
        };
        let is_response = message.get("method").is_none()
            && (message.get("result").is_some() || message.get("error").is_some());
        if !is_response {
            return Some(bounded(line));
        }
        // A request served with a result (a ping's is empty) means the service left its
        // handshake: `initialize`, or a request carrying its revision in `_meta`.
        self.started |= message
            .get("result")
            .and_then(Value::as_object)
            .is_some_and(|result| !result.is_empty());
        let id = message.get("id").and_then(Id::read);
        let route = id.as_ref().and_then(|id| self.pending.remove(id));
        if route.is_none() && id.as_ref().is_some_and(|id| self.cancelled.remove(id)) {
            return None;
        }
        if id.is_some() && id == self.initialize {
            self.negotiated(&message);
        }
        if let Some(error) = message.get_mut("error") {
            echo::bound_value(error);
        } else if !matches!(route, Some(Route::Batch(_))) {
            return Some(bounded(line));
        }
        match route {
            Some(Route::Batch(number)) => self.settle(number, Some(message)),
            _ => Some(bounded(message.to_string())),
        }
    }

    fn negotiated(&mut self, response: &Value) {
        self.initialize = None;
        if let Some(revision) = response["result"]["protocolVersion"].as_str() {
            self.revision = Some(revision.to_owned());
        }
    }
}

/// A response line over [`MAX_RESPONSE`] becomes an error for the same id naming the limit.
pub fn bounded(line: String) -> String {
    if line.len() <= MAX_RESPONSE {
        return line;
    }
    let id = serde_json::from_str::<Value>(&line)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    over_limit(id, line.len()).to_string()
}

fn over_limit(id: Value, bytes: usize) -> Value {
    let text =
        format!("the response would be {bytes} bytes, over the limit of {MAX_RESPONSE} bytes");
    error(id, -32603, &text)
}

/// A batch's responses as one line, bounded: while the array is over [`MAX_RESPONSE`], its
/// largest response gives way to an error naming the limit.
fn array_line(mut answers: Vec<Value>) -> String {
    loop {
        let line = Value::Array(answers.clone()).to_string();
        if line.len() <= MAX_RESPONSE {
            return line;
        }
        let sizes: Vec<usize> = answers.iter().map(|a| a.to_string().len()).collect();
        let Some((largest, bytes)) = sizes.iter().copied().enumerate().max_by_key(|(_, b)| *b)
        else {
            return line;
        };
        let id = answers[largest].get("id").cloned().unwrap_or(Value::Null);
        let replacement = over_limit(id, bytes);
        if replacement.to_string().len() >= bytes {
            return line;
        }
        answers[largest] = replacement;
    }
}
