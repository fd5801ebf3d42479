//! The verb table: every verb once, with the request type both frontends parse, what it is
//! for, how it behaves (annotations, the cleanliness it needs) and the library call it makes.
//!
//! The CLI builds its subcommands from [`TABLE`] (clap reads the request types' derives); the
//! MCP server builds `tools/list` (names, order, descriptions, input schemas from the same
//! derives, annotations) and its dispatch from it. A flag that exists on one surface and not
//! the other cannot be written, except where ADR 0405 fixes a different shape per surface
//! (`discern_standards`, see [`standards`]). A verb's run answers with a [`Reply`] or a
//! [`Refused`], neither naming the verb; the table alone turns either into the [`Envelope`] of
//! the verb it ran ([`Answer::into_outcome`]), so no frontend parses a result's `data` to decide
//! anything.

mod cli_only;
mod producers;
pub mod reference;
mod standards;
pub mod steps;
mod table;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::preflight::{Cleanliness, Preflight, Prepared};
use crate::result::{Envelope, ErrorSlug, Hint, HintId, Refused, Reply};
use crate::runtime::Runtime;
use crate::workspace::{Settings, Workspace};

pub use table::{TABLE, tool_names};

/// Which frontend called: the defaults that differ per surface (an MCP client may drop a long
/// call, so `await` waits less there) and how a refusal of bad arguments reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Cli,
    Mcp,
}

/// What a verb needs to run: where, with which settings, and where its progress goes.
pub struct Context<'a> {
    /// The directory the verb acts in (the CLI's current directory, the MCP working root or
    /// the tool call's `path`).
    pub dir: &'a Path,
    pub settings: &'a Settings,
    pub surface: Surface,
    pub progress: &'a (dyn Fn(&str) + Sync),
}

impl Context<'_> {
    /// The repository the verb acts in, or the refusal that says how to get there.
    pub fn workspace(&self) -> Result<Workspace, Refused> {
        Workspace::open(self.dir, self.settings.clone()).map_err(|e| {
            let hint = match self.surface {
                Surface::Cli => "Run discern from inside a git work tree.",
                Surface::Mcp => "Pass `path` with an absolute path inside a git work tree.",
            };
            Refused::new(
                ErrorSlug::WrongCheckout,
                e.to_string(),
                Hint::next_step(HintId::RunFromRepository, hint),
            )
        })
    }

    /// The producer runtime, or the refusal when it cannot start.
    pub fn runtime(&self) -> Result<Runtime, Refused> {
        self.settings.runtime()
    }
}

/// What a verb returns to its frontend: the envelope, the process exit code, and where the
/// MCP server's working root moves (`start` into the new effort, a landing `accept` back).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub envelope: Envelope,
    pub exit_code: i32,
    pub root: Option<PathBuf>,
}

impl From<Envelope> for Outcome {
    fn from(envelope: Envelope) -> Self {
        Self {
            exit_code: envelope.exit_code(),
            envelope,
            root: None,
        }
    }
}

impl Outcome {
    /// The refusal of `verb`: the table's one mapping of a [`Refused`] to the envelope.
    pub fn refused(verb: &str, refused: Refused) -> Self {
        Self::from(refused.into_envelope(verb))
    }
}

/// What a verb's run answers, before the table names it: its reply or its refusal, the exit
/// code when it is not the reply's own, and where the MCP server's working root moves.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) reply: Result<Reply, Refused>,
    pub(crate) exit_code: Option<i32>,
    pub(crate) root: Option<PathBuf>,
}

impl Answer {
    pub(crate) fn with_exit_code(mut self, code: i32) -> Self {
        self.exit_code = Some(code);
        self
    }

    /// `lines` added to the advisories, replied or refused.
    pub(crate) fn advise(&mut self, lines: impl IntoIterator<Item = String>) {
        match &mut self.reply {
            Ok(reply) => reply.advisories.extend(lines),
            Err(refused) => refused.advisories.extend(lines),
        }
    }

    /// The outcome of `verb`: the table's one mapping of a [`Reply`] or a [`Refused`] to the
    /// envelope both surfaces send.
    pub(crate) fn into_outcome(self, verb: &str) -> Outcome {
        let envelope = match self.reply {
            Ok(reply) => reply.into_envelope(verb),
            Err(refused) => refused.into_envelope(verb),
        };
        let exit_code = self.exit_code.unwrap_or_else(|| envelope.exit_code());
        Outcome {
            envelope,
            exit_code,
            root: self.root,
        }
    }
}

