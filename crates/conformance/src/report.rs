//! Results: per check PASS, FAIL (with the evidence) or SKIP (with the reason), and the
//! recorder the protocol modules write them into.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use crate::checks::{Check, Keyword, Revision, Spec};
use crate::safe::Redactor;

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
    /// At least one broke a MUST: the first one's evidence and how many failed in all.
    Fail {
        /// The first failure.
        evidence: Evidence,
        /// How many observations failed.
        count: usize,
    },
    /// At least one missed a SHOULD, or looked wrong where a conformant server may still do so
    /// ([`Recorder::warn`]): reported, and fails the run only with `--strict`.
    Warn {
        /// The first one.
        evidence: Evidence,
        /// How many observations warned.
        count: usize,
    },
    /// Nothing could be observed; the reason.
    Skip(String),
}

impl Outcome {
    /// "PASS", "FAIL", "WARN" or "SKIP".
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail { .. } => "FAIL",
            Outcome::Warn { .. } => "WARN",
            Outcome::Skip(_) => "SKIP",
        }
    }

    /// The evidence of a failure or a warning.
    pub fn evidence(&self) -> Option<(&Evidence, usize)> {
        match self {
            Outcome::Fail { evidence, count } | Outcome::Warn { evidence, count } => Some((evidence, *count)),
            Outcome::Pass | Outcome::Skip(_) => None,
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
    /// Whether the user's expected-failures file lists the check.
    pub expected: bool,
}

impl Finding {
    /// Whether this finding fails the run by itself: a FAIL (with `strict`, a WARN too) that the
    /// expected-failures file does not list.
    pub fn fails_run(&self, strict: bool) -> bool {
        !self.expected && self.is_failure(strict)
    }

    /// A FAIL, or with `strict` a WARN.
    pub fn is_failure(&self, strict: bool) -> bool {
        match self.outcome {
            Outcome::Fail { .. } => true,
            Outcome::Warn { .. } => strict,
            Outcome::Pass | Outcome::Skip(_) => false,
        }
    }

    /// A check the expected-failures file lists that now passes: the file is stale.
    pub fn stale(&self) -> bool {
        self.expected && self.outcome == Outcome::Pass
    }
}

/// How a run ends, for a person and for CI (the exit status of `verify --conformance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Something was measured and nothing failed that was not expected to: exit 0.
    Conformant,
    /// A MUST failed (with `--strict`, a SHOULD or a warning too), not listed as expected:
    /// exit 1.
    Failed,
    /// Nothing could be measured: every check skipped (a server that rate-limits everything,
    /// one that needs credentials the run lacks, bounds spent at once): exit 3, so CI does not
    /// read it as conformant.
    NothingMeasured,
    /// Checks the expected-failures file lists now pass: remove them from it: exit 4.
    StaleExpectations,
}

impl Verdict {
    /// The exit status (docs/conformance.md, "Exit status").
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Conformant => 0,
            Verdict::Failed => 1,
            Verdict::NothingMeasured => 3,
            Verdict::StaleExpectations => 4,
        }
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The URL checked.
    pub url: String,
    /// The requirement set checked against: a spec at one revision.
    pub revision: Revision,
    /// One finding per check of the requirement set, in order.
    pub findings: Vec<Finding>,
    /// Requests sent (every redirect hop counted).
    pub requests: usize,
    /// Wall time.
    pub elapsed: Duration,
    /// Notes on the run itself (budget spent, Retry-After honoured, tools invoked).
    pub notes: Vec<String>,
    /// Why the run got no further than what needs no credentials (OTC's `/health`): the server
    /// refused the checker with a 401 or 403. Such a run measured nothing of what matters, so
    /// its verdict is [`Verdict::NothingMeasured`] unless something failed.
    pub locked_out: Option<String>,
}

impl Report {
    /// The spec checked.
    pub fn spec(&self) -> Spec {
        self.revision.spec()
    }

    /// The failures of checks at `keyword` (a missed SHOULD is a WARN).
    pub fn failures(&self, keyword: Keyword) -> usize {
        self.findings
            .iter()
            .filter(|f| f.check.keyword == keyword && f.outcome.evidence().is_some())
            .count()
    }

    /// Whether the run fails: a MUST failed, or (`strict`) a SHOULD or a warning did, and the
    /// expected-failures file does not list it.
    pub fn failed(&self, strict: bool) -> bool {
        self.findings.iter().any(|f| f.fails_run(strict))
    }

