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