impl From<Reply> for Answer {
    fn from(reply: Reply) -> Self {
        Self::from(Ok(reply))
    }
}

impl From<Result<Reply, Refused>> for Answer {
    fn from(reply: Result<Reply, Refused>) -> Self {
        Self {
            reply,
            exit_code: None,
            root: None,
        }
    }
}

/// The answer of a verb that moved the caller's checkout, replied or refused.
impl From<crate::lifecycle::Moved> for Answer {
    fn from(moved: crate::lifecycle::Moved) -> Self {
        Self {
            reply: moved.reply,
            exit_code: None,
            root: moved.root,
        }
    }
}

/// `verb`'s reply, or its refusal, as the envelope (for the rows whose subcommands run
/// outside the preflight: `producers`).
fn answered(verb: &str, result: Result<Reply, Refused>) -> Outcome {
    Answer::from(result).into_outcome(verb)
}

/// The MCP annotations of a tool, stated truthfully.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

pub(super) const READ_ONLY: Annotations = Annotations {
    read_only: true,
    destructive: false,
    idempotent: true,
};

pub(super) const WRITES: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: false,
};

pub(super) const WRITES_IDEMPOTENT: Annotations = Annotations {
    idempotent: true,
    ..WRITES
};

pub(super) const DESTRUCTIVE: Annotations = Annotations {
    destructive: true,
    ..WRITES
};

/// One row of the verb table.
#[derive(Debug, Clone, Copy)]
pub struct Info {
    /// The CLI subcommand and the envelope's `verb`.
    pub name: &'static str,
    /// The MCP tool, when the verb has one.
    pub tool: Option<&'static str>,
    /// The CLI's one-line help.
    pub summary: &'static str,
    /// The MCP tool description: when to use it, in one or two sentences.
    pub tool_description: &'static str,
    pub annotations: Annotations,
    /// How clean the checkout must be before the verb writes anything.
    pub cleanliness: Cleanliness,
    /// Whether the verb can write (refs, the index, the work tree, `.git/discern`); every
    /// such verb has a dry run that writes nothing, or none of its writes is the user's.
    pub writes: bool,
    /// Whether the verb is a long operation, journalled for `progress` to read back.
    pub journal: bool,
}

impl Info {
    /// The preflight the row declares: a writing verb recovers first; its cleanliness.
    pub(crate) fn preflight(&self) -> Preflight {
        Preflight::of(self.writes, self.cleanliness).journal(self.journal)
    }
}

/// A verb with one request type for both frontends. The table runs it the same way from
/// either: decode, [`Verb::validate`], open the workspace, [`Verb::preflight`] (recovery and
/// cleanliness, [`crate::preflight::prepare`]), then [`Verb::run`] with what that established.
pub(crate) trait Verb: Sync + 'static {
    type Request: DeserializeOwned + schemars::JsonSchema;
    fn info(&self) -> &'static Info;
    /// The request's own check, the same on both surfaces: flags that do not combine are
    /// refused, never dropped.
    fn validate(&self, _request: &Self::Request) -> Result<(), Refused> {
        Ok(())
    }
    /// What runs before the verb: its row's preflight, adjusted by the request.
    fn preflight(&self, _request: &Self::Request) -> Preflight {
        self.info().preflight()
    }
    /// The verb's own work: its reply, or its refusal (which the table names and turns into
    /// the envelope).
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: Self::Request,
    ) -> Result<Answer, Refused>;
}

/// `verb`'s request run as the table runs every verb (see [`Verb`]).
fn call<V: Verb>(verb: &V, ctx: &Context, request: V::Request) -> Outcome {
    let name = Verb::info(verb).name;
    if let Err(refused) = verb.validate(&request) {
        return Outcome::refused(name, refused);
    }
    let preflight = verb.preflight(&request);
    prepared(ctx, name, preflight, |prepared| {
        verb.run(ctx, prepared, request)
    })
}

/// Run `f` once the workspace is open and `preflight` has run in it (or return the refusal
/// that stopped it); what the preflight recovered becomes the result's advisories, and the
/// result is recorded in the verb's journal when it has one.
fn prepared(
    ctx: &Context,
    verb: &str,
    preflight: Preflight,
    f: impl FnOnce(&Prepared) -> Result<Answer, Refused>,
) -> Outcome {
    steps::within(ctx.surface, || prepared_here(ctx, verb, preflight, f))
}

