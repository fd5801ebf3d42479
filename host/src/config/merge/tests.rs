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

#[test]
fn from_the_trunk_a_loosening_the_trunk_landed_takes_the_trunks_value() {
    // The branch pinned its gain 10 -> 8; the trunk landed an approved loosening 10 -> 12.
    let merged = merge_limits_from_trunk(Some(&config(10.0)), &config(8.0), &config(12.0));
    assert_eq!(merged.map(|m| limit(&m)), Ok(12.0));
    // The branch left it alone: the trunk's.
    let merged = merge_limits_from_trunk(Some(&config(10.0)), &config(10.0), &config(12.0));
    assert_eq!(merged.map(|m| limit(&m)), Ok(12.0));
    // Between branches it stays a conflict for the owner.
    assert!(merge_limits(Some(&config(10.0)), &config(8.0), &config(12.0)).is_err());
    // The branch's own loosening is still the owner's to approve against the merged limit.
    assert!(merge_limits_from_trunk(Some(&config(10.0)), &config(11.0), &config(12.0)).is_err());
    assert!(merge_limits_from_trunk(Some(&config(10.0)), &config(11.0), &config(9.0)).is_err());
    // Tightenings on both sides: the tighter, as between peers.
    let merged = merge_limits_from_trunk(Some(&config(10.0)), &config(8.0), &config(9.0));
    assert_eq!(merged.map(|m| limit(&m)), Ok(8.0));
}

#[test]
fn from_the_trunk_the_result_is_never_looser_than_the_trunk() {
    let values = [1.0, 3.0, 5.0, 7.0, 9.0];
    for base in values {
        for ours in values {
            for theirs in values {
                let merged =
                    merge_limits_from_trunk(Some(&config(base)), &config(ours), &config(theirs));
                if let Ok(merged) = merged {
                    assert!(limit(&merged) <= theirs, "{base} {ours} {theirs}");
                }
            }
        }
    }
}
