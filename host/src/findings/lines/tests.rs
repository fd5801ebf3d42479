use super::*;

fn wanted(lines: &[u32]) -> BTreeSet<u32> {
    lines.iter().copied().collect()
}

#[test]
fn whitespace_is_normalized_and_words_are_not() {
    assert_eq!(&*normalized(b"  // TODO   fix\t\r"), b"// TODO fix");
    assert_eq!(&*normalized(b"// TODO fix"), b"// TODO fix");
    assert_eq!(&*normalized(b"a\tb"), b"a b");
    assert_eq!(&*normalized(b"   "), b"");
    assert_ne!(normalized(b"// TODO fix"), normalized(b"// TODO fixed"));
}

#[test]
fn identical_lines_are_ranked_in_file_order_whatever_their_indentation() {
    let file = b"// TODO\nfn a() {}\n    // TODO\n// TODO  \nfn b() {}\n";
    let found = lines(file, &wanted(&[1, 2, 3, 4, 5]));
    let ranks: Vec<u32> = (1..=5).map(|n| found[&n].rank).collect();
    assert_eq!(ranks, [0, 0, 1, 2, 0]);
    assert_eq!(found[&1].content, found[&3].content);
    assert_eq!(found[&1].content, found[&4].content);
    assert_ne!(found[&1].content, found[&2].content);
}

#[test]
fn lines_follow_git_grep_no_phantom_line_after_the_final_newline() {
    assert_eq!(lines(b"a\nb\n", &wanted(&[2, 3])).len(), 1);
    assert_eq!(lines(b"a\nb", &wanted(&[2])).len(), 1);
    assert_eq!(lines(b"a\n\n", &wanted(&[2])).len(), 1);
    assert!(lines(b"", &wanted(&[1])).is_empty());
    // `\r` stays on its line, and normalization drops it.
    let crlf = lines(b"x\r\nx\n", &wanted(&[1, 2]));
    assert_eq!(crlf[&2].rank, 1);
}

/// Against the definition, counted the slow way: every line normalized, every earlier one
/// compared.
#[test]
fn ranks_agree_with_counting_every_earlier_line() {
    let texts = [
        "// TODO\n\n  // TODO\n//  TODO\n\n/x/\n// TODO\n",
        "a\n\n\n \t\na b\na  b\nab\n",
        "x\r\nx\n x \nxx\n",
        "/* a */\n/* b */\n/* a */\n/*a*/",
    ];
    for text in texts {
        let all: Vec<&[u8]> = text
            .strip_suffix('\n')
            .unwrap_or(text)
            .split('\n')
            .map(str::as_bytes)
            .collect();
        let numbers: BTreeSet<u32> = (1..=all.len() as u32).collect();
        let found = lines(text.as_bytes(), &numbers);
        for (i, line) in all.iter().enumerate() {
            let rank = all[..i]
                .iter()
                .filter(|earlier| normalized(earlier) == normalized(line))
                .count() as u32;
            let digest: Content = Sha256::digest(&*normalized(line)).into();
            let one = &found[&(i as u32 + 1)];
            assert_eq!(
                (one.rank, one.content),
                (rank, digest),
                "{text:?} line {}",
                i + 1
            );
            // Asked alone, a line has the same rank.
            let alone = lines(text.as_bytes(), &BTreeSet::from([i as u32 + 1]));
            assert_eq!(alone[&(i as u32 + 1)], *one);
        }
    }
}
