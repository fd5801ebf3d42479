//! Judging one Standard from the producer executions: metric, `per`, `scale`, declared
//! inputs, verdict, pin eligibility.

use super::{Measurement, StandardResult, Verdict, pin_eligible};
use crate::config::{Per, StandardDef};
use crate::planner::Plan;
use crate::runtime::RunOutput;

pub(crate) fn skipped(standard: &StandardDef, why: &str) -> StandardResult {
    StandardResult {
        name: standard.name.clone(),
        direction: standard.direction,
        limit: standard.limit,
        margin: (standard.margin > 0.0).then_some(standard.margin),
        measurement: Measurement::Skipped,
        value: None,
        verdict: None,
        reused_from: None,
        reused_evidence: None,
        pin_eligible: None,
        pin_target: None,
        producer: standard.producer.label(),
        execution: None,
        note: Some(why.to_owned()),
        findings: None,
        explained: Vec::new(),
    }
}

/// Read one Standard from the executions: metric, `per`, `scale`, verdict, pin eligibility.
pub(super) fn judge(
    standard: &StandardDef,
    reading: &crate::planner::Reading,
    plan: &Plan,
    outcomes: &crate::planner::Outcomes,
) -> StandardResult {
    let execution = &plan.executions[reading.execution];
    let mut result = skipped(standard, "");
    result.execution = Some(execution.label.clone());
    let fail = |mut result: StandardResult, note: String| {
        result.measurement = Measurement::Failed;
        result.note = Some(note);
        result
    };
    let outcome = &outcomes.executions[reading.execution];
    let output = match &outcome.result {
        Ok(output) => output,
        Err(e) => return fail(result, e.clone()),
    };
    if let Some(inputs) = &standard.inputs
        && let Some(why) = read_outside(&execution.producer, inputs, output)
    {
        return fail(result, why);
    }
    let Some(raw) = metric(output, &reading.metric) else {
        let emitted: Vec<&str> = output.metrics.iter().map(|m| m.name.as_str()).collect();
        return fail(
            result,
            format!(
                "producer {} emitted no metric {:?} (it emitted: {}); set `metric` to one of those",
                execution.producer,
                reading.metric,
                if emitted.is_empty() {
                    "none".to_owned()
                } else {
                    emitted.join(", ")
                }
            ),
        );
    };
    let (value, note) = match (&reading.per, &standard.per) {
        (Some((per_execution, per_metric)), Some(per)) => {
            let per_output = &outcomes.executions[*per_execution].result;
            match per_value(standard, per, raw, per_output, per_metric) {
                Ok(read) => read,
                Err(why) => return fail(result, why),
            }
        }
        _ => (raw, format!("{raw} {}", standard.metric)),
    };
    if !value.is_finite() {
        return fail(
            result,
            format!("the reading is not a finite number ({value})"),
        );
    }
    let measurement = if outcome.reused_from.is_some() {
        Measurement::Reused
    } else {
        Measurement::Measured
    };
    let mut result = assess(result, standard, value, measurement, note);
    result.reused_from = outcome.reused_from.clone();
    result.reused_evidence = outcome.provenance.clone();
    result
}

/// Why the producer's reads break the Standard's declared `inputs`, if they do.
fn read_outside(producer: &str, inputs: &[String], output: &RunOutput) -> Option<String> {
    let outside = crate::evidence::outside(&output.read_set, inputs);
    if outside.is_empty() {
        return None;
    }
    let shown: Vec<&str> = outside.iter().take(6).map(String::as_str).collect();
    Some(format!(
        "producer {producer} read outside the Standard's declared inputs ({}): {}{}; widen `inputs` or narrow the producer's config",
        inputs.join(", "),
        shown.join(", "),
        if outside.len() > shown.len() {
            format!(" and {} more", outside.len() - shown.len())
        } else {
            String::new()
        }
    ))
}

/// The value of the metric `name` in `output`, if the producer emitted it.
pub(super) fn metric(output: &RunOutput, name: &str) -> Option<f64> {
    output
        .metrics
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.value)
}

/// The reading of a Standard with `per`: `raw` per `denominator`, times `scale`. `None` when
/// there is nothing to divide by (a denominator that is not a positive, finite number).
pub(super) fn per_reading(raw: f64, denominator: f64, scale: f64) -> Option<f64> {
    (denominator.is_finite() && denominator > 0.0).then(|| raw / denominator * scale)
}

/// A `per` Standard's value and note, from `raw` and the metric `per_metric` of the
/// denominator's execution, or why there is none.
fn per_value(
    standard: &StandardDef,
    per: &Per,
    raw: f64,
    per_output: &Result<RunOutput, String>,
    per_metric: &str,
) -> Result<(f64, String), String> {
    let denominator = match per_output {
        Ok(per_output) => metric(per_output, per_metric),
        Err(e) => return Err(format!("the `per` denominator failed: {e}")),
    };
    let Some(d) = denominator else {
        return Err(format!("the `per` metric {per_metric:?} was not emitted"));
    };
    let Some(value) = per_reading(raw, d, standard.scale) else {
        return Err(format!(
            "nothing to divide by: the `per` denominator ({}) is {d}; check its pathspecs or metric",
            per.describe()
        ));
    };
    let what = match per {
        Per::Metric(m) => m.clone(),
        Per::Extent { kind, .. } => kind.as_str().to_owned(),
    };
    let scale = if standard.scale == 1.0 {
        String::new()
    } else {
        format!(" ×{}", standard.scale)
    };
    Ok((
        value,
        format!("{raw} {} per {d} {what}{scale}", standard.metric),
    ))
}

/// Fill in a reading's value, verdict and pin eligibility.
pub(crate) fn assess(
    mut result: StandardResult,
    standard: &StandardDef,
    value: f64,
    measurement: Measurement,
    note: String,
) -> StandardResult {
    let verdict = Verdict::judge(standard.direction, standard.limit, value);
    let target = pin_eligible(standard.direction, standard.limit, value, standard.margin);
    result.measurement = measurement;
    result.value = Some(value);
    result.verdict = Some(verdict);
    result.pin_eligible = Some(target.is_some());
    result.pin_target = target;
    result.note = Some(note);
    result
}
