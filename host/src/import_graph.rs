//! The architecture test: reads the `use crate::` / `super::` graph of the library's source and
//! holds two rules a maintainer can rely on.
//!
//! 1. **No circle between top-level modules**: if `standards` uses `proposals`, `proposals`
//!    does not use `standards`, directly or through others. Data flows one way.
//! 2. **No circle between sibling files of one module** (`proposals/batch.rs` and
//!    `proposals/renew.rs`, say). A child using its parent (`super::VERB`) and a parent
//!    declaring or re-exporting its children are the ordinary shape of a module and are not
//!    edges.
//!
//! `#[cfg(test)]` code is left out: a unit test may check one module against another.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside the crate, e.g. `["proposals", "batch"]`.
type ModPath = Vec<String>;

/// Every `.rs` file under `dir` with its module path.
fn modules(src: &Path) -> Vec<(ModPath, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("the source folder is readable") {
            let path = entry.expect("a readable entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).expect("under src");
                let mut parts: ModPath = relative
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                    parts.pop();
                }
                out.push((parts, path));
            }
        }
    }
    out.sort();
    out
}

/// The text with comments, string literals and char literals blanked out.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() {
                match rest.as_bytes()[j] {
                    b'\\' => j += 2,
                    b'"' => break,
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i += (j + 1).min(rest.len());
        } else if rest.starts_with("'\\") || (rest.len() > 2 && rest.as_bytes()[2] == b'\'') {
            // A char literal ('x', '\n'); a lifetime has no closing quote nearby.
            match rest[1..].find('\'') {
                Some(e) if e <= 10 => i += e + 2,
                _ => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The first one or two segments of the paths after every `prefix::` in `code`
/// (`crate::a::b::c` → `a::b`; `crate::{a::x, b}` → `a::x`, `b`).
fn heads(code: &str, prefix: &str) -> BTreeSet<ModPath> {
    let ident = |s: &str| -> ModPath {
        let first: String = s
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if first.is_empty() {
            return Vec::new();
        }
        let second: String = s[first.len()..]
            .strip_prefix("::")
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        match second.is_empty() {
            true => vec![first],
            false => vec![first, second],
        }
    };
    let mut out = BTreeSet::new();
    let needle = format!("{prefix}::");
    let mut from = 0;
    while let Some(at) = code[from..].find(&needle) {
        let start = from + at;
        from = start + needle.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = code[from..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        let name = ident(&group[k..]);
                        if !name.is_empty() {
                            out.insert(name);
                        }
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The module paths each file refers to (first segment after `crate::`; `super::x` resolved
/// to a sibling path).
fn references(files: &[(ModPath, PathBuf)]) -> Vec<(ModPath, BTreeSet<ModPath>)> {
    files
        .iter()
        .map(|(module, path)| {
            let text = std::fs::read_to_string(path).expect("readable source");
            // Unit tests may reach across modules to check one against another; the
            // architecture is what the library itself uses.
            let library = text.split("#[cfg(test)]").next().unwrap_or_default();
            let code = code_only(library);
            let mut refs = heads(&code, "crate");
            // `super::x` in a/b.rs (module a::b) is a::x; in a/b/mod.rs it is the same.
            if let Some((_, parent)) = module.split_last() {
                for head in heads(&code, "super") {
                    let mut target = parent.to_vec();
                    target.extend(head.into_iter().take(1));
                    refs.insert(target);
                }
            }
            (module.clone(), refs)
        })
        .collect()
}

/// A circle in `edges`, if there is one, as the nodes along it.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

/// The two graphs: top-level modules, and sibling files within each module.
fn graphs(
    src: &Path,
) -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, BTreeSet<String>>,
) {
    let files = modules(src);
    let known: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut siblings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, refs) in references(&files) {
        let Some(from_top) = module.first() else {
            continue;
        };
        for target in refs {
            // Only references to modules of this crate count (not `crate::SomeItem` at the root).
            let Some(to_top) = target.first() else {
                continue;
            };
            if !known.contains(&vec![to_top.clone()]) {
                continue;
            }
            if to_top != from_top {
                top.entry(from_top.clone())
                    .or_default()
                    .insert(to_top.clone());
            } else if module.len() >= 2 && target.len() >= 2 && module[1] != target[1] {
                let sibling = target[..2].to_vec();
                if known.contains(&sibling) {
                    siblings
                        .entry(module[..2].join("::"))
                        .or_default()
                        .insert(sibling.join("::"));
                }
            }
        }
    }
    (top, siblings)
}

/// Each module's floor: 0 for one that imports no other, else one above the highest it imports
/// (the graph has no circle when this is asked).
fn floors(top: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, usize> {
    fn floor(
        m: &str,
        top: &BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeMap<String, usize>,
    ) -> usize {
        if let Some(f) = seen.get(m) {
            return *f;
        }
        let f = top.get(m).map_or(0, |deps| {
            deps.iter()
                .map(|d| floor(d, top, seen) + 1)
                .max()
                .unwrap_or(0)
        });
        seen.insert(m.to_owned(), f);
        f
    }
    let mut seen = BTreeMap::new();
    for m in top.keys() {
        floor(m, top, &mut seen);
    }
    seen
}

/// The modules `from` reaches, itself left out.
fn reached(top: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut reached = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(m) = stack.pop() {
        for d in top.get(&m).into_iter().flatten() {
            if reached.insert(d.clone()) {
                stack.push(d.clone());
            }
        }
    }
    reached
}

#[test]
fn the_library_has_no_import_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (top, siblings) = graphs(&src);
    assert!(
        top.len() > 10,
        "the reader found the modules and their edges: {top:?}"
    );
    if let Some(circle) = find_circle(&top) {
        panic!("an import circle between modules: {}", circle.join(" → "));
    }
    if let Some(circle) = find_circle(&siblings) {
        panic!(
            "an import circle between the files of one module: {}",
            circle.join(" → ")
        );
    }
    // The shape, for `--nocapture`: modules, floors, and what the verbs' rooms reach.
    let floors = floors(&top);
    let highest = floors.values().max().copied().unwrap_or(0);
    eprintln!("modules {}, floors {}", floors.len(), highest + 1);
    for (m, f) in &floors {
        eprintln!("  {m}: floor {f}, reaches {}", reached(&top, m).len());
    }
}

/// ARCHITECTURE's `measure/` invariant: the engine below the verbs reaches none of the verbs'
/// rooms, so a verb can call it and it can never call a verb.
#[test]
fn measuring_never_calls_up_into_a_verb() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (top, _) = graphs(&src);
    let below = reached(&top, "measure");
    assert!(
        below.contains("planner") && below.contains("snapshot"),
        "the reader found what measure imports: {below:?}"
    );
    // The preflight is below the verbs (its refusals are measure's too): not a verb's room.
    let verbs_rooms = [
        "verbs",
        "standards",
        "lifecycle",
        "proposals",
        "status",
        "sync",
        "agents",
        "producers",
    ];
    let up: Vec<_> = verbs_rooms.iter().filter(|r| below.contains(**r)).collect();
    assert!(up.is_empty(), "measure reaches a verb's room: {up:?}");
}

#[test]
fn the_reader_sees_grouped_and_inline_paths_and_finds_circles() {
    let code = code_only(
        "use crate::{config::Config, proposals, result::{Envelope, Hint}};\n\
         // crate::commented\n\
         let s = \"crate::in_a_string\";\n\
         fn f() { crate::standards::short(\"x\"); super::renew::rebind(); }",
    );
    let paths = |list: &[&str]| -> BTreeSet<ModPath> {
        list.iter()
            .map(|p| p.split("::").map(str::to_owned).collect())
            .collect()
    };
    assert_eq!(
        heads(&code, "crate"),
        paths(&["config::Config", "proposals", "result", "standards::short"])
    );
    assert_eq!(heads(&code, "super"), paths(&["renew::rebind"]));
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_circle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_circle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// Where `text` (code only) makes an envelope itself: an `Envelope { … }` literal, or a
/// call of `into_envelope`.
fn makes_envelope(code: &str) -> bool {
    let literal = code.match_indices("Envelope {").any(|(at, _)| {
        let before = code[..at].trim_end();
        !(before.ends_with("->") || before.ends_with("for") || before.ends_with("struct"))
    });
    literal || code.contains(".into_envelope(")
}

/// The envelope is made in one place: `result/` (the mapping), the verb table and the journal
/// its preflight keeps; domain code answers with a `Reply` or a `Refused`.
#[test]
fn only_the_table_makes_an_envelope() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let makers: Vec<String> = modules(&src)
        .into_iter()
        .filter(|(m, path)| {
            let first = m.first().map(String::as_str);
            let test = path.to_string_lossy().ends_with("tests.rs");
            !test
                && !matches!(
                    first,
                    Some("result" | "verbs" | "preflight" | "import_graph")
                )
        })
        .filter(|(_, path)| {
            let text = std::fs::read_to_string(path).expect("a readable source file");
            let code = code_only(&text);
            // Unit tests may build an envelope to check a rendering.
            let code = code.split("#[cfg(test)]").next().unwrap_or_default();
            makes_envelope(code)
        })
        .map(|(m, _)| m.join("::"))
        .collect();
    assert!(makers.is_empty(), "domain code makes envelopes: {makers:?}");
    assert!(makes_envelope("let e = Envelope { ok: true };"));
    assert!(makes_envelope("refused.into_envelope(VERB)"));
    assert!(!makes_envelope("fn finish(e: Envelope) -> Envelope {"));
}

/// The preflight runs once per call, from the table. The one exception is `accept --effort`,
/// which prepares the named effort's checkout (only accept can find it; the caller's own
/// preflight recovers nothing and loads no config); a verb that committed itself hands on
/// with `preflight::after_commit`, which recovers nothing.
#[test]
fn only_the_table_runs_the_preflight() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut callers: Vec<String> = modules(&src)
        .into_iter()
        .filter(|(_, path)| !path.to_string_lossy().ends_with("tests.rs"))
        .filter(|(_, path)| {
            let text = std::fs::read_to_string(path).expect("a readable source file");
            let code = code_only(&text);
            let code = code.split("#[cfg(test)]").next().unwrap_or_default();
            code.contains("preflight::prepare(")
        })
        .map(|(m, _)| m.join("::"))
        .collect();
    callers.sort();
    assert_eq!(
        callers,
        ["lifecycle::accept", "verbs"],
        "who runs the preflight"
    );
}
