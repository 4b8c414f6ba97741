//! Results: per check PASS, FAIL (with the evidence) or SKIP (with the reason), and the
//! recorder the protocol modules write them into.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use crate::checks::{Check, Keyword, Spec};

/// What was sent and what came back, for a failure.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Evidence {
    /// The request, e.g. `POST http://host/nact/tools/x:invoke {"input_parameters":[]}`.
    pub request: String,
    /// The status of the answer; none when no answer came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The start of the answer (cleaned, on one line), or why there was none.
    pub answer: String,
    /// What is wrong with it.
    pub found: String,
}

impl Evidence {
    /// Evidence about `item`, one element of the 200 answer to `request` (a listed tool).
    pub(crate) fn item(request: &str, item: &serde_json::Value, found: String) -> Self {
        Self {
            request: request.to_owned(),
            status: Some(200),
            answer: crate::probe::excerpt(item.to_string().as_bytes()),
            found,
        }
    }
}

/// A check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every observation met the statement.
    Pass,
    /// At least one did not: the first one's evidence and how many failed in all.
    Fail {
        /// The first failure.
        evidence: Evidence,
        /// How many observations failed.
        count: usize,
    },
    /// Nothing could be observed; the reason.
    Skip(String),
}

impl Outcome {
    /// "PASS", "FAIL" or "SKIP".
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail { .. } => "FAIL",
            Outcome::Skip(_) => "SKIP",
        }
    }
}

/// One check and its outcome.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The statement.
    pub check: &'static Check,
    /// The result.
    pub outcome: Outcome,
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The URL checked.
    pub url: String,
    /// The protocol checked.
    pub spec: Spec,
    /// One finding per check of the spec, in order.
    pub findings: Vec<Finding>,
    /// Requests sent.
    pub requests: usize,
    /// Wall time.
    pub elapsed: Duration,
    /// Notes on the run itself (budget spent, Retry-After honoured, tools invoked).
    pub notes: Vec<String>,
}

impl Report {
    /// The failures of checks at `keyword`.
    pub fn failures(&self, keyword: Keyword) -> usize {
        self.findings
            .iter()
            .filter(|f| f.check.keyword == keyword && matches!(f.outcome, Outcome::Fail { .. }))
            .count()
    }

    /// Whether the run fails: a MUST failed, or (`strict`) a SHOULD did.
    pub fn failed(&self, strict: bool) -> bool {
        self.failures(Keyword::Must) > 0 || (strict && self.failures(Keyword::Should) > 0)
    }

    /// The finding of the check `id`.
    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.check.id == id)
    }

    /// How many findings have `label` ("PASS", "FAIL", "SKIP").
    pub fn count(&self, label: &str) -> usize {
        self.findings.iter().filter(|f| f.outcome.label() == label).count()
    }
}

/// What the checks observed so far, per check id.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    states: HashMap<&'static str, State>,
}

#[derive(Debug, Default)]
struct State {
    passes: usize,
    failures: Vec<Evidence>,
    skip: Option<String>,
}

impl Recorder {
    fn state(&mut self, check: &Check) -> &mut State {
        self.states.entry(check.id).or_default()
    }

    /// One observation met `check`.
    pub fn pass(&mut self, check: &Check) {
        self.state(check).passes += 1;
    }

    /// One observation broke `check`.
    pub fn fail(&mut self, check: &Check, evidence: Evidence) {
        self.state(check).failures.push(evidence);
    }

    /// `check` could not be observed here; the first reason is kept (for a check that
    /// nothing passed or failed).
    pub fn skip(&mut self, check: &Check, reason: impl Into<String>) {
        let state = self.state(check);
        if state.skip.is_none() {
            state.skip = Some(reason.into());
        }
    }

    /// Pass or fail `check` by `ok`.
    pub fn judge(&mut self, check: &Check, ok: bool, evidence: impl FnOnce() -> Evidence) {
        if ok {
            self.pass(check);
        } else {
            self.fail(check, evidence());
        }
    }

    /// The findings for `checks`, in their order.
    pub fn finish(mut self, checks: &[&'static Check]) -> Vec<Finding> {
        checks
            .iter()
            .map(|&check| {
                let state = self.states.remove(check.id).unwrap_or_default();
                let count = state.failures.len();
                let outcome = if let Some(evidence) = state.failures.into_iter().next() {
                    Outcome::Fail { evidence, count }
                } else if state.passes > 0 {
                    Outcome::Pass
                } else {
                    Outcome::Skip(
                        state
                            .skip
                            .unwrap_or_else(|| "nothing the server offered let this be observed".to_owned()),
                    )
                };
                Finding { check, outcome }
            })
            .collect()
    }
}
