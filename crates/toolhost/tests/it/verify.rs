//! `toolhost verify --conformance`, proved both ways: toolhost passes its own checks on every
//! protocol, and servers written from the drafts (tests/conformance/spec_server.py) that break
//! one rule each are caught, the failure named by its section. The fakes count the tool runs
//! they perform, so the tests also see which tools the checker invoked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{BIN, Server};

const FAKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/conformance/spec_server.py");

/// A fake spec server (`spec_server.py PROTOCOL BREAK`), killed on drop.
pub(crate) struct Fake {
    child: Child,
    port: u16,
}

/// Starts `python3 ARGS` (a stdlib server that prints its port on its first line): the child
/// and the port.
pub(crate) fn launch_python(args: &[&str]) -> (Child, u16) {
    let mut child = Command::new("python3")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs the test server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the server prints its port");
    let port = line.trim().parse().unwrap_or_else(|_| panic!("not a port: {line:?}"));
    (child, port)
}

/// `GET path` on 127.0.0.1:`port` over a bare socket (no client under test), as JSON.
pub(crate) fn fetch_json(port: u16, path: &str) -> Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let body = text.split_once("\r\n\r\n").expect("a body").1;
    serde_json::from_str(body).unwrap()
}

impl Fake {
    pub(crate) fn start(protocol: &str, broken: &str) -> Self {
        let (child, port) = launch_python(&[FAKE, protocol, broken]);
        Self { child, port }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// How many times each tool ran.
    fn effects(&self) -> Value {
        fetch_json(self.port, "/__effects")
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolhost verify --conformance URL --allow-private --format json ARGS`: exit code and report.
fn conformance(url: &str, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--allow-private"];
    all.extend_from_slice(args);
    guarded_conformance(url, &all)
}

/// `toolhost verify --conformance URL --format json ARGS` (the URL typed is reachable on
/// loopback; what the server names is not, without `--allow-private`).
fn guarded_conformance(url: &str, args: &[&str]) -> (i32, Value) {
    let output = Command::new(BIN)
        .args(["verify", "--conformance", url, "--format", "json"])
        .args(args)
        .output()
        .expect("run toolhost");
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "no JSON report; stdout: {} stderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), report)
}

pub(crate) fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report:#}"))
}

fn with_result<'a>(report: &'a Value, result: &str) -> Vec<&'a str> {
    let checks = report["checks"].as_array().unwrap();
    checks
        .iter()
        .filter(|c| c["result"] == result)
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}

#[test]
fn toolhost_passes_its_own_conformance_checks_on_every_protocol() {
    let server = Server::start(&[], &[], None);
    let base = server.base.clone();
    // Plain HTTP is allowed on loopback only (WoA §8.1: "on the open Internet"); the WoA
    // document has no operations or private transports to check.
    let loopback_skips = [
        "woa-8.1-document-https",
        "woa-4.3.1-rest-https",
        "woa-4.1-operations",
        "woa-4.3.3-private-transports",
    ];
    for (url, spec) in [
        (format!("{base}/nact"), "N-ACT"),
        (format!("{base}/otc"), "OTC 1.0"),
        (format!("{base}/"), "WoA"),
    ] {
        // The protocol is probed, as discovery does. A division by zero is a tool execution
        // error (OTC: 200 with `success: false`).
        let (code, report) = conformance(
            &url,
            &[
                "--invoke",
                "add_numbers",
                "--invoke",
                r#"divide_numbers={"dividend": 1, "divisor": 0}"#,
            ],
        );
        assert_eq!(report["spec"], spec, "{url}");
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(with_result(&report, "FAIL"), Vec::<&str>::new(), "{report:#}");
        let skipped: Vec<&str> = with_result(&report, "SKIP");
        assert!(
            skipped.iter().all(|id| loopback_skips.contains(id)),
            "{spec}: skipped {skipped:?}: {report:#}"
        );
        // Every SHOULD toolhost meets is reported as met.
        let shoulds: Vec<&Value> = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["keyword"] == "SHOULD")
            .collect();
        assert!(
            !shoulds.is_empty() && shoulds.iter().all(|c| c["result"] == "PASS"),
            "{report:#}"
        );
        assert!(report["summary"]["requests"].as_u64().unwrap() <= 500);
    }
    // The same on request, as JUnit XML for CI.
    let output = Command::new(BIN)
        .args(["verify", "--conformance", &format!("{base}/nact"), "--allow-private"])
        .args([
            "--protocol",
            "nact",
            "--format",
            "junit",
            "--strict",
            "--invoke",
            "add_numbers",
        ])
        .output()
        .unwrap();
    let xml = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{xml}");
    assert!(xml.starts_with("<?xml") && xml.contains("failures=\"0\""), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 25, "{xml}");
}

/// The tools a run may have run: the one named with `--invoke`, and the one the servers mark
/// read-only.
fn ran_only_what_it_was_given(effects: &Value, named: &[&str]) {
    for tool in effects.as_object().unwrap().keys() {
        assert!(
            tool == "lookup_weather" || named.contains(&tool.as_str()),
            "{tool} ran: {effects}"
        );
    }
}

#[test]
fn servers_written_from_the_drafts_pass_and_each_broken_rule_is_named_by_its_section() {
    // Correct servers, and lenient ones: a WoA host or N-ACT server that runs a tool whatever
    // its input (validation is the client's: WoA §4.2, §5.1; N-ACT §5.3), an OTC server that
    // checks a tool's required secret before its input (a 400 either way), one whose newer
    // version of a tool loosens an input.
    for (protocol, mode, path) in [
        ("nact", "none", "/nact"),
        ("otc", "none", "/otc"),
        ("woa", "none", "/"),
        ("nact", "lenient", "/nact"),
        ("woa", "lenient", "/"),
        ("otc", "secrets-first", "/otc"),
        ("otc", "loosened-latest", "/otc"),
    ] {
        let fake = Fake::start(protocol, mode);
        let (code, report) = conformance(&fake.url(path), &["--invoke", "send_email"]);
        assert_eq!(code, 0, "{mode}: {report:#}");
        assert_eq!(report["summary"]["must_failures"], 0, "{mode}: {report:#}");
        assert_eq!(with_result(&report, "FAIL"), Vec::<&str>::new(), "{mode}: {report:#}");
        ran_only_what_it_was_given(&fake.effects(), &["send_email"]);
        if mode == "secrets-first" {
            // `send_email`'s 400 for the missing secret is not blamed on validation; the
            // lookup's 422 is still seen.
            assert_eq!(check(&report, "otc-validation-error")["result"], "PASS", "{report:#}");
        }
    }
    // Each server breaks one rule; the run names it, under its own check, and no other.
    for (protocol, broken, path, id, section) in [
        ("nact", "lowercase-enum", "/nact", "nact-6.1-enum-names", "6.1"),
        ("nact", "version-mismatch", "/nact", "nact-6.1-listing-current", "6.1"),
        (
            "nact",
            "unlocked-signature",
            "/nact",
            "nact-6.1-signature-locked",
            "6.1",
        ),
        ("nact", "5xx-malformed", "/nact", "nact-7-malformed-is-4xx", "7"),
        ("nact", "ignores-page-limit", "/nact", "nact-6.4-pagination", "6.4"),
        ("nact", "oldest-first", "/nact", "nact-6.3-versions-newest-first", "6.3"),
        ("nact", "name-as-tool-id", "/nact", "nact-6.1-tool-id-uuid", "6.1"),
        ("nact", "cursor-loop", "/nact", "nact-6.4-pagination", "6.4"),
        // Issue #37 item 10: rules that passed or were blamed on another check.
        ("nact", "pinned-404", "/nact", "nact-7-pinned-invoke", "7"),
        ("nact", "pinned-runs-current", "/nact", "nact-7-pinned-invoke", "7"),
        ("nact", "versions-missing-old", "/nact", "nact-6.3-versions-all", "6.3"),
        ("nact", "cursor-wrap", "/nact", "nact-6.4-pagination", "6.4"),
        // Item 11: N-ACT's tag filter (§5.2).
        ("nact", "tag-filter-partial", "/nact", "nact-5.2-tag-filter", "5.2"),
        ("otc", "no-health", "/otc", "otc-health", "health-check"),
        ("otc", "validation-as-400", "/otc", "otc-validation-error", "call-tool"),
        ("otc", "bare-array", "/otc", "otc-list-tools", "list-tools"),
        (
            "otc",
            "no-call-id",
            "/otc",
            "otc-call-id-generated",
            "call-tool-response",
        ),
        (
            "otc",
            "shorthand-latest-minor",
            "/otc",
            "otc-version-resolution",
            "call-tool",
        ),
        (
            "otc",
            "unversioned-oldest",
            "/otc",
            "otc-version-resolution",
            "call-tool",
        ),
        (
            "otc",
            "accepts-any-schema",
            "/otc",
            "otc-schema-unsupported",
            "call-tool",
        ),
        ("otc", "requires-schema", "/otc", "otc-schema-optional", "call-tool"),
        (
            "otc",
            "execution-error-as-400",
            "/otc",
            "otc-execution-error",
            "call-tool",
        ),
        ("otc", "health-503", "/otc", "otc-health", "health-check"),
        // Item 11: OTC's Authorization rule (security-authn).
        (
            "otc",
            "rejects-authorization",
            "/otc",
            "otc-authn-ignores-authorization",
            "security-authn",
        ),
        ("woa", "woa-version-1.0", "/", "woa-4-version", "4"),
        ("woa", "draft-07-schema", "/", "woa-4.2-json-schema", "4.2"),
        ("woa", "operation-without-description", "/", "woa-4.1-operations", "4.1"),
        (
            "woa",
            "private-transport-without-dns",
            "/",
            "woa-4.3.3-private-transports",
            "4.3.3",
        ),
        ("woa", "sub-path", "/api", "woa-9.1-well-known", "9.1"),
        ("woa", "plain-http-rest", "/", "woa-4.3.1-rest-https", "4.3.1"),
        ("woa", "no-mismatch-check", "/", "woa-5.2-agent-mismatch", "5.2"),
    ] {
        let fake = Fake::start(protocol, broken);
        let (code, report) = conformance(&fake.url(path), &["--invoke", "send_email"]);
        let found = check(&report, id);
        assert_eq!(found["result"], "FAIL", "{broken}: {report:#}");
        assert_eq!(found["section"], section, "{broken}");
        assert_eq!(found["keyword"], "MUST", "{broken}");
        assert!(
            found["evidence"]["request"].as_str().unwrap().contains("127.0.0.1"),
            "{found:#}"
        );
        assert_eq!(code, 1, "a failed MUST fails the run: {broken}");
        // No other check takes the blame; the rules two checks state are named.
        let also: &[&str] = match broken {
            "version-mismatch" => &["nact-6.1-signature-locked"],
            "no-call-id" => &["otc-call-response", "otc-call-id-echoed"],
            _ => &[],
        };
        let mut expected = vec![id];
        expected.extend_from_slice(also);
        let mut failed = with_result(&report, "FAIL");
        failed.sort();
        expected.sort();
        assert_eq!(failed, expected, "{broken}: {report:#}");
        ran_only_what_it_was_given(&fake.effects(), &["send_email"]);
        if broken == "bare-array" {
            // The listing's shape is wrong; its definitions are still checked.
            assert_eq!(check(&report, "otc-tool-definition")["result"], "PASS", "{report:#}");
        }
    }
}

#[test]
fn only_tools_the_user_names_or_the_server_marks_read_only_are_invoked() {
    for (protocol, path) in [("nact", "/nact"), ("otc", "/otc"), ("woa", "/")] {
        let fake = Fake::start(protocol, "none");
        let (_, report) = conformance(&fake.url(path), &[]);
        let effects = fake.effects();
        // `send_email` and `count_words` act; they got only requests that no conformant server
        // runs (WoA's `count_words` has a `default` operation whose own `inputs` take `{}`).
        assert!(effects.get("send_email").is_none(), "{protocol}: {effects}");
        assert!(effects.get("count_words").is_none(), "{protocol}: {effects}");
        // `lookup_weather` says it is read-only (`annotations.readOnlyHint`; in OTC as an added
        // property, which the standard allows), so it is called for real.
        assert!(
            effects["lookup_weather"].as_u64().unwrap() >= 1,
            "{protocol}: {effects}"
        );
        assert!(
            with_result(&report, "FAIL").is_empty(),
            "{protocol}: refusals still checked: {report:#}"
        );
        let (code, report) = conformance(&fake.url(path), &["--invoke", "send_email"]);
        assert_eq!(code, 0, "{report:#}");
        let effects = fake.effects();
        assert!(effects["send_email"].as_u64().unwrap() >= 1, "{protocol}: {effects}");
        assert!(effects.get("count_words").is_none(), "{protocol}: {effects}");
        let notes = report["notes"].to_string();
        assert!(notes.contains("invoked send_email"), "{notes}");
    }
}

#[test]
fn the_text_report_shows_the_statement_and_the_evidence() {
    let fake = Fake::start("nact", "5xx-malformed");
    let output = Command::new(BIN)
        .args(["verify", "--conformance", &fake.url("/nact"), "--allow-private"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    for expected in [
        "FAIL  N-ACT §7",
        "nact-7-malformed-is-4xx",
        "spec:     Traditional HTTP response codes apply",
        "request:  POST http://127.0.0.1",
        "status:   500",
        "a 5xx says the failure is temporary",
        "1 fail, 0 warn",
        "result: not conformant: 1 unexpected failures (exit 1)",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    // The same failure as JUnit XML: one failed test case, named by its section.
    let output = Command::new(BIN)
        .args([
            "verify",
            "--conformance",
            &fake.url("/nact"),
            "--allow-private",
            "--format",
            "junit",
        ])
        .output()
        .unwrap();
    let xml = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{xml}");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"N-ACT §7\" name=\"nact-7-malformed-is-4xx (MUST)"),
        "{xml}"
    );
    assert!(xml.contains("<failure message=\"HTTP 500 for an invocation"), "{xml}");
}

#[test]
fn retry_after_is_honoured_and_the_run_is_bounded() {
    let fake = Fake::start("nact", "retry-after");
    let (code, report) = conformance(&fake.url("/nact"), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert!(report["notes"].to_string().contains("Retry-After"), "{report:#}");
    assert!(report["summary"]["seconds"].as_f64().unwrap() >= 1.0);

    // A wait past the run's time bound is not made: what needed it is skipped, and a run that
    // measured nothing says so (exit 3).
    let fake = Fake::start("nact", "retry-after");
    let (code, report) = conformance(&fake.url("/nact"), &["--protocol", "nact", "--max-seconds", "1"]);
    assert_eq!(code, 3, "{report:#}");
    let enumeration = check(&report, "nact-6.1-enumeration");
    assert_eq!(enumeration["result"], "SKIP", "{report:#}");
    assert!(
        enumeration["reason"].as_str().unwrap().contains("Retry-After"),
        "{enumeration:#}"
    );
    assert!(report["summary"]["seconds"].as_f64().unwrap() < 1.0, "{report:#}");

    // A server that rate-limits the checker is waited for, then left alone: skipped, not failed.
    let fake = Fake::start("nact", "always-429");
    let (code, report) = conformance(&fake.url("/nact"), &["--protocol", "nact"]);
    assert_eq!(code, 3, "nothing measured is not a pass: {report:#}");
    let enumeration = check(&report, "nact-6.1-enumeration");
    assert_eq!(enumeration["result"], "SKIP", "{report:#}");
    assert!(
        enumeration["reason"].as_str().unwrap().contains("429"),
        "{enumeration:#}"
    );
    assert_eq!(
        report["summary"]["requests"], 3,
        "one request and two waits: {report:#}"
    );

    let fake = Fake::start("nact", "none");
    let (code, report) = conformance(&fake.url("/nact"), &["--protocol", "nact", "--max-requests", "3"]);
    assert_eq!(report["summary"]["requests"], 3, "{report:#}");
    assert!(report["notes"].to_string().contains("bounds"), "{report:#}");
    // What the bound cut off is skipped, never failed.
    assert_eq!(code, 0, "{report:#}");
    assert!(!with_result(&report, "SKIP").is_empty());
}

#[test]
fn mcp_and_unknown_servers_are_refused_with_a_way_forward() {
    let fake = Fake::start("nact", "none");
    let output = Command::new(BIN)
        .args([
            "verify",
            "--conformance",
            &fake.url("/nact"),
            "--allow-private",
            "--protocol",
            "mcp",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("MCP"), "{stderr}");
    let output = Command::new(BIN)
        .args(["verify", "--conformance", &fake.url("/nowhere"), "--allow-private"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("--protocol nact, otc or woa"), "{stderr}");
}

#[test]
fn addresses_the_server_names_stay_behind_the_ssrf_guard() {
    // The REST base is `http://localhost:PORT`: loopback, but not the origin typed.
    let fake = Fake::start("woa", "other-origin-rest");
    let (code, report) = guarded_conformance(&fake.url("/"), &[]);
    assert_eq!(
        code, 0,
        "a refusal by the guard is a skip, not the server's failure: {report:#}"
    );
    let mismatch = check(&report, "woa-5.2-agent-mismatch");
    assert_eq!(mismatch["result"], "SKIP", "{report:#}");
    assert!(
        mismatch["reason"].as_str().unwrap().contains("--allow-private"),
        "{mismatch:#}"
    );
    assert_eq!(fake.effects(), serde_json::json!({}), "nothing reached the agents");
    let (code, report) = guarded_conformance(&fake.url("/"), &["--allow-private"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(check(&report, "woa-5.2-agent-mismatch")["result"], "PASS", "{report:#}");
    assert_eq!(fake.effects()["lookup_weather"], 1);
}

#[test]
fn credentials_flags_reach_the_server_and_never_the_report() {
    // Checked without the key it needs, the server fails nothing: the run says what it needs,
    // and measured nothing past `/health`, so it is no pass (exit 3).
    let fake = Fake::start("otc", "api-key");
    let (code, report) = conformance(&fake.url("/otc"), &["--protocol", "otc"]);
    assert_eq!(code, 3, "a run locked out is no pass: {report:#}");
    assert_eq!(report["verdict"]["exit_code"], 3, "{report:#}");
    let verdict = report["verdict"]["text"].as_str().unwrap();
    assert!(
        verdict.contains("past what needs no credentials") && verdict.contains("--api-key"),
        "{verdict}"
    );
    assert_eq!(report["summary"]["must_failures"], 0, "{report:#}");
    let listing = check(&report, "otc-list-tools");
    assert_eq!(listing["result"], "SKIP", "{report:#}");
    assert!(
        listing["reason"]
            .as_str()
            .unwrap()
            .contains("needs credentials (--api-key"),
        "{listing:#}"
    );
    // `/health` needs no authentication, and gets none.
    assert_eq!(check(&report, "otc-health-no-auth")["result"], "PASS", "{report:#}");
    assert_eq!(check(&report, "otc-health")["result"], "PASS", "{report:#}");
    // Every check skipped for want of credentials, on N-ACT and WoA: exit 3 too. Probing the
    // protocol says what to give.
    for (protocol, path) in [("nact", "/nact"), ("woa", "/")] {
        let fake = Fake::start(protocol, "api-key");
        let (code, report) = conformance(&fake.url(path), &["--protocol", protocol]);
        assert_eq!(code, 3, "{protocol}: {report:#}");
        assert_eq!(report["summary"]["pass"], 0, "{protocol}: {report:#}");
        assert!(
            report["checks"].as_array().unwrap().iter().all(
                |c| c["result"] == "SKIP" && c["reason"].as_str().unwrap().contains("needs credentials (--api-key")
            ),
            "{protocol}: {report:#}"
        );
        let output = Command::new(BIN)
            .args(["verify", "--conformance", &fake.url(path), "--allow-private"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("the server wants credentials: --api-key"), "{stderr}");
    }
    let (code, report) = conformance(
        &fake.url("/otc"),
        &["--api-key", "secret-key", "--invoke", "send_email"],
    );
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(with_result(&report, "FAIL"), Vec::<&str>::new(), "{report:#}");
    assert!(
        !report.to_string().contains("secret-key"),
        "the key leaked into the report"
    );
    // A `/health` that wants the key too: sent without it (OTC: no authentication required).
    // Its 401 echoes the key it saw last (the probe of the protocol sent it) where the
    // excerpt of the answer cuts it in half: the answer to a request sent without credentials
    // is redacted before it is cut, as every other answer is, so no prefix of it shows.
    let fake = Fake::start("otc", "health-needs-auth");
    let (code, report) = conformance(&fake.url("/otc"), &["--api-key", "secret-key"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(with_result(&report, "FAIL"), vec!["otc-health-no-auth"], "{report:#}");
    assert_eq!(check(&report, "otc-health")["result"], "PASS", "{report:#}");
    assert!(
        !report.to_string().contains("secret-key"),
        "the key leaked into the report"
    );
    let answer = check(&report, "otc-health-no-auth")["evidence"]["answer"].to_string();
    assert!(answer.contains("xxxxxxxx") && !answer.contains("xsecr"), "{answer}");
}

#[test]
fn a_missed_should_fails_the_run_only_with_strict() {
    // A host without caching headers (WoA §7: hosts SHOULD send them).
    let fake = Fake::start("woa", "no-caching");
    let (code, report) = conformance(&fake.url("/"), &[]);
    assert_eq!(check(&report, "woa-7-caching-headers")["result"], "WARN", "{report:#}");
    assert_eq!(check(&report, "woa-7-conditional")["result"], "SKIP", "{report:#}");
    assert_eq!(report["summary"]["must_failures"], 0, "{report:#}");
    assert_eq!(code, 0, "a SHOULD alone does not fail the run");
    let (code, _) = conformance(&fake.url("/"), &["--strict"]);
    assert_eq!(code, 1, "--strict fails on a SHOULD");
    // `Cache-Control: no-store` is a caching header that forbids caching (§7: "appropriate").
    let fake = Fake::start("woa", "no-store");
    let (code, report) = conformance(&fake.url("/"), &[]);
    let caching = check(&report, "woa-7-caching-headers");
    assert_eq!(caching["result"], "WARN", "{report:#}");
    assert!(
        caching["evidence"]["found"].as_str().unwrap().contains("no-store"),
        "{caching:#}"
    );
    assert_eq!(
        with_result(&report, "WARN"),
        vec!["woa-7-caching-headers"],
        "{report:#}"
    );
    assert_eq!(with_result(&report, "FAIL"), Vec::<&str>::new(), "{report:#}");
    assert_eq!(code, 0, "a SHOULD alone does not fail the run");
}

#[test]
fn lenient_servers_get_refusal_probes_only_for_tools_the_checker_may_run() {
    // Servers that run a tool whatever its input (issue #37 item 5): without `--invoke`, only
    // `lookup_weather` (read-only) ran; `send_email` and `count_words` got no input they could
    // run with, on any protocol.
    for (protocol, path) in [("nact", "/nact"), ("otc", "/otc"), ("woa", "/")] {
        let fake = Fake::start(protocol, "lenient");
        let (_, report) = conformance(&fake.url(path), &[]);
        ran_only_what_it_was_given(&fake.effects(), &[]);
        let failed = with_result(&report, "FAIL");
        if protocol == "otc" {
            // OTC requires validation: the read-only tool, which may run, shows it is missing.
            assert_eq!(failed, vec!["otc-validation-error"], "{report:#}");
        } else {
            assert_eq!(failed, Vec::<&str>::new(), "{report:#}");
        }
        if protocol == "woa" {
            let errors = check(&report, "woa-5.2-errors");
            assert_eq!(errors["result"], "SKIP", "{report:#}");
            assert!(errors["reason"].as_str().unwrap().contains("4.2"), "{errors:#}");
        }
    }
}
