//! `discern map [--target PAGE] [--search Q]`: the project map, Markdown pages under
//! `[map].dir` — an index of regions and pages, one page, or ranked search results.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{Config, DEFAULT_MAP_DIR};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section, WithNext};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "map";

/// `discern map [--target PAGE] [--search Q]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MapRequest {
    /// A page (path under the map dir, without .md) or a region.
    #[arg(long)]
    pub target: Option<String>,
    /// Words to search for (at most 5 results).
    #[arg(long)]
    pub search: Option<String>,
}
const MAX_RESULTS: usize = 5;

/// `data` of a `map` result: the index, one page, or search results.
#[derive(Debug, Serialize)]
struct MapData<'a> {
    map_dir: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    doc: Option<Doc<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<Vec<Region<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    docs: Option<&'a [&'a Page]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    results: Option<&'a [Found<'a>]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
}

impl<'a> MapData<'a> {
    fn of(map_dir: &'a str) -> Self {
        Self {
            map_dir,
            doc: None,
            query: None,
            count: None,
            regions: None,
            docs: None,
            results: None,
            truncated: None,
        }
    }
}

/// One page with its content.
#[derive(Debug, Serialize)]
struct Doc<'a> {
    target: &'a str,
    title: &'a str,
    region: &'a str,
    content: &'a str,
}

#[derive(Debug, Serialize)]
struct Region<'a> {
    name: &'a str,
    page_count: usize,
}

/// One search result.
#[derive(Debug, Serialize)]
struct Found<'a> {
    target: &'a str,
    title: &'a str,
    #[serde(rename = "match")]
    matched: &'static str,
    score: usize,
    snippet: String,
}

#[derive(Debug, Clone, Serialize)]
struct Page {
    /// Relative to the map dir, without `.md`.
    target: String,
    region: String,
    title: String,
    #[serde(skip)]
    content: String,
}

/// `data` of a map target that names no page or region: the pages it could mean.
#[derive(Serialize)]
struct NotFound<'a> {
    candidates: Vec<&'a str>,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, hint: &str) -> Refused {
    Refused::new(slug, message, Hint::next_step(HintId::MapIndex, hint))
}

/// `discern map`, with the config the table's preflight loaded (an invalid one was refused
/// there, never read as the default map folder).
pub(crate) fn map(
    ws: &Workspace,
    config: Option<&Config>,
    target: Option<&str>,
    search: Option<&str>,
) -> Result<Reply, Refused> {
    let dir_name = config.map_or(DEFAULT_MAP_DIR.to_owned(), |c| c.map_dir.clone());
    let dir = ws.root().join(&dir_name);
    if !dir.is_dir() {
        return Err(refuse(
            ErrorSlug::NotFound,
            format!("There is no project map: {dir_name}/ does not exist."),
            "Create Markdown pages under the map dir ([map].dir in discern.toml).",
        ));
    }
    let mut pages = Vec::new();
    collect(&dir, &dir, &mut pages);
    pages.sort_by(|a, b| a.target.cmp(&b.target));
    let scoped: Vec<&Page> = match target {
        Some(t) if search.is_some() => pages
            .iter()
            .filter(|p| p.region == t || p.target.starts_with(&format!("{t}/")))
            .collect(),
        _ => pages.iter().collect(),
    };
    if let Some(query) = search {
        return search_pages(&dir_name, &scoped, query);
    }
    if let Some(target) = target {
        let wanted = target.trim_end_matches(".md");
        if let Some(page) = pages.iter().find(|p| p.target == wanted) {
            return Ok(Reply::new(
                MapData {
                    doc: Some(Doc {
                        target: &page.target,
                        title: &page.title,
                        region: &page.region,
                        content: &page.content,
                    }),
                    ..MapData::of(&dir_name)
                },
                Report {
                    state: format!("{} ({}/{}.md)", page.title, dir_name, page.target),
                    sections: vec![Section {
                        table: None,
                        title: "Content".to_owned(),
                        lines: page.content.lines().map(str::to_owned).collect(),
                    }],
                },
            ));
        }
        let region: Vec<&Page> = pages.iter().filter(|p| p.region == wanted).collect();
        if !region.is_empty() {
            return Ok(index(&dir_name, &region, Some(wanted)));
        }
        let candidates: Vec<&str> = pages
            .iter()
            .filter(|p| p.target.contains(wanted))
            .map(|p| p.target.as_str())
            .take(5)
            .collect();
        let e = refuse(
            ErrorSlug::NotFound,
            format!("No map page or region {target:?}."),
            "Look at the index (or search it for a page)",
        )
        .with_next(Action::new("map"));
        return Err(e.with_data(NotFound { candidates }));
    }
    Ok(index(&dir_name, &pages.iter().collect::<Vec<_>>(), None))
}

