//! The allowed-signers file (git's and OpenSSH's format, `ssh-keygen(1)` "ALLOWED SIGNERS"),
//! parsed when read: `principals [options] keytype base64-key [comment]` a line. A malformed
//! line refuses the whole file with its number and an example of a right one, so a pasted
//! `.pub` file is named for what it is instead of reading as "key not listed".

use std::time::{SystemTime, UNIX_EPOCH};

use ssh_key::PublicKey;

/// A line as it should be written.
pub(crate) const EXAMPLE: &str = "owner@example.com namespaces=\"discern-approval\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI… owner's laptop";

/// One usable line.
#[derive(Debug, Clone)]
pub(crate) struct AllowedSigner {
    /// The principals field as written (comma-separated patterns).
    pub principals: String,
    pub key: PublicKey,
    /// `namespaces="…"`: the signature namespaces this key may sign for (`None`: any).
    pub namespaces: Option<String>,
    /// `cert-authority`: the key signs certificates; discern accepts plain keys only.
    pub cert_authority: bool,
    pub valid_after: Option<u64>,
    pub valid_before: Option<u64>,
}

/// Why the file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "line {line} of {} is not an allowed-signers line ({why}); write `principal [options] keytype key`, for example: {EXAMPLE}",
    .file.as_deref().map_or("the allowed-signers file".to_owned(), |f| format!("the allowed-signers file {f}"))
)]
pub(crate) struct Malformed {
    /// The file's path in the repository, where the caller knows it.
    pub file: Option<String>,
    pub line: usize,
    pub why: String,
}

impl Malformed {
    /// The same refusal, naming the file it is in.
    pub(crate) fn in_file(mut self, path: &str) -> Self {
        self.file = Some(path.to_owned());
        self
    }
}

/// Every line of `text` (blank lines and `#` comments skipped).
pub(crate) fn parse(text: &str) -> Result<Vec<AllowedSigner>, Malformed> {
    let mut signers = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let malformed = |why: &str| Malformed {
            file: None,
            line: index + 1,
            why: why.to_owned(),
        };
        signers.push(parse_line(line).map_err(|why| malformed(&why))?);
    }
    Ok(signers)
}

fn parse_line(line: &str) -> Result<AllowedSigner, String> {
    let fields = tokens(line)?;
    let mut fields = fields.iter().map(String::as_str);
    let principals = fields.next().ok_or("it is empty")?;
    if is_key_type(principals) {
        return Err("it starts with a key type: the principal (an email, say) comes first, as in a pasted .pub file it does not".to_owned());
    }
    let mut next = fields.next().ok_or("it names no key")?;
    let mut options = Options::default();
    if !is_key_type(next) {
        options = Options::parse(next)?;
        next = fields.next().ok_or("it names no key after its options")?;
    }
    if !is_key_type(next) {
        return Err(format!("{next:?} is not an SSH key type"));
    }
    let data = fields.next().ok_or("its key has no data")?;
    let key = PublicKey::from_openssh(&format!("{next} {data}"))
        .map_err(|e| format!("its key cannot be read: {e}"))?;
    Ok(AllowedSigner {
        principals: principals.to_owned(),
        key,
        namespaces: options.namespaces,
        cert_authority: options.cert_authority,
        valid_after: options.valid_after,
        valid_before: options.valid_before,
    })
}

/// The options field: `cert-authority`, `namespaces="…"`, `valid-after="…"`, `valid-before="…"`.
#[derive(Debug, Default)]
struct Options {
    namespaces: Option<String>,
    cert_authority: bool,
    valid_after: Option<u64>,
    valid_before: Option<u64>,
}

impl Options {
    fn parse(field: &str) -> Result<Self, String> {
        let mut options = Self::default();
        for option in split_options(field) {
            let (name, value) = match option.split_once('=') {
                Some((name, value)) => (name, Some(value.trim_matches('"'))),
                None => (option.as_str(), None),
            };
            match (name.to_ascii_lowercase().as_str(), value) {
                ("cert-authority", None) => options.cert_authority = true,
                ("namespaces", Some(v)) => options.namespaces = Some(v.to_owned()),
                ("valid-after", Some(v)) => options.valid_after = Some(timestamp(v)?),
                ("valid-before", Some(v)) => options.valid_before = Some(timestamp(v)?),
                _ => return Err(format!("unknown option {option:?}")),
            }
        }
        Ok(options)
    }
}

/// Commas outside quotes separate options.
fn split_options(field: &str) -> Vec<String> {
    let (mut parts, mut current, mut quoted) = (Vec::new(), String::new(), false);
    for c in field.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    parts
}