    /// How the run ends.
    pub fn verdict(&self, strict: bool) -> Verdict {
        if self.failed(strict) {
            Verdict::Failed
        } else if self.findings.iter().any(Finding::stale) {
            Verdict::StaleExpectations
        } else if self.locked_out.is_some() || self.findings.iter().all(|f| matches!(f.outcome, Outcome::Skip(_))) {
            Verdict::NothingMeasured
        } else {
            Verdict::Conformant
        }
    }

    /// What the verdict means, in a sentence (printed after the summary).
    pub fn verdict_line(&self, strict: bool) -> String {
        let stale: Vec<&str> = self.findings.iter().filter(|f| f.stale()).map(|f| f.check.id).collect();
        let expected = self
            .findings
            .iter()
            .filter(|f| f.expected && f.is_failure(strict))
            .count();
        let excused = if expected > 0 {
            format!(" ({expected} failures listed as expected)")
        } else {
            String::new()
        };
        match self.verdict(strict) {
            Verdict::Conformant => format!("result: conformant to what could be observed{excused} (exit 0)"),
            Verdict::Failed => format!(
                "result: not conformant: {} unexpected failures{excused} (exit 1)",
                self.findings.iter().filter(|f| f.fails_run(strict)).count()
            ),
            Verdict::NothingMeasured => match &self.locked_out {
                Some(why) => format!(
                    "result: nothing could be measured past what needs no credentials ({why}); this is not a pass (exit 3)"
                ),
                None => "result: nothing could be measured: every check was skipped (see why above); this is not a pass (exit 3)".to_owned(),
            },
            Verdict::StaleExpectations => format!(
                "result: listed as expected failures but passing: {}; remove them from the expected-failures file (exit 4)",
                stale.join(", ")
            ),
        }
    }

    /// The finding of the check `id`.
    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.check.id == id)
    }

    /// How many findings have `label` ("PASS", "FAIL", "WARN", "SKIP").
    pub fn count(&self, label: &str) -> usize {
        self.findings.iter().filter(|f| f.outcome.label() == label).count()
    }

    /// Every string of the report with the run's credentials replaced and made safe to print
    /// ([`crate::safe`]).
    pub(crate) fn scrub(&mut self, redactor: &Redactor) {
        self.url = redactor.report(&self.url);
        for note in self.notes.iter_mut().chain(&mut self.locked_out) {
            *note = redactor.report(note);
        }
        for finding in &mut self.findings {
            match &mut finding.outcome {
                Outcome::Pass => {}
                Outcome::Skip(reason) => *reason = redactor.report(reason),
                Outcome::Fail { evidence, .. } | Outcome::Warn { evidence, .. } => {
                    for field in [&mut evidence.request, &mut evidence.answer, &mut evidence.found] {
                        *field = redactor.report(field);
                    }
                }
            }
        }
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
    warnings: Vec<Evidence>,
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

    /// One observation looks wrong, but a conformant server may answer so (what the spec only
    /// recommends, or what it leaves open): a WARN unless something failed.
    pub fn warn(&mut self, check: &Check, evidence: Evidence) {
        self.state(check).warnings.push(evidence);
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

    /// The findings for `checks`, in their order; those of `expected` are marked so. A failed
    /// SHOULD is a WARN.
    pub fn finish(mut self, checks: &[&'static Check], expected: &[String]) -> Vec<Finding> {
        checks
            .iter()
            .map(|&check| {
                let state = self.states.remove(check.id).unwrap_or_default();
                let (failures, warnings) = match check.keyword {
                    Keyword::Must => (state.failures, state.warnings),
                    Keyword::Should => (Vec::new(), [state.failures, state.warnings].concat()),
                };
                let outcome = if let Some(evidence) = failures.first() {
                    Outcome::Fail {
                        evidence: evidence.clone(),
                        count: failures.len(),
                    }
                } else if let Some(evidence) = warnings.first() {
                    Outcome::Warn {
                        evidence: evidence.clone(),
                        count: warnings.len(),
                    }
                } else if state.passes > 0 {
                    Outcome::Pass
                } else {
                    Outcome::Skip(
                        state
                            .skip
                            .unwrap_or_else(|| "nothing the server offered let this be observed".to_owned()),
                    )
                };
                Finding {
                    check,
                    outcome,
                    expected: expected.iter().any(|id| id == check.id),
                }
            })
            .collect()
    }
}