fn collect(root: &Path, dir: &Path, pages: &mut Vec<Page>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path: PathBuf = entry.path();
        if path.is_dir() {
            collect(root, &path, pages);
        } else if path.extension().is_some_and(|e| e == "md")
            && let Ok(content) = std::fs::read_to_string(&path)
            && let Ok(relative) = path.strip_prefix(root)
        {
            let target = relative
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            let region = target
                .split_once('/')
                .map_or("(top)".to_owned(), |(r, _)| r.to_owned());
            let title = content
                .lines()
                .find_map(|l| l.strip_prefix("# "))
                .map_or_else(|| target.clone(), |t| t.trim().to_owned());
            pages.push(Page {
                target,
                region,
                title,
                content,
            });
        }
    }
}

fn index(dir: &str, pages: &[&Page], region: Option<&str>) -> Reply {
    let mut regions: Vec<(String, usize)> = Vec::new();
    for page in pages {
        match regions.iter_mut().find(|(r, _)| *r == page.region) {
            Some((_, n)) => *n += 1,
            None => regions.push((page.region.clone(), 1)),
        }
    }
    let lines = pages
        .iter()
        .map(|p| format!("{} — {}", p.target, p.title))
        .collect();
    Reply::new(
        MapData {
            count: Some(pages.len()),
            regions: Some(
                regions
                    .iter()
                    .map(|(name, page_count)| Region {
                        name,
                        page_count: *page_count,
                    })
                    .collect(),
            ),
            docs: Some(pages),
            ..MapData::of(dir)
        },
        Report {
            state: format!(
                "{} page(s) in {} region(s) of {}{}.",
                pages.len(),
                regions.len(),
                dir,
                region.map(|r| format!(" (region {r})")).unwrap_or_default()
            ),
            sections: vec![Section {
                table: None,
                title: "Pages".to_owned(),
                lines,
            }],
        },
    )
}

fn search_pages(dir: &str, pages: &[&Page], query: &str) -> Result<Reply, Refused> {
    let terms: Vec<String> = query
        .split_whitespace()
        .map(str::to_lowercase)
        .filter(|t| !t.is_empty())
        .collect();
    if terms.is_empty() {
        return Err(refuse(
            ErrorSlug::InvalidArguments,
            "The search is empty.",
            "Search for one or more words.",
        ));
    }
    let mut scored: Vec<(usize, bool, &Page)> = pages
        .iter()
        .filter_map(|page| {
            let title = page.title.to_lowercase();
            let body = page.content.to_lowercase();
            let present = terms
                .iter()
                .filter(|t| title.contains(t.as_str()) || body.contains(t.as_str()))
                .count();
            if present == 0 {
                return None;
            }
            let score: usize = terms
                .iter()
                .map(|t| title.matches(t.as_str()).count() * 5 + body.matches(t.as_str()).count())
                .sum();
            Some((score, present == terms.len(), *page))
        })
        .collect();
    let total = scored.len();
    scored.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(b.0.cmp(&a.0))
            .then(a.2.target.cmp(&b.2.target))
    });
    let results: Vec<Found> = scored
        .iter()
        .take(MAX_RESULTS)
        .map(|(score, complete, page)| {
            let snippet = page
                .content
                .lines()
                .find(|l| terms.iter().any(|t| l.to_lowercase().contains(t.as_str())))
                .unwrap_or("")
                .trim();
            Found {
                target: &page.target,
                title: &page.title,
                matched: if *complete { "complete" } else { "partial" },
                score: *score,
                snippet: snippet.chars().take(160).collect(),
            }
        })
        .collect();
    let lines = results
        .iter()
        .map(|r| format!("{} — {}: {}", r.target, r.title, r.snippet))
        .collect();
    Ok(Reply::new(
        MapData {
            query: Some(query),
            count: Some(total),
            results: Some(&results),
            truncated: Some(total > MAX_RESULTS),
            ..MapData::of(dir)
        },
        Report {
            state: format!(
                "{total} page(s) match {query:?}{}.",
                if total > MAX_RESULTS {
                    format!("; the best {MAX_RESULTS} are shown")
                } else {
                    String::new()
                }
            ),
            sections: vec![Section {
                table: None,
                title: "Results".to_owned(),
                lines,
            }],
        },
    ))
}
