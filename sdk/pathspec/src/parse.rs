//! Reading one pathspec: its magic, its normalised path, and the inputs refused.

use crate::Item;

/// Why a pathspec is refused. Each message says how to write it instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathspecError {
    #[error("{spec:?}: an empty pathspec; write \".\" or \"**\" for every file")]
    Empty { spec: String },
    #[error(
        "{spec:?} is outside the repository; write a path relative to the repository root, with no `..` above it"
    )]
    Outside { spec: String },
    #[error(
        "{spec:?} is an absolute path; write it relative to the repository root (\"src/**\", not \"/home/me/repo/src/**\"), so it means the same in every clone"
    )]
    Absolute { spec: String },
    #[error(
        "{spec:?}: braces are not expanded (git does not expand them either, so this names a file literally called so); write one pattern per alternative: {alternatives}"
    )]
    Braces { spec: String, alternatives: String },
    #[error(
        "{spec:?}: pathspec magic {magic:?} is not supported (supported: glob, literal, icase, top, exclude, and the short forms :/ :! :^); remove it"
    )]
    UnsupportedMagic { spec: String, magic: String },
    #[error("{spec:?}: the magic `literal` and `glob` are incompatible; keep one")]
    Incompatible { spec: String },
    #[error("{spec:?}: the magic list is not closed; write `:(magic,…)pattern`")]
    Unclosed { spec: String },
}

/// Git's glob-special characters.
pub(crate) fn has_wildcard(pattern: &[u8]) -> bool {
    pattern
        .iter()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
}

/// Whether `spec` is an exclusion (for a lenient parse that must keep its side).
pub(crate) fn is_exclusion(spec: &str) -> bool {
    split_magic(spec).is_ok_and(|(magic, _)| magic.exclude)
}

#[derive(Default)]
struct Magic {
    exclude: bool,
    icase: bool,
    literal: bool,
    glob: bool,
}

pub(crate) fn item(spec: &str, root: Option<&str>) -> Result<Item, PathspecError> {
    if spec.is_empty() {
        return Err(PathspecError::Empty { spec: spec.into() });
    }
    let (magic, pattern) = split_magic(spec)?;
    if magic.literal && magic.glob {
        return Err(PathspecError::Incompatible { spec: spec.into() });
    }
    if !magic.literal
        && let Some(alternatives) = brace_alternatives(pattern)
    {
        return Err(PathspecError::Braces {
            spec: spec.into(),
            alternatives,
        });
    }
    Ok(Item {
        pattern: normalise(spec, pattern, root)?,
        exclude: magic.exclude,
        icase: magic.icase,
        literal: magic.literal,
        invalid: false,
    })
}

/// The magic of `spec` and the pattern after it.
fn split_magic(spec: &str) -> Result<(Magic, &str), PathspecError> {
    let mut magic = Magic::default();
    let Some(rest) = spec.strip_prefix(':') else {
        return Ok((magic, spec));
    };
    if let Some(long) = rest.strip_prefix('(') {
        let (names, pattern) = long
            .split_once(')')
            .ok_or_else(|| PathspecError::Unclosed { spec: spec.into() })?;
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "glob" => magic.glob = true,
                "literal" => magic.literal = true,
                "icase" => magic.icase = true,
                "exclude" => magic.exclude = true,
                "top" => {}
                other => {
                    return Err(PathspecError::UnsupportedMagic {
                        spec: spec.into(),
                        magic: other.into(),
                    });
                }
            }
        }
        return Ok((magic, pattern));
    }
    // Short magic, as git reads it: any of `/`, `!`, `^`, optionally closed by `:`.
    let mut chars = rest.char_indices();
    for (i, ch) in chars.by_ref() {
        match ch {
            '/' => {}
            '!' | '^' => magic.exclude = true,
            ':' => return Ok((magic, &rest[i + 1..])),
            _ => return Ok((magic, &rest[i..])),
        }
    }
    Ok((magic, ""))
}

/// Git's path normalisation: `.` and empty components dropped, `..` resolved (never above the
/// root), an absolute path inside `root` made relative; a trailing `/` (directories only) kept.
fn normalise(spec: &str, pattern: &str, root: Option<&str>) -> Result<String, PathspecError> {
    let outside = || PathspecError::Outside { spec: spec.into() };
    let relative = if pattern.starts_with('/') {
        let root = root.ok_or_else(|| PathspecError::Absolute { spec: spec.into() })?;
        let root = root.trim_end_matches('/');
        match pattern.strip_prefix(root) {
            Some("") => "",
            Some(rest) if rest.starts_with('/') => rest,
            _ => return Err(outside()),
        }
    } else {
        pattern
    };
    let mut parts: Vec<&str> = Vec::new();
    for component in relative.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or_else(outside)?;
            }
            name => parts.push(name),
        }
    }
    let mut normal = parts.join("/");
    let last = relative.rsplit('/').next().unwrap_or_default();
    let directory = relative.contains('/') && matches!(last, "" | "." | "..");
    if directory && !normal.is_empty() {
        normal.push('/');
    }
    Ok(normal)
}

/// `prefix{a,b}suffix` → `"prefixasuffix", "prefixbsuffix"` (the first group), if any.
fn brace_alternatives(pattern: &str) -> Option<String> {
    let open = pattern.find('{')?;
    let close = open + pattern[open..].find('}')?;
    let inner = &pattern[open + 1..close];
    if !inner.contains(',') {
        return None;
    }
    let (prefix, suffix) = (&pattern[..open], &pattern[close + 1..]);
    let alternatives: Vec<String> = inner
        .split(',')
        .map(|alt| format!("{:?}", format!("{prefix}{alt}{suffix}")))
        .collect();
    Some(alternatives.join(", "))
}