/// [`prepared`], its steps spelled for the caller's surface.
fn prepared_here(
    ctx: &Context,
    verb: &str,
    preflight: Preflight,
    f: impl FnOnce(&Prepared) -> Result<Answer, Refused>,
) -> Outcome {
    let opened = ctx.workspace();
    match opened.and_then(|ws| crate::preflight::prepare(verb, ws, preflight)) {
        Ok(mut prepared) => {
            let recovered = std::mem::take(&mut prepared.advisories);
            let mut answer = f(&prepared).unwrap_or_else(|refused| Answer::from(Err(refused)));
            answer.advise(recovered);
            let outcome = answer.into_outcome(verb);
            Outcome {
                envelope: prepared.finish(outcome.envelope),
                ..outcome
            }
        }
        Err(refused) => Outcome::refused(verb, refused),
    }
}

/// A row of the table as the frontends use it (a [`Verb`], or a verb whose surfaces differ
/// by design).
pub trait Entry: Sync {
    fn info(&self) -> &'static Info;
    /// The rows of the modes a verb's subcommands run (`standards propose`), when they differ
    /// from its own.
    fn modes(&self) -> &'static [&'static Info] {
        &[]
    }
    /// The CLI subcommand (without the output flags, which the CLI adds).
    fn command(&self) -> clap::Command;
    fn run_cli(&self, ctx: &Context, matches: &clap::ArgMatches) -> Result<Outcome, clap::Error>;
    /// The MCP input schema (without `path`, which the MCP server adds).
    fn input_schema(&self) -> Map<String, Value>;
    /// Run from MCP arguments (`path` already taken out); bad arguments are a refusal.
    fn run_tool(&self, ctx: &Context, arguments: Value) -> Outcome;
    /// Whether `arguments` decode as a request this verb accepts, its own check included
    /// (what the fuzz and property tests hold every row of the table to), running nothing.
    fn decodes(&self, arguments: Value) -> bool;
}

impl<V: Verb> Entry for V
where
    V::Request: clap::Args + clap::FromArgMatches,
{
    fn info(&self) -> &'static Info {
        Verb::info(self)
    }

    fn command(&self) -> clap::Command {
        let info = Verb::info(self);
        // The request type's own doc comment would become the about: set it after.
        <V::Request as clap::Args>::augment_args(clap::Command::new(info.name)).about(info.summary)
    }

    fn run_cli(&self, ctx: &Context, matches: &clap::ArgMatches) -> Result<Outcome, clap::Error> {
        let request = <V::Request as clap::FromArgMatches>::from_arg_matches(matches)?;
        Ok(call(self, ctx, request))
    }

    fn decodes(&self, arguments: Value) -> bool {
        parse::<V::Request>(arguments).is_ok_and(|request| self.validate(&request).is_ok())
    }

    fn input_schema(&self) -> Map<String, Value> {
        schema_of::<V::Request>()
    }

    fn run_tool(&self, ctx: &Context, arguments: Value) -> Outcome {
        match parse::<V::Request>(arguments) {
            Ok(request) => call(self, ctx, request),
            Err(refused) => Outcome::refused(Verb::info(self).name, refused),
        }
    }
}

/// The JSON schema of a request type, as a tool's input schema: an object with its
/// properties, unknown keys rejected (the types deny unknown fields), no meta keys.
pub fn schema_of<T: schemars::JsonSchema>() -> Map<String, Value> {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut map = match schema.to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.remove("title");
    map.remove("description");
    compact(&mut map);
    if !map.contains_key("properties") {
        map.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    map
}

/// Agents pay for `tools/list` in every session, so each schema says only what it must: an
/// optional argument is its type (an absent key means "not given", never `null`), defaults
/// are left to the descriptions, and a doc comment's line breaks are spaces.
fn compact(schema: &mut Map<String, Value>) {
    schema.remove("default");
    if let Some(Value::Array(types)) = schema.get("type") {
        let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [only] = kept[..] {
            let only = only.clone();
            schema.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text.replace('\n', " ");
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(inner) => compact(inner),
            Value::Array(items) => items.iter_mut().for_each(|item| {
                if let Value::Object(inner) = item {
                    compact(inner);
                }
            }),
            _ => {}
        }
    }
}

/// Strict MCP arguments, or the `invalid_arguments` refusal naming what is wrong.
pub fn parse<T: DeserializeOwned + schemars::JsonSchema>(arguments: Value) -> Result<T, Refused> {
    // The published input schema is enforced exactly (types, `null` only where declared,
    // `minimum`, unknown keys) before serde reads the arguments.
    let schema = Value::Object(schema_of::<T>());
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| invalid_arguments(format!("the input schema is unusable: {e}")))?;
    let problems: Vec<String> = validator
        .iter_errors(&arguments)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            bounded(&match at.is_empty() {
                true => e.to_string(),
                false => format!("{at}: {e}"),
            })
        })
        .collect();
    if !problems.is_empty() {
        let message = format!("Invalid arguments: {}.", problems.join("; "));
        return Err(invalid_arguments(message));
    }
    serde_json::from_value(arguments).map_err(|e| {
        let message = format!("Invalid arguments: {}.", bounded(&e.to_string()));
        invalid_arguments(message)
    })
}

