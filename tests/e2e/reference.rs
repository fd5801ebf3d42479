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
        "# The built-in producers\n\nGenerated from each built-in's config schema (`producers/<name>/config.schema.json`, published\nthrough `describe()`) and the metrics it declares; `cargo test --test e2e reference` checks it,\n`DISCERN_REGENERATE=1` rewrites it. What each metric counts:\n[`docs/standards.md`](../../docs/standards.md#what-the-built-ins-count).\n",
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

/// The pages a newcomer reads: every relative link in them names a file that exists, and a
/// link to a heading (`docs/trust.md#the-owners-approval`) names a heading that exists, so a
/// page moved or a heading renamed fails here instead of in a reader's browser.
#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut pages: Vec<std::path::PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "STYLE.md",
        "sdk/README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    for dir in ["docs", "docs/adr", "sdk/guides"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target.as_str(), ""));
            let resolved = match file.is_empty() {
                true => page.clone(),
                false => page.parent().unwrap().join(file),
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
                continue;
            }
            let is_page = resolved.extension().is_some_and(|e| e == "md");
            if !anchor.is_empty() && is_page {
                let headings = slugs(&std::fs::read_to_string(&resolved).unwrap());
                if !headings.iter().any(|h| h == anchor) {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The targets of the Markdown links `[text](target)` outside fenced code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                found.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    found
}

/// The anchors GitHub gives a page's headings: lowercase, punctuation dropped, spaces as `-`.
fn slugs(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}
