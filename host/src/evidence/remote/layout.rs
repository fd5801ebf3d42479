//! How a [`Bundle`] is laid out in a Bazel cache: each part a CAS blob, named by an output file
//! of the action result kept under the bundle's key; and the checks a read action result must
//! pass before any blob it names is fetched.

use super::RemoteError;
use super::action_result::{ActionResult, Digest, OutputFile};
use crate::evidence::bundle::Bundle;

/// The output file holding the entry's JSON.
pub const ENTRY: &str = "entry.json";
/// The output file holding the entry's findings, when it has some.
pub const FINDINGS: &str = "entry.findings";
/// The output file holding the signature.
pub const SIGNATURE: &str = "entry.sig";

/// One part of a bundle: its output path, its bytes and their SHA-256 (hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part<'a> {
    pub path: &'static str,
    pub bytes: &'a [u8],
    pub hash: String,
}

/// A bundle's parts, in output order.
pub(super) fn parts(bundle: &Bundle) -> Vec<Part<'_>> {
    let mut parts = vec![(ENTRY, bundle.entry.as_slice())];
    if let Some(findings) = &bundle.findings {
        parts.push((FINDINGS, findings.as_slice()));
    }
    parts.push((SIGNATURE, bundle.signature.as_slice()));
    parts
        .into_iter()
        .map(|(path, bytes)| Part {
            path,
            bytes,
            hash: crate::digest::Digest::of(bytes).hex(),
        })
        .collect()
}

/// The action result naming `parts`.
pub(super) fn action_result(parts: &[Part]) -> ActionResult {
    let file = |part: &Part| OutputFile {
        path: part.path.to_owned(),
        digest: Some(Digest {
            hash: part.hash.clone(),
            size_bytes: i64::try_from(part.bytes.len()).unwrap_or(i64::MAX),
        }),
        is_executable: false,
        contents: Vec::new(),
    };
    ActionResult {
        output_files: parts.iter().map(file).collect(),
        exit_code: 0,
    }
}

/// One blob an action result names, checked to be well-formed and within the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Wanted {
    pub path: &'static str,
    /// Lowercase hex SHA-256: safe to put in a URL.
    pub hash: String,
    pub size: u64,
    /// The bytes, when the server inlined them (still checked against the digest).
    pub inline: Option<Vec<u8>>,
}

/// The blobs `result` names: the entry and the signature, the findings when named; every
/// digest a lowercase SHA-256 and a size within `max_blob`. A path named twice, an unknown
/// path or a missing part makes the whole result malformed.
pub(super) fn wanted(result: ActionResult, max_blob: u64) -> Result<Vec<Wanted>, String> {
    let mut found: Vec<Wanted> = Vec::new();
    for file in result.output_files {
        let path = [ENTRY, FINDINGS, SIGNATURE]
            .into_iter()
            .find(|known| *known == file.path)
            .ok_or_else(|| format!("names an unknown output {}", shown(&file.path)))?;
        if found.iter().any(|w| w.path == path) {
            return Err(format!("names {path} twice"));
        }
        found.push(one(path, file, max_blob)?);
    }
    for required in [ENTRY, SIGNATURE] {
        if !found.iter().any(|w| w.path == required) {
            return Err(format!("does not name {required}"));
        }
    }
    Ok(found)
}

fn one(path: &'static str, file: OutputFile, max_blob: u64) -> Result<Wanted, String> {
    let digest = file.digest.ok_or_else(|| format!("{path} has no digest"))?;
    if !is_sha256_hex(&digest.hash) {
        return Err(format!(
            "{path} has no SHA-256 digest: {}",
            shown(&digest.hash)
        ));
    }
    let size = u64::try_from(digest.size_bytes)
        .map_err(|_| format!("{path} has a negative size {}", digest.size_bytes))?;
    if size > max_blob {
        return Err(format!(
            "{path} claims {size} bytes, over the cap of {max_blob}"
        ));
    }
    let inline = (!file.contents.is_empty()).then_some(file.contents);
    Ok(Wanted {
        path,
        hash: digest.hash,
        size,
        inline,
    })
}

