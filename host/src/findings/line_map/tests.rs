use super::*;
use discern_tests::TestRepo;

fn mapped(map: &LineMap, lines: u32) -> Vec<Option<u32>> {
    (1..=lines).map(|n| map.old_line(n)).collect()
}

#[test]
fn hunk_headers_are_read_with_and_without_lengths() {
    let (a, b) = ("1".repeat(40), "2".repeat(40));
    let out = format!(
        "diff --git a/x b/x\nindex {a}..{b} 100644\n--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n@@ -5 +7 @@ fn x() {{\n-c\n+d\n@@ -9,2 +10,0 @@\n-e\n-f\ndiff --git a/y b/y\nindex {b}..{a}\n@@ -1 +1 @@\n-@@ -3 +3 @@\n+index x\n"
    );
    let maps = parse(out.as_bytes()).unwrap();
    let (a, b): (ObjectId, ObjectId) = (a.parse().unwrap(), b.parse().unwrap());
    assert_eq!(maps.len(), 2);
    // Changed lines that read like headers are content (`-`, `+`), not headers.
    assert_eq!(
        maps[&(b, a)].hunks,
        [Hunk {
            old_start: 1,
            old_len: 1,
            new_start: 1,
            new_len: 1
        }]
    );
    let map = &maps[&(a, b)];
    assert_eq!(
        map.hunks,
        [
            Hunk {
                old_start: 0,
                old_len: 0,
                new_start: 1,
                new_len: 2
            },
            Hunk {
                old_start: 5,
                old_len: 1,
                new_start: 7,
                new_len: 1
            },
            Hunk {
                old_start: 9,
                old_len: 2,
                new_start: 10,
                new_len: 0
            },
        ]
    );
    // Two added at the top; old 5 changed (new 7); old 9 and 10 deleted after new 10.
    assert_eq!(
        mapped(map, 12),
        [
            None,
            None,
            Some(1),
            Some(2),
            Some(3),
            Some(4),
            None,
            Some(6),
            Some(7),
            Some(8),
            Some(11),
            Some(12)
        ]
    );
    // Which change each line belongs to, on either side.
    let new_changes: Vec<Option<usize>> = (1..=12).map(|n| map.change_of_new(n)).collect();
    assert_eq!(
        new_changes[..8],
        [Some(0), Some(0), None, None, None, None, Some(1), None]
    );
    let old_changes: Vec<Option<usize>> = (1..=11).map(|n| map.change_of_old(n)).collect();
    assert_eq!(
        old_changes,
        [
            None,
            None,
            None,
            None,
            Some(1),
            None,
            None,
            None,
            Some(2),
            Some(2),
            None
        ]
    );
    assert!(matches!(
        parse(b"@@ -x +1 @@\n"),
        Err(LineMapError::Header(_))
    ));
    assert!(parse(b"").unwrap().is_empty());
}

/// Against git itself: every line git's diff keeps is mapped to where it was, and no line
/// it adds is mapped at all.
#[test]
fn unchanged_lines_map_to_where_they_were_in_git_s_diff() {
    let repo = TestRepo::new();
    let old = "// TODO\nfn a() {}\n// TODO\nfn b() {}\nfn c() {}\n";
    let new = "fn z() {}\n// TODO\nfn a() {}\n// TODO\n// TODO\nfn b() {}\n";
    let blob = |text: &str| -> ObjectId {
        repo.write("f", text);
        repo.git(&["hash-object", "-w", "f"])
            .trim()
            .parse()
            .unwrap()
    };
    let (old_id, new_id) = (blob(old), blob(new));
    repo.commit("one commit, for a repository to discover");
    let git = Repo::discover(repo.path()).unwrap();
    let map = line_map(&git, old_id, new_id).unwrap();
    let mapped = mapped(&map, 6);
    assert_eq!(
        mapped,
        [None, Some(1), Some(2), Some(3), None, Some(4)],
        "the TODO added is the second of the pair, as git's diff shows it"
    );
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
        (old.lines().collect(), new.lines().collect());
    for (n, old_line) in mapped.iter().enumerate() {
        if let Some(o) = old_line {
            assert_eq!(new_lines[n], old_lines[*o as usize - 1]);
        }
    }
    assert_eq!(
        line_map(&git, old_id, old_id).unwrap(),
        LineMap::unchanged()
    );
}

/// The tree diff in runs agrees with a diff of each pair of blobs, for paths a pathspec
/// would read as globs, a renamed file, and a file git calls binary.
#[test]
fn maps_of_a_tree_diff_agree_with_each_blob_diff() {
    let repo = TestRepo::new();
    let names = ["a.rs", "dir/b c.rs", "[x].rs", "*.rs", "bin.dat", "old.rs"];
    for (i, name) in names.iter().enumerate() {
        let text = format!("// TODO\nfn f{i}() {{}}\n// TODO\nfn g() {{}}\n");
        repo.write(
            name,
            text.replace("fn g", if *name == "bin.dat" { "\0fn g" } else { "fn g" }),
        );
    }
    let base = repo.commit("base");
    for name in &names[..5] {
        let text = std::fs::read_to_string(repo.path().join(name)).unwrap();
        repo.write(name, format!("// TODO\n{text}").replace("fn g", "fn h"));
    }
    repo.git(&["mv", "old.rs", "new.rs"]);
    repo.write(
        "new.rs",
        "// TODO\nfn f5() {}\n// TODO\n// TODO\nfn g() {}\n",
    );
    let head = repo.commit("head");
    let git = Repo::discover(repo.path()).unwrap();
    let id = |rev: String| -> ObjectId { repo.git(&["rev-parse", &rev]).trim().parse().unwrap() };
    let files: Vec<Versions> = names
        .iter()
        .map(|name| {
            let new_path = if *name == "old.rs" { "new.rs" } else { name };
            Versions {
                old_path: name.to_string(),
                new_path: new_path.to_owned(),
                old: id(format!("{base}:{name}")),
                new: id(format!("{head}:{new_path}")),
            }
        })
        .collect();
    let trees = (
        id(format!("{base}^{{tree}}")),
        id(format!("{head}^{{tree}}")),
    );
    let maps = line_maps(&git, trees, &files).unwrap();
    assert_eq!(maps.len(), names.len());
    // The files that kept their path come from the tree diff itself.
    let kept: Vec<&str> = names[..5].to_vec();
    let from_trees = tree_maps(&git, trees, &kept).unwrap();
    assert_eq!(from_trees.len(), kept.len());
    for (pair, map) in &from_trees {
        assert_eq!(&maps[pair], map);
    }
    for file in &files {
        let alone = line_map(&git, file.old, file.new).unwrap();
        assert_eq!(maps[&(file.old, file.new)], alone, "{}", file.new_path);
        assert_ne!(alone, LineMap::unchanged(), "{}", file.new_path);
    }
}
