//! A report as text (for people), JSON and JUnit XML (for CI).
//!
//! Every string that may come from the server under test goes through [`safe::text`] here
//! again (a [`Report`] from [`crate::run`] is already scrubbed; one built otherwise is not), so
//! each format is safe for a terminal and valid for its parser whatever the server sent.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::checks::Keyword;
use crate::report::{Evidence, Finding, Outcome, Report};
use crate::safe;

fn summary(report: &Report) -> String {
    format!(
        "{} checks: {} pass, {} fail, {} warn, {} skip; {} requests in {:.1} s",
        report.findings.len(),
        report.count("PASS"),
        report.count("FAIL"),
        report.count("WARN"),
        report.count("SKIP"),
        report.requests,
        report.elapsed.as_secs_f64()
    )
}

fn place(finding: &Finding) -> String {
    let check = finding.check;
    let mark = if check.spec == crate::Spec::Otc { "" } else { "§" };
    format!("{} {mark}{}", check.spec, check.section)
}

fn heading(report: &Report) -> String {
    format!(
        "Conformance of {} to {} ({}), requirement set {}",
        safe::text(&report.url),
        report.spec(),
        report.spec().document(),
        report.revision
    )
}

/// What the expected-failures file says of a finding, if anything.
fn expectation(finding: &Finding) -> Option<&'static str> {
    if !finding.expected {
        return None;
    }
    Some(match finding.outcome {
        Outcome::Pass => "listed as an expected failure, but passes: remove it from the file",
        Outcome::Fail { .. } | Outcome::Warn { .. } => "expected: listed in the expected-failures file",
        Outcome::Skip(_) => "listed as an expected failure; not observed this time",
    })
}

/// Text for a terminal: one line per check, the evidence under each failure or warning, the
/// summary and what the exit status will mean.
pub fn text(report: &Report, strict: bool) -> String {
    let mut out = format!("{}\n\n", heading(report));
    let width = report
        .findings
        .iter()
        .map(|f| place(f).chars().count())
        .max()
        .unwrap_or(0);
    for finding in &report.findings {
        let check = finding.check;
        let _ = write!(
            out,
            "{}  {:<width$}  {:<6}  {}",
            finding.outcome.label(),
            place(finding),
            check.keyword.to_string(),
            check.id
        );
        if let Some(said) = expectation(finding) {
            let _ = write!(out, "  ({said})");
        }
        out.push('\n');
        match &finding.outcome {
            Outcome::Pass => {}
            Outcome::Skip(reason) => {
                let _ = writeln!(out, "      why:      {}", safe::text(reason));
            }
            Outcome::Fail { evidence, count } | Outcome::Warn { evidence, count } => {
                let _ = writeln!(out, "      spec:     {}", check.text);
                let _ = writeln!(out, "      found:    {}", safe::text(&evidence.found));
                let _ = writeln!(out, "      request:  {}", safe::text(&evidence.request));
                match evidence.status {
                    Some(status) => {
                        let _ = writeln!(out, "      status:   {status}");
                    }
                    None => {
                        let _ = writeln!(out, "      status:   (no answer)");
                    }
                }
                let _ = writeln!(out, "      answer:   {}", safe::text(&evidence.answer));
                if *count > 1 {
                    let _ = writeln!(out, "      ({} observations, the first shown)", count);
                }
            }
        }
    }
    out.push('\n');
    for note in &report.notes {
        let _ = writeln!(out, "note: {}", safe::text(note));
    }
    out.push_str(&summary(report));
    out.push('\n');
    out.push_str(&report.verdict_line(strict));
    out.push('\n');
    out
}

fn evidence_json(evidence: &Evidence) -> Value {
    let mut value = json!({
        "request": safe::text(&evidence.request),
        "answer": safe::text(&evidence.answer),
        "found": safe::text(&evidence.found),
    });
    if let Some(status) = evidence.status {
        value["status"] = json!(status);
    }
    value
}

/// JSON: the run, each check with its result, a summary and the verdict with its exit status.
pub fn json(report: &Report, strict: bool) -> Value {
    let checks: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let check = f.check;
            let mut item = json!({
                "id": check.id,
                "spec": check.spec.name(),
                "spec_version": check.revision.name(),
                "section": check.section,
                "keyword": check.keyword.to_string(),
                "text": check.text,
                "result": f.outcome.label(),
            });
            if f.expected {
                item["expected_failure"] = json!(true);
            }
            match &f.outcome {
                Outcome::Pass => {}
                Outcome::Skip(reason) => item["reason"] = json!(safe::text(reason)),
                Outcome::Fail { evidence, count } | Outcome::Warn { evidence, count } => {
                    item["evidence"] = evidence_json(evidence);
                    item["failures"] = json!(count);
                }
            }
            item
        })
        .collect();
    let verdict = report.verdict(strict);
    json!({
        "url": safe::text(&report.url),
        "spec": report.spec().name(),
        "spec_version": report.revision.name(),
        "document": report.spec().document(),
        "checks": checks,
        "notes": report.notes.iter().map(|n| safe::text(n)).collect::<Vec<_>>(),
        "summary": {
            "pass": report.count("PASS"),
            "fail": report.count("FAIL"),
            "warn": report.count("WARN"),
            "skip": report.count("SKIP"),
            "must_failures": report.failures(Keyword::Must),
            "should_failures": report.failures(Keyword::Should),
            "expected_failures": report.findings.iter().filter(|f| f.expected && f.is_failure(strict)).count(),
            "requests": report.requests,
            "seconds": report.elapsed.as_secs_f64(),
        },
        "verdict": {
            "exit_code": verdict.exit_code(),
            "text": report.verdict_line(strict),
        },
    })
}

