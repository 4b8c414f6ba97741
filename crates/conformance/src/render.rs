//! A report as text (for people), JSON and JUnit XML (for CI).

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::checks::Keyword;
use crate::report::{Finding, Outcome, Report};

fn summary(report: &Report) -> String {
    format!(
        "{} checks: {} pass, {} fail ({} MUST, {} SHOULD), {} skip; {} requests in {:.1} s",
        report.findings.len(),
        report.count("PASS"),
        report.count("FAIL"),
        report.failures(Keyword::Must),
        report.failures(Keyword::Should),
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

/// Text for a terminal: one line per check, the evidence under each failure.
pub fn text(report: &Report) -> String {
    let mut out = format!(
        "Conformance of {} to {} ({})\n\n",
        report.url,
        report.spec,
        report.spec.document()
    );
    let width = report
        .findings
        .iter()
        .map(|f| place(f).chars().count())
        .max()
        .unwrap_or(0);
    for finding in &report.findings {
        let check = finding.check;
        let _ = writeln!(
            out,
            "{}  {:<width$}  {:<6}  {}",
            finding.outcome.label(),
            place(finding),
            check.keyword.to_string(),
            check.id
        );
        match &finding.outcome {
            Outcome::Pass => {}
            Outcome::Skip(reason) => {
                let _ = writeln!(out, "      why:      {reason}");
            }
            Outcome::Fail { evidence, count } => {
                let _ = writeln!(out, "      spec:     {}", check.text);
                let _ = writeln!(out, "      found:    {}", evidence.found);
                let _ = writeln!(out, "      request:  {}", evidence.request);
                match evidence.status {
                    Some(status) => {
                        let _ = writeln!(out, "      status:   {status}");
                    }
                    None => {
                        let _ = writeln!(out, "      status:   (no answer)");
                    }
                }
                let _ = writeln!(out, "      answer:   {}", evidence.answer);
                if *count > 1 {
                    let _ = writeln!(out, "      ({} observations failed; the first is shown)", count);
                }
            }
        }
    }
    out.push('\n');
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out.push_str(&summary(report));
    out.push('\n');
    out
}

/// JSON: the run, each check with its result, and a summary.
pub fn json(report: &Report) -> Value {
    let checks: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let check = f.check;
            let mut item = json!({
                "id": check.id,
                "spec": check.spec.name(),
                "section": check.section,
                "keyword": check.keyword.to_string(),
                "text": check.text,
                "result": f.outcome.label(),
            });
            match &f.outcome {
                Outcome::Pass => {}
                Outcome::Skip(reason) => item["reason"] = json!(reason),
                Outcome::Fail { evidence, count } => {
                    item["evidence"] = serde_json::to_value(evidence).unwrap_or_default();
                    item["failures"] = json!(count);
                }
            }
            item
        })
        .collect();
    json!({
        "url": report.url,
        "spec": report.spec.name(),
        "document": report.spec.document(),
        "checks": checks,
        "notes": report.notes,
        "summary": {
            "pass": report.count("PASS"),
            "fail": report.count("FAIL"),
            "skip": report.count("SKIP"),
            "must_failures": report.failures(Keyword::Must),
            "should_failures": report.failures(Keyword::Should),
            "requests": report.requests,
            "seconds": report.elapsed.as_secs_f64(),
        },
    })
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no place for most control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test suite, one test case per check (a failure per FAIL, skipped per SKIP).
/// A failed SHOULD is a failure only with `strict`; otherwise it is reported in `system-out`.
pub fn junit(report: &Report, strict: bool) -> String {
    let failures = report
        .findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail { .. }) && (strict || f.check.keyword == Keyword::Must))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"toolhost conformance\" tests=\"{}\" failures=\"{failures}\" skipped=\"{}\" time=\"{:.3}\">",
        report.findings.len(),
        report.count("SKIP"),
        report.elapsed.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{} conformance of {}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{}\" time=\"{:.3}\">",
        escape(report.spec.name()),
        escape(&report.url),
        report.findings.len(),
        report.count("SKIP"),
        report.elapsed.as_secs_f64()
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
            Outcome::Pass => out.push_str("/>\n"),
            Outcome::Skip(reason) => {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    escape(reason)
                );
            }
            Outcome::Fail { evidence, count } => {
                let body = format!(
                    "spec: {}\nfound: {}\nrequest: {}\nstatus: {}\nanswer: {}\nfailed observations: {count}",
                    check.text,
                    evidence.found,
                    evidence.request,
                    evidence.status.map_or("(no answer)".to_owned(), |s| s.to_string()),
                    evidence.answer
                );
                let element = if strict || check.keyword == Keyword::Must {
                    "failure"
                } else {
                    "system-out"
                };
                if element == "failure" {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                        escape(&evidence.found),
                        check.keyword,
                        escape(&body)
                    );
                } else {
                    let _ = writeln!(
                        out,
                        ">\n      <system-out>SHOULD not met: {}</system-out>\n    </testcase>",
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
    use crate::checks::{nact, woa};
    use crate::report::Evidence;

    fn report() -> Report {
        let evidence = Evidence {
            request: "GET http://127.0.0.1:1/nact/tools".to_owned(),
            status: Some(200),
            answer: "{\"name\": \"<b>&'\u{1b}\"}".to_owned(),
            found: "`unit` allows `celsius`".to_owned(),
        };
        Report {
            url: "http://127.0.0.1:1/nact".to_owned(),
            spec: crate::Spec::Nact,
            findings: vec![
                Finding {
                    check: &nact::ENUM_NAMES,
                    outcome: Outcome::Fail {
                        evidence: evidence.clone(),
                        count: 2,
                    },
                },
                Finding {
                    check: &nact::NAME_SNAKE,
                    outcome: Outcome::Fail { evidence, count: 1 },
                },
                Finding {
                    check: &woa::CONDITIONAL,
                    outcome: Outcome::Skip("no <ETag>".to_owned()),
                },
                Finding {
                    check: &nact::ENUMERATION,
                    outcome: Outcome::Pass,
                },
            ],
            requests: 3,
            elapsed: Duration::from_millis(1500),
            notes: vec!["invoked x (N-ACT, unpinned)".to_owned()],
        }
    }

    #[test]
    fn junit_counts_a_should_as_a_failure_only_when_strict_and_escapes_everything() {
        let report = report();
        let lenient = junit(&report, false);
        assert!(lenient.contains("failures=\"1\" skipped=\"1\""), "{lenient}");
        assert_eq!(lenient.matches("<testcase ").count(), 4);
        assert_eq!(lenient.matches("<failure ").count(), 1);
        assert!(lenient.contains("<system-out>SHOULD not met"), "{lenient}");
        assert!(
            lenient.contains("&lt;b&gt;&amp;&apos;") && !lenient.contains('\u{1b}'),
            "{lenient}"
        );
        assert!(lenient.contains("<skipped message=\"no &lt;ETag&gt;\"/>"), "{lenient}");
        let strict = junit(&report, true);
        assert!(strict.contains("failures=\"2\""), "{strict}");
        assert_eq!(strict.matches("<failure ").count(), 2);
        assert!(report.failed(false) && report.failed(true));
    }

    #[test]
    fn json_and_text_carry_the_evidence_and_the_summary() {
        let report = report();
        let value = json(&report);
        assert_eq!(value["summary"]["must_failures"], 1);
        assert_eq!(value["summary"]["should_failures"], 1);
        assert_eq!(value["checks"][0]["evidence"]["status"], 200);
        assert_eq!(value["checks"][0]["failures"], 2);
        assert_eq!(value["checks"][2]["reason"], "no <ETag>");
        let out = text(&report);
        assert!(out.contains("FAIL  N-ACT §6.1  MUST    nact-6.1-enum-names"), "{out}");
        assert!(out.contains("(2 observations failed; the first is shown)"), "{out}");
        assert!(
            out.contains("4 checks: 1 pass, 2 fail (1 MUST, 1 SHOULD), 1 skip; 3 requests in 1.5 s"),
            "{out}"
        );
    }
}
