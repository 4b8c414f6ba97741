//! `toolhost verify --conformance` pointed at hostile servers (tests/conformance/hostile_server.py)
//! and at servers it cannot measure (issue #37 items 6, 7, 8, 12): hostile text and echoed
//! credentials stay out of every report format, no POST body is sent on to another origin, the
//! bounds hold for redirect hops and for a request in flight, and the exit status tells a run
//! that measured nothing, and an expected-failures file that went stale, from a pass.

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{BIN, Scratch, Server};
use crate::verify::{Fake, check, fetch_json, launch_python};

const HOSTILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/conformance/hostile_server.py");

/// The checks of N-ACT's and OTC's requirement sets (nact-00, otc-1.0).
const NACT_CHECKS: usize = 25;
const OTC_CHECKS: usize = 21;

/// `hostile_server.py MODE`, killed on drop.
struct Hostile {
    child: Child,
    port: u16,
}

impl Hostile {
    fn start(mode: &str) -> Self {
        let (child, port) = launch_python(&[HOSTILE, mode]);
        Self { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/nact", self.port)
    }

    /// What the server counted.
    fn seen(&self) -> Value {
        fetch_json(self.port, "/__seen")
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolhost verify --conformance URL --allow-private ARGS`.
fn verify(url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["verify", "--conformance", url, "--allow-private"])
        .args(args)
        .output()
        .expect("run toolhost")
}

/// Characters no report may carry raw: controls but newline (C0, DEL, C1), bidi controls,
/// zero-width and invisible ones, and noncharacters (invalid in XML).
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FFFE}' | '\u{FFFF}')
}

fn assert_terminal_safe(what: &str, text: &str) {
    let bad: Vec<String> = text
        .chars()
        .filter(|&c| unsafe_char(c))
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(bad.is_empty(), "{what} carries {bad:?}:\n{text}");
}

/// Every string of a JSON value.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}

/// Parses `xml` with Python's XML parser (a real one, not ours): `Ok(test cases)` or the error.
fn parse_xml(xml: &str) -> Result<usize, String> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as ET; r = ET.fromstring(sys.stdin.buffer.read()); print(len(r.findall('.//testcase')))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(xml.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().parse().unwrap())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn hostile_text_is_escaped_in_every_format_and_forges_no_line() {
    let server = Hostile::start("hostile-text");
    let text = verify(&server.url(), &["--protocol", "nact"]);
    let out = String::from_utf8(text.stdout).unwrap();
    assert_eq!(text.status.code(), Some(1), "{out}");
    assert_terminal_safe("the text report", &out);
    // The forged line is on the line of what quoted it, shown, not a line of its own.
    assert!(
        !out.lines().any(|l| l.starts_with("PASS  N-ACT §6.1  MUST    forged")),
        "{out}"
    );
    assert!(
        out.contains("\\u{1b}[2J\\u{1b}[1;32m\\u{a}PASS  N-ACT §6.1  MUST    forged"),
        "{out}"
    );
    assert!(out.contains("\\u{202e}txt.exe\\u{2066}\\u{fffe}\\u{ffff}"), "{out}");
    // The hostile cursor (a loop of pages) and the hostile name (not snake case) are evidence.
    assert!(out.contains("FAIL  N-ACT §6.4  MUST    nact-6.4-pagination"), "{out}");
    assert!(
        out.contains("WARN  N-ACT §6.1  SHOULD  nact-6.1-name-snake-case"),
        "{out}"
    );

    let json = verify(&server.url(), &["--protocol", "nact", "--format", "json"]);
    let raw = String::from_utf8(json.stdout).unwrap();
    assert_terminal_safe("the JSON report", &raw);
    let report: Value = serde_json::from_str(&raw).unwrap();
    let mut all = Vec::new();
    strings(&report, &mut all);
    for s in &all {
        assert_terminal_safe("a string of the JSON report, parsed", s);
    }
    assert!(
        all.iter().any(|s| s.contains("\\u{202e}")),
        "the hostile text is shown: {report:#}"
    );

    let junit = verify(&server.url(), &["--protocol", "nact", "--format", "junit"]);
    let xml = String::from_utf8(junit.stdout).unwrap();
    assert_terminal_safe("the JUnit report", &xml);
    assert_eq!(parse_xml(&xml), Ok(NACT_CHECKS), "{xml}");
    assert!(xml.contains("\\u{fffe}"), "{xml}");
}

#[test]
fn credentials_the_server_echoes_never_reach_any_report_format() {
    let server = Hostile::start("echo-headers");
    let secrets = ["tok-SECRET-1", "key-SECRET-2", "team-SECRET-3"];
    let credentials = [
        "--bearer",
        "tok-SECRET-1",
        "--api-key",
        "key-SECRET-2",
        "--header",
        "X-Team: team-SECRET-3",
    ];
    for format in ["text", "json", "junit"] {
        let mut args = vec!["--protocol", "nact", "--format", format];
        args.extend(credentials);
        let output = verify(&server.url(), &args);
        let out = String::from_utf8_lossy(&output.stdout);
        let err = String::from_utf8_lossy(&output.stderr);
        for secret in secrets {
            assert!(!out.contains(secret), "{format}: {secret} in\n{out}");
            assert!(!err.contains(secret), "{format}: {secret} in\n{err}");
        }
        // The server did echo them: the report shows where, redacted.
        assert!(out.contains("[redacted]"), "{format}:\n{out}");
        if format == "junit" {
            assert_eq!(parse_xml(&out), Ok(NACT_CHECKS), "{out}");
        }
    }
}

#[test]
fn a_post_is_never_sent_on_to_another_origin() {
    // Every POST is answered 307 to 127.0.0.2, another origin (reachable: --allow-private).
    let server = Hostile::start("redirect-post");
    let output = verify(
        &server.url(),
        &[
            "--protocol",
            "nact",
            "--format",
            "json",
            "--invoke",
            r#"lookup_weather={"city": "SECRET-INPUT"}"#,
        ],
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let seen = server.seen();
    assert_eq!(seen["other_origin"], 0, "a body reached 127.0.0.2: {seen:#}");
    let invoke = check(&report, "nact-7-invoke");
    assert_eq!(invoke["result"], "SKIP", "{report:#}");
    assert!(
        invoke["reason"].as_str().unwrap().contains("another origin"),
        "{invoke:#}"
    );
    assert_eq!(output.status.code(), Some(0), "{report:#}");
}

#[test]
fn every_redirect_hop_counts_against_max_requests() {
    let server = Hostile::start("redirect-loop");
    let output = verify(
        &server.url(),
        &["--protocol", "nact", "--format", "json", "--max-requests", "10"],
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let seen = server.seen();
    assert!(seen["requests"].as_u64().unwrap() <= 10, "{seen:#}");
    assert!(report["summary"]["requests"].as_u64().unwrap() <= 10, "{report:#}");
    assert!(report["notes"].to_string().contains("bounds"), "{report:#}");
}

#[test]
fn max_seconds_bounds_a_request_in_flight_and_a_run_that_measured_nothing_exits_3() {
    // The answer stalls 60 s after its first bytes; the per-request timeout is 30 s.
    let server = Hostile::start("hang");
    let started = Instant::now();
    let output = verify(
        &server.url(),
        &["--protocol", "nact", "--format", "json", "--max-seconds", "2"],
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "took {took:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["pass"], 0, "{report:#}");
    assert_eq!(report["summary"]["skip"], NACT_CHECKS, "{report:#}");
    assert_eq!(output.status.code(), Some(3), "{report:#}");
    assert_eq!(report["verdict"]["exit_code"], 3);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nothing could be measured"), "{stderr}");

    // A server that answers 429 to everything: measured nothing, not conformant.
    let fake = Fake::start("otc", "always-429");
    let output = verify(&fake.url("/otc"), &["--protocol", "otc"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{text}");
    let summary = format!("{OTC_CHECKS} checks: 0 pass, 0 fail, 0 warn, {OTC_CHECKS} skip");
    assert!(text.contains(&summary), "{text}");
    assert!(text.contains("nothing could be measured"), "{text}");
}

#[test]
fn an_expected_failures_file_excuses_what_it_lists_and_fails_when_a_listed_check_passes() {
    let fake = Fake::start("nact", "lowercase-enum");
    let dir = Scratch::new();
    let write = |name: &str, text: &str| dir.write(name, text).to_string_lossy().into_owned();
    let url = fake.url("/nact");
    // Unlisted: the failure fails the run.
    assert_eq!(verify(&url, &[]).status.code(), Some(1));
    let listed = write(
        "listed.yaml",
        "# lowercase units, fixed in #99\n- nact-6.1-enum-names\n",
    );
    let output = verify(&url, &["--format", "json", "--expected-failures", &listed]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    let finding = check(&report, "nact-6.1-enum-names");
    assert_eq!(finding["result"], "FAIL", "still reported: {finding:#}");
    assert_eq!(finding["expected_failure"], true);
    let junit = verify(&url, &["--format", "junit", "--expected-failures", &listed]);
    let xml = String::from_utf8(junit.stdout).unwrap();
    assert!(
        xml.contains("failures=\"0\"") && xml.contains("expected failure: "),
        "{xml}"
    );
    // A listed check that passes: the file is stale.
    let stale = write("stale.yaml", "- nact-6.1-enum-names\n- nact-6.1-enumeration\n");
    let output = verify(&url, &["--expected-failures", &stale]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(4), "{text}");
    assert!(
        text.contains("listed as expected failures but passing: nact-6.1-enumeration"),
        "{text}"
    );
    // A typo excuses nothing in silence.
    let typo = write("typo.yaml", "- nact-6.1-enum-name\n");
    let output = verify(&url, &["--expected-failures", &typo]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`nact-6.1-enum-name` is no check"));
}

#[test]
fn the_requirement_set_is_chosen_with_spec_version_and_named_in_the_report() {
    let fake = Fake::start("nact", "none");
    let url = fake.url("/nact");
    let output = verify(&url, &["--spec-version", "nact-00", "--format", "json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["spec_version"], "nact-00");
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["spec_version"] == "nact-00")
    );
    let text = String::from_utf8(verify(&url, &[]).stdout).unwrap();
    assert!(text.starts_with("Conformance of "), "{text}");
    assert!(
        text.lines().next().unwrap().ends_with("requirement set nact-00"),
        "{text}"
    );
    for (args, says) in [
        (vec!["--spec-version", "nact-01"], "nact-00, otc-1.0, woa-00"),
        (
            vec!["--spec-version", "otc-1.0", "--protocol", "nact"],
            "the server speaks N-ACT",
        ),
    ] {
        let output = verify(&url, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn every_answer_is_held_to_its_schema_and_a_misfit_is_a_result() {
    let server = Hostile::start("misshapen");
    let output = verify(&server.url(), &["--protocol", "nact", "--format", "json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{report:#}");
    let signature = check(&report, "nact-6.1-signature");
    assert_eq!(signature["result"], "FAIL", "{report:#}");
    let found = signature["evidence"]["found"].as_str().unwrap();
    assert!(
        found.contains("schemas/nact-00.json") && found.contains("/tags"),
        "{found}"
    );
    let invoke = check(&report, "nact-7-invoke");
    assert_eq!(invoke["result"], "FAIL", "{report:#}");
    assert!(
        invoke["evidence"]["found"].as_str().unwrap().contains("value"),
        "{invoke:#}"
    );
    // The draft asks for no problem body; one that says it is one and is not is a warning.
    let unknown = check(&report, "nact-7-unknown-tool-is-4xx");
    assert_eq!(unknown["result"], "WARN", "{report:#}");
    assert!(
        unknown["evidence"]["found"].as_str().unwrap().contains("RFC 9457"),
        "{unknown:#}"
    );
}

#[test]
fn the_fixture_catalog_is_served_and_its_tools_are_invoked_with_its_inputs_on_every_protocol() {
    // A copy, so the run leaves the checkout as it was.
    let dir = Scratch::new();
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/conformance-fixture");
    for file in ["tools.yaml", "versions.lock"] {
        dir.write(file, &std::fs::read_to_string(format!("{shipped}/{file}")).unwrap());
    }
    let catalog = dir.0.to_string_lossy().into_owned();
    let server = Server::start(&["--catalog", &catalog], &[], None);
    let base = server.base.clone();
    for url in [format!("{base}/nact"), format!("{base}/otc"), format!("{base}/")] {
        // toolhost says a tool is read-only on MCP only (OTC has no place for it): `--fixture`
        // tells the checker the server loads the fixture.
        let output = verify(&url, &["--format", "json", "--fixture"]);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(output.status.code(), Some(0), "{url}: {report:#}");
        let notes = report["notes"].to_string();
        for tool in ["conformance_echo", "conformance_versions"] {
            assert!(
                notes.contains(&format!("invoked {tool}")) || notes.contains(&format!("invoked Conformance_{tool}")),
                "{url}: {notes}"
            );
        }
        let fails: Vec<&Value> = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["result"] == "FAIL" || c["result"] == "WARN")
            .collect();
        assert!(fails.is_empty(), "{url}: {fails:#?}");
        for id in [
            "nact-7-invoke",
            "nact-7-pinned-invoke",
            "otc-call-response",
            "otc-call-id-idempotent",
            "woa-5.2-success",
        ] {
            if let Some(found) = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id) {
                assert_eq!(found["result"], "PASS", "{url}: {found:#}");
            }
        }
        if url.ends_with("/otc") {
            // The fixture's markers tell `conformance_versions`' versions apart, which its
            // schemas alone do not: resolution is measured (V2 runs only on 2.0.0, the latest
            // and `@2`; V1_2 is refused by `@1`, 1.0.0).
            assert_eq!(check(&report, "otc-version-resolution")["result"], "PASS", "{report:#}");
            assert!(
                notes.contains("`Conformance.conformance_versions@2` with an input only Conformance.conformance_versions@2.0.0 takes"),
                "{notes}"
            );
        }
    }
    // Without --fixture, tools the server does not mark read-only are not invoked: the checker
    // runs nothing it was not given.
    for url in [format!("{base}/nact"), format!("{base}/otc")] {
        let report: Value = serde_json::from_slice(&verify(&url, &["--format", "json"]).stdout).unwrap();
        assert!(!report["notes"].to_string().contains("invoked"), "{report:#}");
    }
}