/// Whitespace-separated fields, a double-quoted stretch kept whole.
fn tokens(line: &str) -> Result<Vec<String>, String> {
    let (mut fields, mut current, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    fields.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if quoted {
        return Err("a quote is not closed".to_owned());
    }
    if !current.is_empty() {
        fields.push(current);
    }
    Ok(fields)
}

fn is_key_type(field: &str) -> bool {
    field.starts_with("ssh-")
        || field.starts_with("ecdsa-sha2-")
        || field.starts_with("sk-ssh-")
        || field.starts_with("sk-ecdsa-")
}

/// `YYYYMMDD[HHMM[SS]]` (UTC with a `Z`, as discern reads every one), as seconds since 1970.
fn timestamp(text: &str) -> Result<u64, String> {
    let digits = text.trim_end_matches(['Z', 'z']);
    let bad = || format!("{text:?} is not a time (YYYYMMDD[HHMM[SS]])");
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let num = |range: std::ops::Range<usize>| digits.get(range).map_or(Ok(0), str::parse::<u64>);
    let (y, m, d) = (num(0..4), num(4..6), num(6..8));
    let (hh, mm, ss) = (num(8..10), num(10..12), num(12..14));
    let [y, m, d, hh, mm, ss] = [y, m, d, hh, mm, ss].map(|v| v.map_err(|_| bad()));
    let (y, m, d) = (y?, m?, d?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return Err(bad());
    }
    Ok(days_since_epoch(y, m, d) * 86_400 + hh? * 3600 + mm? * 60 + ss?)
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn days_since_epoch(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl AllowedSigner {
    /// Whether this line lets its key sign for `namespace` now.
    pub(crate) fn allows(&self, namespace: &str) -> bool {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok();
        self.allows_at(namespace, now.map(|d| d.as_secs()))
    }

    /// Whether this line lets its key sign for `namespace` at `now` (seconds since the epoch;
    /// `None`: the clock reads before 1970). A line with a validity window allows nothing
    /// when the time cannot be told.
    fn allows_at(&self, namespace: &str, now: Option<u64>) -> bool {
        let within = |bound: Option<u64>, inside: fn(u64, u64) -> bool| {
            bound.is_none_or(|t| now.is_some_and(|now| inside(now, t)))
        };
        !self.cert_authority
            && self
                .namespaces
                .as_deref()
                .is_none_or(|list| pattern_list(list, namespace))
            && within(self.valid_after, |now, t| now >= t)
            && within(self.valid_before, |now, t| now <= t)
    }
}

/// OpenSSH's pattern lists: comma-separated, `*` and `?` wildcards, `!` negates and wins.
pub(crate) fn pattern_list(list: &str, text: &str) -> bool {
    let mut matched = false;
    for pattern in list.split(',').map(str::trim) {
        match pattern.strip_prefix('!') {
            Some(negated) if wildcard(negated, text) => return false,
            Some(_) => {}
            None => matched |= wildcard(pattern, text),
        }
    }
    matched
}

fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKG8qfS2Rdk3i6tiPHmAhRrDLtrzWZ5pXIpK0HOPeEmH";

    #[test]
    fn lines_with_and_without_options_are_read() {
        let text = format!(
            "# the owner\n\nowner@example.com {KEY} laptop\nci@example.com namespaces=\"discern-evidence\",valid-after=\"20200101\" {KEY}\n"
        );
        let signers = parse(&text).expect("parses");
        assert_eq!(signers.len(), 2);
        assert!(signers[0].allows("discern-approval"));
        assert!(!signers[1].allows("discern-approval"));
        assert!(signers[1].allows("discern-evidence"));
    }

    #[test]
    fn a_validity_window_allows_only_within_it_and_nothing_when_the_time_cannot_be_told() {
        let text = format!(
            "open@example.com {KEY}\nwindow@example.com valid-after=\"20200101\",valid-before=\"20300101\" {KEY}\nexpiring@example.com valid-before=\"20300101\" {KEY}\n"
        );
        let signers = parse(&text).expect("parses");
        let (open, window, expiring) = (&signers[0], &signers[1], &signers[2]);
        let (before, inside, after) = (1_500_000_000, 1_700_000_000, 1_950_000_000);
        assert!(window.allows_at("discern-approval", Some(inside)));
        assert!(!window.allows_at("discern-approval", Some(before)));
        assert!(!window.allows_at("discern-approval", Some(after)));
        assert!(!window.allows_at("discern-approval", None));
        // An expiry alone is no more to be trusted when the time cannot be told.
        assert!(expiring.allows_at("discern-approval", Some(inside)));
        assert!(!expiring.allows_at("discern-approval", Some(after)));
        assert!(!expiring.allows_at("discern-approval", None));
        assert!(open.allows_at("discern-approval", None));
    }

    #[test]
    fn a_pasted_public_key_is_refused_with_its_line() {
        let err = parse(&format!("\n{KEY} owner@laptop\n")).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains("for example"), "{err}");
    }

    #[test]
    fn a_malformed_line_is_named_with_its_file_and_number() {
        let err = parse(&format!(
            "# the owner\nowner@example.com {KEY}\nowner@example.com ssh-ed25519\n"
        ))
        .unwrap_err()
        .in_file(".discern/allowed_signers");
        assert_eq!(err.line, 3);
        let text = err.to_string();
        assert!(
            text.starts_with("line 3 of the allowed-signers file .discern/allowed_signers is not an allowed-signers line (its key has no data)"),
            "{text}"
        );
    }

    #[test]
    fn garbage_keys_and_options_are_refused() {
        assert!(parse("owner ssh-ed25519 notbase64").is_err());
        assert!(parse(&format!("owner sudo=\"yes\" {KEY}")).is_err());
        assert!(parse(&format!("owner namespaces=\"a {KEY}")).is_err());
    }

    #[test]
    fn pattern_lists_match_as_openssh_does() {
        assert!(pattern_list("discern-*", "discern-approval"));
        assert!(!pattern_list("git,file", "discern-approval"));
        assert!(!pattern_list("*,!discern-approval", "discern-approval"));
        assert!(pattern_list("d?scern-approval", "discern-approval"));
    }

    #[test]
    fn timestamps_are_days_and_seconds_since_1970() {
        assert_eq!(timestamp("19700102"), Ok(86_400));
        assert_eq!(timestamp("20000301"), Ok(951_868_800));
        assert_eq!(timestamp("202001011200Z"), Ok(1_577_880_000));
        assert!(timestamp("2020").is_err());
    }
}