/// `text` for XML 1.0 character data or an attribute: markup escaped, and every character
/// XML does not allow dropped (after [`safe::text`] there are none left; this is the last line).
fn escape(text: &str) -> String {
    let text = safe::text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if matches!(c as u32, 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF) => out.push(c),
            _ => {}
        }
    }
    out
}

/// JUnit XML: one test suite, one test case per check (a failure per FAIL, skipped per SKIP).
/// A WARN is a failure only with `strict`; otherwise it is reported in `system-out`. A failure
/// the expected-failures file lists is skipped (with what failed); a listed check that passes
/// is a failure (the file is stale).
pub fn junit(report: &Report, strict: bool) -> String {
    let failing = |f: &Finding| f.fails_run(strict) || f.stale();
    let failures = report.findings.iter().filter(|f| failing(f)).count();
    let skipped = report
        .findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Skip(_)) || (f.expected && f.is_failure(strict)))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"toolhost conformance\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">",
        report.findings.len(),
        report.elapsed.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{} conformance of {}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">",
        escape(report.spec().name()),
        escape(&report.url),
        report.findings.len(),
        report.elapsed.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "    <properties>\n      <property name=\"spec_version\" value=\"{}\"/>\n      <property name=\"verdict\" value=\"{}\"/>\n    </properties>",
        escape(report.revision.name()),
        escape(&report.verdict_line(strict))
    );
    for finding in &report.findings {
        let check = finding.check;
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{} ({}): {}\"",
            escape(&place(finding)),
            escape(check.id),
            check.keyword,
            escape(check.text)
        );
        match &finding.outcome {
            Outcome::Pass if finding.stale() => {
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\" type=\"stale-expectation\"/>\n    </testcase>",
                    escape(expectation(finding).unwrap_or_default())
                );
            }
            Outcome::Pass => out.push_str("/>\n"),
            Outcome::Skip(reason) => {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    escape(reason)
                );
            }
            Outcome::Fail { evidence, count } | Outcome::Warn { evidence, count } => {
                let body = format!(
                    "spec: {}\nfound: {}\nrequest: {}\nstatus: {}\nanswer: {}\nobservations: {count}",
                    check.text,
                    safe::text(&evidence.found),
                    safe::text(&evidence.request),
                    evidence.status.map_or("(no answer)".to_owned(), |s| s.to_string()),
                    safe::text(&evidence.answer)
                );
                if finding.expected && finding.is_failure(strict) {
                    let _ = writeln!(
                        out,
                        ">\n      <skipped message=\"expected failure: {}\"/>\n      <system-out>{}</system-out>\n    </testcase>",
                        escape(&evidence.found),
                        escape(&body)
                    );
                } else if finding.is_failure(strict) {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                        escape(&evidence.found),
                        finding.outcome.label(),
                        escape(&body)
                    );
                } else {
                    let _ = writeln!(
                        out,
                        ">\n      <system-out>WARN ({} not met): {}</system-out>\n    </testcase>",
                        check.keyword,
                        escape(&body)
                    );
                }
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::checks::{Revision, nact, woa};
    use crate::report::Evidence;

    fn finding(check: &'static crate::Check, outcome: Outcome) -> Finding {
        Finding {
            check,
            outcome,
            expected: false,
        }
    }

    fn report() -> Report {
        let evidence = Evidence {
            request: "GET http://127.0.0.1:1/nact/tools".to_owned(),
            status: Some(200),
            answer: "{\"name\": \"<b>&'\u{1b}\"}".to_owned(),
            found: "`unit` allows `celsius`".to_owned(),
        };
        Report {
            url: "http://127.0.0.1:1/nact".to_owned(),
            revision: Revision::Nact00,
            findings: vec![
                finding(
                    &nact::ENUM_NAMES,
                    Outcome::Fail {
                        evidence: evidence.clone(),
                        count: 2,
                    },
                ),
                finding(&nact::NAME_SNAKE, Outcome::Warn { evidence, count: 1 }),
                finding(&woa::CONDITIONAL, Outcome::Skip("no <ETag>".to_owned())),
                finding(&nact::ENUMERATION, Outcome::Pass),
            ],
            requests: 3,
            elapsed: Duration::from_millis(1500),
            notes: vec!["invoked x (N-ACT, unpinned)".to_owned()],
            locked_out: None,
        }
    }

    #[test]
    fn junit_counts_a_warning_as_a_failure_only_when_strict_and_escapes_everything() {
        let report = report();
        let lenient = junit(&report, false);
        assert!(lenient.contains("failures=\"1\" skipped=\"1\""), "{lenient}");
        assert_eq!(lenient.matches("<testcase ").count(), 4);
        assert_eq!(lenient.matches("<failure ").count(), 1);
        assert!(lenient.contains("<system-out>WARN (SHOULD not met)"), "{lenient}");
        assert!(
            lenient.contains("&lt;b&gt;&amp;&apos;\\u{1b}") && !lenient.contains('\u{1b}'),
            "{lenient}"
        );
        assert!(lenient.contains("<skipped message=\"no &lt;ETag&gt;\"/>"), "{lenient}");
        assert!(
            lenient.contains("<property name=\"spec_version\" value=\"nact-00\"/>"),
            "{lenient}"
        );
        let strict = junit(&report, true);
        assert!(strict.contains("failures=\"2\""), "{strict}");
        assert_eq!(strict.matches("<failure ").count(), 2);
        assert!(report.failed(false) && report.failed(true));
    }

    #[test]
    fn json_and_text_carry_the_evidence_the_summary_and_the_verdict() {
        let report = report();
        let value = json(&report, false);
        assert_eq!(value["summary"]["must_failures"], 1);
        assert_eq!(value["summary"]["should_failures"], 1);
        assert_eq!(value["summary"]["warn"], 1);
        assert_eq!(value["spec_version"], "nact-00");
        assert_eq!(value["checks"][0]["evidence"]["status"], 200);
        assert_eq!(value["checks"][0]["failures"], 2);
        assert_eq!(value["checks"][1]["result"], "WARN");
        assert_eq!(value["checks"][2]["reason"], "no <ETag>");
        assert_eq!(value["verdict"]["exit_code"], 1);
        let out = text(&report, false);
        assert!(out.contains("FAIL  N-ACT §6.1  MUST    nact-6.1-enum-names"), "{out}");
        assert!(
            out.contains("WARN  N-ACT §6.1  SHOULD  nact-6.1-name-snake-case"),
            "{out}"
        );
        assert!(out.contains("(2 observations, the first shown)"), "{out}");
        assert!(
            out.contains("4 checks: 1 pass, 1 fail, 1 warn, 1 skip; 3 requests in 1.5 s"),
            "{out}"
        );
        assert!(out.contains("requirement set nact-00"), "{out}");
        assert!(out.contains("(exit 1)"), "{out}");
    }

    #[test]
    fn expected_failures_excuse_a_failure_and_a_listed_pass_is_stale() {
        let mut report = report();
        report.findings[0].expected = true;
        assert_eq!(report.verdict(false), crate::Verdict::Conformant);
        assert_eq!(report.verdict(true), crate::Verdict::Failed, "the WARN under --strict");
        let xml = junit(&report, false);
        assert!(xml.contains("failures=\"0\""), "{xml}");
        assert!(xml.contains("<skipped message=\"expected failure: "), "{xml}");
        report.findings[3].expected = true;
        assert_eq!(report.verdict(false), crate::Verdict::StaleExpectations);
        assert!(text(&report, false).contains("nact-6.1-enumeration  (listed as an expected failure, but passes"));
        assert!(junit(&report, false).contains("type=\"stale-expectation\""));
        for finding in &mut report.findings {
            finding.outcome = Outcome::Skip("429".to_owned());
        }
        assert_eq!(report.verdict(false), crate::Verdict::NothingMeasured);
        assert_eq!(report.verdict(false).exit_code(), 3);
    }

    /// A run the server refused for want of credentials measured nothing that matters, even
    /// when what needs none passed; a failure still fails it.
    #[test]
    fn a_run_locked_out_for_want_of_credentials_is_no_pass() {
        let mut report = report();
        report.findings.truncate(3);
        report.findings[0].outcome = Outcome::Pass;
        report.findings[1].outcome = Outcome::Skip("401".to_owned());
        assert_eq!(report.verdict(false), crate::Verdict::Conformant);
        report.locked_out = Some("GET /tools answered HTTP 401: the server needs credentials".to_owned());
        assert_eq!(report.verdict(false), crate::Verdict::NothingMeasured);
        let out = text(&report, false);
        assert!(
            out.contains("past what needs no credentials (GET /tools answered HTTP 401"),
            "{out}"
        );
        assert!(out.contains("(exit 3)"), "{out}");
        let evidence = Evidence {
            request: "GET /health".to_owned(),
            status: Some(500),
            answer: String::new(),
            found: "down".to_owned(),
        };
        report.findings[2].outcome = Outcome::Fail { evidence, count: 1 };
        assert_eq!(report.verdict(false), crate::Verdict::Failed);
    }
}