/// A string the server sent, quoted and cut to a line's length for a message.
fn shown(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// Whether `hash` is 64 lowercase hex digits (what discern writes, and all a URL may hold).
pub(super) fn is_sha256_hex(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `bytes` checked against the digest `wanted` names: the size first, then the SHA-256.
pub(super) fn verify(key: &str, wanted: &Wanted, bytes: &[u8]) -> Result<(), RemoteError> {
    let mismatch = |why: String| RemoteError::Mismatch {
        key: key.to_owned(),
        path: wanted.path,
        why,
    };
    if bytes.len() as u64 != wanted.size {
        return Err(mismatch(format!(
            "{} bytes where the action result says {}",
            bytes.len(),
            wanted.size
        )));
    }
    let actual = crate::digest::Digest::of(bytes).hex();
    if actual != wanted.hash {
        return Err(mismatch(format!(
            "SHA-256 {actual} where the action result says {}",
            wanted.hash
        )));
    }
    Ok(())
}

/// The bundle made of the fetched parts (each already verified).
pub(super) fn bundle(mut parts: Vec<(&'static str, Vec<u8>)>) -> Option<Bundle> {
    let mut take = |path: &str| {
        let at = parts.iter().position(|(p, _)| *p == path)?;
        Some(parts.swap_remove(at).1)
    };
    Some(Bundle {
        entry: take(ENTRY)?,
        findings: take(FINDINGS),
        signature: take(SIGNATURE)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Bundle {
        Bundle {
            entry: b"{}".to_vec(),
            findings: Some(b"f".to_vec()),
            signature: b"sig".to_vec(),
        }
    }

    #[test]
    fn a_bundle_names_each_part_by_digest() {
        let result = action_result(&parts(&sample()));
        let paths: Vec<&str> = result
            .output_files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(paths, [ENTRY, FINDINGS, SIGNATURE]);
        let wanted = wanted(result, 10).expect("well-formed");
        assert_eq!(wanted[0].hash, crate::digest::Digest::of(b"{}").hex());
        assert_eq!(wanted[0].size, 2);
        assert!(wanted.iter().all(|w| w.inline.is_none()));
    }

    #[test]
    fn findings_are_optional_and_the_other_parts_are_not() {
        let mut bundle = sample();
        bundle.findings = None;
        let result = action_result(&parts(&bundle));
        assert_eq!(wanted(result.clone(), 10).expect("fine").len(), 2);
        let mut no_sig = result;
        no_sig.output_files.pop();
        assert!(wanted(no_sig, 10).unwrap_err().contains("entry.sig"));
    }

    #[test]
    fn malformed_results_are_refused() {
        let good = action_result(&parts(&sample()));
        let with = |edit: &dyn Fn(&mut ActionResult)| {
            let mut result = good.clone();
            edit(&mut result);
            wanted(result, 10)
        };
        assert!(with(&|r| r.output_files[0].path = "../x".into()).is_err());
        assert!(with(&|r| r.output_files[1].path = ENTRY.into()).is_err());
        assert!(with(&|r| r.output_files[0].digest = None).is_err());
        let hash = |h: String| {
            move |r: &mut ActionResult| {
                r.output_files[0].digest = Some(Digest {
                    hash: h.clone(),
                    size_bytes: 2,
                });
            }
        };
        assert!(with(&hash("../../etc/passwd".into())).is_err());
        assert!(with(&hash("A".repeat(64))).is_err());
        assert!(with(&|r| r.output_files[0].digest = Some(Digest::of(&[0; 11]))).is_err());
        let negative = |r: &mut ActionResult| {
            if let Some(d) = r.output_files[0].digest.as_mut() {
                d.size_bytes = -1;
            }
        };
        assert!(with(&negative).is_err());
    }

    #[test]
    fn what_the_server_sent_is_cut_in_messages() {
        let mut result = action_result(&parts(&sample()));
        result.output_files[0].path = "x".repeat(1 << 20);
        let why = wanted(result, 10).unwrap_err();
        assert!(why.len() < 200, "{}", why.len());
    }

    #[test]
    fn verify_checks_size_and_hash() {
        let result = action_result(&parts(&sample()));
        let entry = &wanted(result, 10).expect("fine")[0];
        assert!(verify("k", entry, b"{}").is_ok());
        assert!(matches!(
            verify("k", entry, b"{ }"),
            Err(RemoteError::Mismatch { .. })
        ));
        assert!(matches!(
            verify("k", entry, b"[]"),
            Err(RemoteError::Mismatch { .. })
        ));
    }

    #[test]
    fn the_parts_make_the_bundle_again() {
        let bundle = sample();
        let fetched = parts(&bundle)
            .into_iter()
            .rev()
            .map(|p| (p.path, p.bytes.to_vec()))
            .collect();
        assert_eq!(super::bundle(fetched), Some(bundle));
    }
}
