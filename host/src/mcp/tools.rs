//! The tool surface, in the exact order ADR 0405 fixes: the eight-tool lifecycle prefix, then
//! `progress`, `test` and the one `discern_standards` tool. Strict input schemas (unknown keys
//! are rejected), truthful annotations, one or two sentences on when to use each tool.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The tool names, in order.
pub const ORDER: &[&str] = &[
    "discern_status",
    "discern_start",
    "discern_prepare",
    "discern_done",
    "discern_update",
    "discern_await",
    "discern_accept",
    "discern_map",
    "discern_progress",
    "discern_test",
    "discern_standards",
];

fn path() -> Value {
    json!({ "type": "string", "description": "Absolute path of the checkout to act on (default: the server's working root)." })
}

fn object(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut schema =
        json!({ "type": "object", "properties": properties, "additionalProperties": false });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The envelope every tool returns as `structuredContent`.
pub fn output_schema() -> Arc<JsonObject> {
    let schema = json!({
        "type": "object",
        "required": ["ok", "verb"],
        "properties": {
            "ok": { "type": "boolean" },
            "verb": { "type": "string" },
            "dry_run": { "type": "boolean" },
            "plan": { "type": "object" },
            "steps": { "type": "array" },
            "diagnostics": { "type": "array", "items": { "type": "object", "required": ["tool", "severity", "message", "reproduce_cmd"] } },
            "data": { "type": "object" },
            "hints": { "type": "array", "items": { "type": "object", "required": ["id", "category", "text"] } },
            "advisories": { "type": "array", "items": { "type": "string" } },
            "error": { "type": "string" },
            "message": { "type": "string" }
        }
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn tool(
    name: &'static str,
    description: &'static str,
    schema: Arc<JsonObject>,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
) -> Tool {
    Tool::new(name, description, schema)
        .with_raw_output_schema(output_schema())
        .with_annotations(
            ToolAnnotations::new()
                .read_only(read_only)
                .destructive(destructive)
                .idempotent(idempotent)
                .open_world(false),
        )
}

/// Every tool, in [`ORDER`].
pub fn all() -> Vec<Tool> {
    let b = |d: &str| json!({ "type": "boolean", "description": d });
    let s = |d: &str| json!({ "type": "string", "description": d });
    vec![
        tool(
            "discern_status",
            "Read first in every session: where you are, your Proof, the Standards, and the other efforts (bounded; verbose for everything). Changes nothing.",
            object(
                json!({ "verbose": b("Complete collections instead of the bounded orientation view."), "all": b("Survey the fleet even from an effort."), "local": b("Leave the fleet out."), "path": path() }),
                &[],
            ),
            true,
            false,
            true,
        ),
        tool(
            "discern_start",
            "Start a new effort (a worktree on its own branch) for a new task; the server then works in it. Never start a second effort for work that already has one: continue at its path.",
            object(
                json!({ "name": s("Effort name (its id)."), "title": s("One-line task title (≤ 120 characters)."), "brief": s("One-line brief (≤ 500 characters)."), "from": s("Fork from this ref instead of the trunk."), "dry_run": b("Preview only."), "path": path() }),
                &[],
            ),
            false,
            false,
            false,
        ),
        tool(
            "discern_prepare",
            "Run the fix and check jobs (format, lint, typecheck) on your uncommitted work before committing. Issues no Proof.",
            object(json!({ "path": path() }), &[]),
            false,
            false,
            true,
        ),
        tool(
            "discern_done",
            "Prove the committed work: the gate (merge, limits, jobs, every Standard) on the exact clean commit; on success relay the Proof line to the owner.",
            object(
                json!({ "rerun": b("Run the gate even when Proof is current."), "dry_run": b("Preview only."), "path": path() }),
                &[],
            ),
            false,
            false,
            true,
        ),
        tool(
            "discern_update",
            "Merge the trunk into this effort when it is behind; a conflict aborts and changes nothing.",
            object(
                json!({ "from": s("Merge this ref instead of the trunk."), "dry_run": b("Preview only."), "path": path() }),
                &[],
            ),
            false,
            false,
            true,
        ),
        tool(
            "discern_await",
            "Wait for another effort to be green or landed, or for the trunk to move; when not met, call again with the resume handle.",
            object(
                json!({ "green": s("Effort id, path or branch that must hold Proof."), "landed": s("Effort id, path or branch whose work must be on the trunk."), "trunk_moved": b("Wait for the trunk to move."), "timeout": json!({ "type": "number", "minimum": 0, "description": "Seconds to wait (default 45)." }), "resume": s("A resume handle from an earlier call."), "path": path() }),
                &[],
            ),
            true,
            false,
            true,
        ),
        tool(
            "discern_accept",
            "Land the proven effort on the trunk, only with the owner's consent given in this conversation (confirmed) and, for limit proposals, exactly their approval tokens.",
            object(
                json!({ "confirmed": b("The owner consented in this conversation."), "approve_standard": json!({ "type": "array", "items": { "type": "string" }, "description": "One approval token per limit proposal, as the owner approved." }), "dry_run": b("Preview only."), "path": path() }),
                &[],
            ),
            false,
            true,
            false,
        ),
        tool(
            "discern_map",
            "Look up the project map: the index, one page, or a search for where something lives.",
            object(
                json!({ "target": s("A page or region."), "search": s("Words to search for."), "path": path() }),
                &[],
            ),
            true,
            false,
            true,
        ),
        tool(
            "discern_progress",
            "Read back a long operation (done, test, standards, accept, await) by its handle, e.g. after a lost call. Changes nothing.",
            object(
                json!({ "handle": s("An operation handle (default: this checkout's latest)."), "path": path() }),
                &[],
            ),
            true,
            false,
            true,
        ),
        tool(
            "discern_test",
            "Run only the test jobs on the work tree as it is; done already includes them, so use this only for a quick check.",
            object(json!({ "path": path() }), &[]),
            false,
            false,
            true,
        ),
        tool(
            "discern_standards",
            "Measure the Standards (action measure; pin tightens gains), or, when your work itself breached limits, propose the exact measured limits for the owner's approval (action propose, all at once).",
            object(
                json!({
                    "action": json!({ "type": "string", "enum": ["measure", "propose"] }),
                    "names": json!({ "type": "array", "items": { "type": "string" }, "description": "measure: the Standards to measure (default all)." }),
                    "force": b("measure: the work tree as it is (never recorded)."),
                    "pin": b("measure: tighten limits to measured gains in one config-only commit."),
                    "proposals": json!({ "type": "array", "items": { "type": "object", "properties": { "name": { "type": "string" }, "reason": { "type": "string" } }, "required": ["name", "reason"], "additionalProperties": false }, "description": "propose: ordered {name, reason} requests." }),
                    "dry_run": b("Validate and preview only."),
                    "path": path()
                }),
                &["action"],
            ),
            false,
            false,
            false,
        ),
    ]
}
