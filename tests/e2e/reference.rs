//! The built-ins' config reference (`sdk/guides/builtins.md`) is generated from what the
//! producers publish — each one's config schema and the metrics its `describe()` declares, as
//! `discern producers --json` reports them — and checked here, so it never drifts.
//! `DISCERN_REGENERATE=1` rewrites the page instead of failing.

use std::path::Path;

use serde_json::Value;

use crate::support::Fixture;

const PAGE: &str = "sdk/guides/builtins.md";

fn render(producers: &[Value], root: &Path) -> String {
    let mut page = String::from(
        "# The built-in producers\n\nGenerated from each built-in's config schema (`producers/<name>/config.schema.json`, published\nthrough `describe()`) and the metrics it declares; `cargo test --test e2e reference` checks it,\n`DISCERN_REGENERATE=1` rewrites it. What each metric counts: the README, \"What the built-ins\ncount\".\n",
    );
    for producer in producers {
        let label = producer["name"].as_str().unwrap();
        let name = label.trim_start_matches("builtin:");
        let text =
            std::fs::read_to_string(root.join(format!("producers/{name}/config.schema.json")))
                .unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        let metrics: Vec<String> = producer["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("`{}`", m.as_str().unwrap()))
            .collect();
        page.push_str(&format!(
            "\n## `{label}` (v{})\n\n{}\n\nMetrics: {}.\n\n| key | type | required | description |\n|---|---|---|---|\n",
            producer["version"].as_str().unwrap(),
            schema["description"].as_str().unwrap_or(""),
            if metrics.is_empty() { "whatever the job prints".to_owned() } else { metrics.join(", ") }
        ));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (key, spec) in schema["properties"].as_object().unwrap() {
            let kind = match &spec["type"] {
                Value::Array(kinds) => kinds
                    .iter()
                    .map(|k| k.as_str().unwrap().to_owned())
                    .collect::<Vec<_>>()
                    .join(" or "),
                other => other.as_str().unwrap_or("any").to_owned(),
            };
            page.push_str(&format!(
                "| `{key}` | {kind} | {} | {} |\n",
                if required.contains(&key.as_str()) {
                    "yes"
                } else {
                    "no"
                },
                spec["description"].as_str().unwrap_or("")
            ));
        }
        page.push_str("\nAny other key is refused before anything runs.\n");
    }
    page
}

#[test]
fn the_builtins_reference_is_generated_from_what_they_publish() {
    let fixture = Fixture::new("");
    let json = fixture.run(&["producers", "--json"]).json();
    let producers = json["data"]["producers"].as_array().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for producer in producers {
        let name = producer["name"]
            .as_str()
            .unwrap()
            .trim_start_matches("builtin:");
        let schema = root.join(format!("producers/{name}/config.schema.json"));
        let schema: Value =
            serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
        for (key, spec) in schema["properties"].as_object().unwrap() {
            assert!(
                spec["description"].is_string(),
                "{name}.{key} has no description"
            );
        }
    }
    let page = render(producers, &root);
    let path = root.join(PAGE);
    if std::env::var_os("DISCERN_REGENERATE").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == page,
        "{PAGE} is stale: regenerate it with `DISCERN_REGENERATE=1 cargo test --test e2e reference`"
    );
}