/// A message about an input, cut so that it never echoes a large input back.
fn bounded(message: &str) -> String {
    const MAX: usize = 240;
    match message.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_owned(),
    }
}

/// The refusal for arguments a tool's schema does not allow.
pub fn invalid_arguments(message: impl Into<String>) -> Refused {
    Refused::new(
        ErrorSlug::InvalidArguments,
        message,
        Hint::next_step(
            HintId::SeeHelp,
            "Call again with arguments the verb's help (CLI) or input schema (MCP) allows.",
        ),
    )
}

/// The MCP tools as `AGENTS.md`'s guidance names them, in the table's order.
pub(crate) fn guide() -> Vec<crate::agents::guidance::Tool> {
    TABLE
        .iter()
        .map(|e| e.info())
        .filter_map(|info| {
            info.tool.map(|name| crate::agents::guidance::Tool {
                name,
                description: info.tool_description,
            })
        })
        .collect()
}

/// The row for CLI subcommand `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Entry> {
    TABLE.iter().copied().find(|e| e.info().name == name)
}

/// The row for MCP tool `tool`.
pub fn by_tool(tool: &str) -> Option<&'static dyn Entry> {
    TABLE.iter().copied().find(|e| e.info().tool == Some(tool))
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::parse;

    const KEYS: &[&str] = &[
        "verbose",
        "all",
        "local",
        "name",
        "title",
        "brief",
        "from",
        "dry_run",
        "rerun",
        "green",
        "landed",
        "trunk_moved",
        "resume",
        "timeout",
        "confirmed",
        "approve_standard",
        "target",
        "search",
        "handle",
        "names",
        "pin",
        "force",
        "baseline",
        "require_trunk",
        "proposals",
        "reason",
        "explain",
        "no_remote",
        "remote",
        "push",
        "prune",
        "effort",
        "branch",
        "token",
        "bogus",
    ];

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|i| json!(i)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            "\\PC{0,20}".prop_map(Value::String),
        ]
    }

    fn arguments() -> impl Strategy<Value = Value> {
        let value = leaf().prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z]{1,6}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        proptest::collection::btree_map(proptest::sample::select(KEYS), value, 0..5).prop_map(|m| {
            Value::Object(
                m.into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<Map<_, _>>(),
            )
        })
    }

    /// Decoding `arguments` as `T`: never a panic; what is accepted is an object the schema
    /// allows (no `null`, no unknown key).
    fn holds<T: serde::de::DeserializeOwned + schemars::JsonSchema>(arguments: &Value) -> bool {
        match parse::<T>(arguments.clone()) {
            Err(_) => true,
            Ok(_) => arguments
                .as_object()
                .is_some_and(|m| m.values().all(|v| !v.is_null()) && !m.contains_key("bogus")),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::props::cases()))]

        #[test]
        fn mcp_argument_decoding_never_panics_and_holds_the_schema(arguments in arguments()) {
            // Every row of the table, so a new verb cannot be forgotten.
            for entry in super::TABLE {
                if entry.decodes(arguments.clone()) {
                    let object = arguments.as_object();
                    prop_assert!(
                        object.is_some_and(|m| m.values().all(|v| !v.is_null())
                            && !m.contains_key("bogus")),
                        "{} accepted {}", entry.info().name, arguments
                    );
                }
            }
            // `discern_standards`' three requests, whatever the action.
            prop_assert!(holds::<crate::standards::MeasureRequest>(&arguments));
            prop_assert!(holds::<crate::proposals::ProposeRequest>(&arguments));
            prop_assert!(holds::<crate::proposals::WithdrawRequest>(&arguments));
        }
    }
}
