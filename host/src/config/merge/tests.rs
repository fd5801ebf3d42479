use super::*;

fn config(limit: f64) -> String {
    format!(
        "# a comment that survives\n[standards.todo]\ndirection = \"down\"\nlimit = {limit}\nproducer = \"builtin:pattern\"\nconfig = {{ pattern = \"TODO\", paths = [\"src/**\"] }}\nmetric = \"matches\"\n"
    )
}

fn limit(text: &str) -> f64 {
    Config::parse(text).unwrap().standards[0].limit
}

#[test]
fn both_tightened_takes_the_tighter_and_one_side_takes_that_side() {
    let merged = merge_limits(Some(&config(10.0)), &config(8.0), &config(7.0)).unwrap();
    assert_eq!(limit(&merged), 7.0);
    assert!(merged.starts_with("# a comment that survives"));
    let merged = merge_limits(Some(&config(10.0)), &config(10.0), &config(7.0)).unwrap();
    assert_eq!(limit(&merged), 7.0);
}

#[test]
fn a_loosening_against_a_tightening_is_a_conflict_with_its_reason() {
    let err = merge_limits(Some(&config(5.0)), &config(6.0), &config(4.0)).unwrap_err();
    assert!(
        err.to_string().contains("loosens its ceiling 5 -> 6"),
        "{err}"
    );
}

#[test]
fn anything_but_limits_is_not_merged() {
    let other = config(5.0).replace("TODO", "FIXME");
    assert_eq!(
        merge_limits(Some(&config(5.0)), &config(4.0), &other),
        Err(LimitConflict::NotLimitsOnly)
    );
}

#[test]
fn the_merge_is_symmetric_and_never_looser_than_either_side() {
    let values = [1.0, 3.0, 5.0, 7.0, 9.0];
    for base in values {
        for ours in values {
            for theirs in values {
                let ab = merge_limits(Some(&config(base)), &config(ours), &config(theirs));
                let ba = merge_limits(Some(&config(base)), &config(theirs), &config(ours));
                let (ab_limit, ba_limit) = (
                    ab.as_ref().ok().map(|m| limit(m)),
                    ba.as_ref().ok().map(|m| limit(m)),
                );
                assert_eq!(ab_limit, ba_limit, "{base} {ours} {theirs}");
                if let Ok(merged) = ab {
                    let merged = limit(&merged);
                    assert!(merged <= ours && merged <= theirs, "{base} {ours} {theirs}");
                }
            }
        }
    }
}
