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
        // The protocol is probed, as discovery does.
        let (code, report) = conformance(&url, &["--invoke", "add_numbers", "--invoke", "divide_numbers"]);
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
    assert_eq!(xml.matches("<testcase ").count(), 23, "{xml}");
}

#[test]
fn servers_written_from_the_drafts_pass_and_each_broken_rule_is_named_by_its_section() {
    for (protocol, path) in [("nact", "/nact"), ("otc", "/otc"), ("woa", "/")] {
        let fake = Fake::start(protocol, "none");
        let (code, report) = conformance(&fake.url(path), &["--invoke", "send_email"]);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(report["summary"]["must_failures"], 0, "{report:#}");
        assert_eq!(with_result(&report, "FAIL"), Vec::<&str>::new(), "{report:#}");
    }
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
        ("otc", "no-health", "/otc", "otc-health", "health-check"),
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
        ("otc", "validation-as-400", "/otc", "otc-validation-error", "call-tool"),
        ("otc", "bare-array", "/otc", "otc-list-tools", "list-tools"),
        (
            "otc",
            "no-call-id",
            "/otc",
            "otc-call-id-generated",
            "call-tool-response",
        ),
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
        // `send_email` and `count_words` act; they got only requests that must be refused.
        assert!(effects.get("send_email").is_none(), "{protocol}: {effects}");
        assert!(effects.get("count_words").is_none(), "{protocol}: {effects}");
        // `lookup_weather` says it is read-only (N-ACT and WoA can say so; OTC's definition
        // has no place for it), so it is called for real.
        if protocol != "otc" {
            assert!(
                effects["lookup_weather"].as_u64().unwrap() >= 1,
                "{protocol}: {effects}"
            );
        }
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
    let fake = Fake::start("otc", "api-key");
    let (code, report) = conformance(&fake.url("/otc"), &["--protocol", "otc"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        check(&report, "otc-list-tools")["evidence"]["status"],
        401,
        "{report:#}"
    );
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
}

#[test]
fn a_refusal_probe_is_refused_by_every_version_the_id_could_resolve_to() {
    // `lookup_weather` 1.0.0 requires `city`, 2.0.0 (the latest) does not: `{}` is invalid for
    // the first only, so sending it as `Weather.lookup_weather` would run the second.
    let fake = Fake::start("otc", "loosened-latest");
    let (code, report) = conformance(&fake.url("/otc"), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(fake.effects(), serde_json::json!({}), "{report:#}");
    // The probes that every version refuses (a wrong type) still check resolution.
    assert_eq!(check(&report, "otc-version-resolution")["result"], "PASS", "{report:#}");
}
