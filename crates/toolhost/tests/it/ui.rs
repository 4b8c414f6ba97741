//! Issue #17: the catalog page at `/ui`. In a real headless Chromium driven by Selenium
//! (tests/peer/ui_browser.py): search, filter, a tool's page, a diff of two versions, the
//! try-it form with a bad value then a good one, an export, a narrow window, no request leaving
//! the server, and a hidden tool absent for a caller without its scope. Here too: what the page
//! needs from the server without a browser (switching it off, its API behind authentication,
//! its lockfile the same as `toolhost lock` writes).

use std::path::PathBuf;

use serde_json::Value;

use crate::client_peers::installed;
use crate::support::{Scratch, Server, json_of, run};

fn peer_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peer")
}

/// Chromium and its driver, from Debian's packages; `None` (with a note) when absent, unless
/// the peers are required.
pub fn chromium() -> Option<()> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromedriver"]
        .iter()
        .all(|p| std::path::Path::new(p).exists());
    if !found {
        crate::client_peers::skip_unless_required("chromium or chromedriver");
        return None;
    }
    Some(())
}

pub fn browse(args: &[&str]) {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let mut command = std::process::Command::new(python);
    command
        .current_dir(peer_dir())
        .arg(peer_dir().join("ui_browser.py"))
        .args(args);
    crate::federation_peers::run_client(command);
}

#[test]
fn the_catalog_page_works_in_a_real_browser() {
    if chromium().is_none() {
        return;
    }
    let server = Server::start(&[], &[], None);
    let shots = Scratch::new();
    browse(&[&server.base, shots.0.to_str().unwrap()]);
    assert!(shots.0.join("ui-catalog.png").exists() && shots.0.join("ui-tool.png").exists());
    assert!(server.terminate());
}

/// A config whose `lookup` tools need scope `secret`: key `Plain-Key-1` lacks it,
/// `Lookup-Key-2` has it.
fn scoped_config(dir: &Scratch) -> PathBuf {
    let plain = toolhost_server::auth::hash_key("Plain-Key-1");
    let lookup = toolhost_server::auth::hash_key("Lookup-Key-2");
    dir.write(
        "toolhost.toml",
        &format!(
            "[auth]\ntag_scopes = {{ lookup = [\"secret\"] }}\n\n[[auth.api_keys]]\nname = \"plain\"\nsha256 = \"{plain}\"\n\n[[auth.api_keys]]\nname = \"lookup\"\nsha256 = \"{lookup}\"\nscopes = [\"secret\"]\n"
        ),
    )
}

#[test]
fn a_hidden_tool_is_absent_from_the_page_for_a_caller_without_its_scope() {
    if chromium().is_none() {
        return;
    }
    let dir = Scratch::new();
    let config = scoped_config(&dir);
    let server = Server::start(&["--config", config.to_str().unwrap()], &[], None);
    browse(&["--auth", &server.base, "Plain-Key-1", "Lookup-Key-2"]);
    assert!(server.terminate());
}

#[tokio::test]
async fn the_page_is_public_its_api_is_not_and_it_can_be_switched_off() {
    let dir = Scratch::new();
    let config = scoped_config(&dir);
    let server = Server::start(&["--config", config.to_str().unwrap()], &[], None);
    let http = reqwest::Client::new();
    let page = http.get(format!("{}/ui/", server.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(
        policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"),
        "{policy}"
    );
    let api = http
        .get(format!("{}/ui/api/summary", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        api.status(),
        401,
        "the data needs the same credentials as the protocols"
    );
    let plain = json_of(
        http.get(format!("{}/ui/api/summary", server.base))
            .header("otc-api-key", "Plain-Key-1"),
    )
    .await;
    let lookup = json_of(
        http.get(format!("{}/ui/api/summary", server.base))
            .header("otc-api-key", "Lookup-Key-2"),
    )
    .await;
    assert_eq!(
        (plain["tools"].as_u64(), lookup["tools"].as_u64()),
        (Some(5), Some(6)),
        "{plain} {lookup}"
    );
    let hidden = http
        .get(format!("{}/ui/api/tools/lookup_country_by_code", server.base))
        .header("otc-api-key", "Plain-Key-1")
        .send()
        .await
        .unwrap();
    assert_eq!(hidden.status(), 404, "a hidden tool is as unknown as any other");
    assert!(server.terminate());

    // Off with --ui false (and by default when not listening on loopback).
    for args in [
        &["--ui", "false"][..],
        &["--listen", "0.0.0.0:0", "--public-url", "http://127.0.0.1:9"][..],
    ] {
        let server = Server::start(args, &[], None);
        let base = server.base.replace("0.0.0.0", "127.0.0.1");
        let page = reqwest::get(format!("{base}/ui/")).await.unwrap();
        assert_eq!(page.status(), 404, "{args:?}");
        assert!(server.terminate());
    }
}

#[tokio::test]
async fn the_pages_lockfile_is_the_one_toolhost_lock_writes() {
    let server = Server::start(&[], &[], None);
    let from_page = json_of(reqwest::Client::new().get(format!(
        "{}/ui/api/export?format=lock&tools=convert_length@1.2.0,add_numbers",
        server.base
    )))
    .await;
    let dir = Scratch::new();
    let file = dir.0.join("toolhost.lock");
    let nact = format!("{}/nact", server.base);
    let locked = run(&[
        "lock",
        &nact,
        "--allow-private",
        "--no-cache",
        "--output",
        file.to_str().unwrap(),
    ]);
    assert!(locked.status.success(), "{}", String::from_utf8_lossy(&locked.stderr));
    let from_cli: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for name in ["convert_length", "add_numbers"] {
        let pick = |lock: &Value| {
            lock["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(pick(&from_page), pick(&from_cli), "{name}");
    }
    assert!(server.terminate());
}

/// Issue #38.2: `check` and the catalog page say which tools N-ACT does not show and why, and
/// which optional inputs its signature leaves out.
#[tokio::test]
async fn check_and_the_page_say_which_tools_are_off_nact_and_why() {
    let dir = Scratch::new();
    dir.write(
        "issues.yaml",
        r#"
toolkits:
  - name: Issues
    tools:
      - name: add_labels
        description: Adds labels to an issue.
        versions:
          - version: 1.0.0
            inputs:
              - { name: labels, description: The labels., schema: { type: array, items: { type: string } } }
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
      - name: list_issues
        description: Lists issues.
        versions:
          - version: 1.0.0
            inputs:
              - { name: labels, required: false, description: Only these., schema: { type: array } }
              - { name: state, required: false, description: Which. }
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
"#,
    );
    let out = run(&["check", dir.0.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "note: tool `add_labels` is not on N-ACT: its required input `labels` is `json` (a JSON Schema of its own), which N-ACT cannot express"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: tool `list_issues` is on N-ACT without its optional input `labels`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("ok: 2 tools, 2 versions, 0 agents, 1 warnings"),
        "notes are not warnings: {stderr}"
    );
    let server = Server::start(&["--catalog", dir.0.to_str().unwrap()], &[], None);
    let summary = json_of(reqwest::Client::new().get(format!("{}/ui/api/summary", server.base))).await;
    assert_eq!(summary["tools"], 1, "the page lists N-ACT's tools: {summary}");
    assert_eq!(summary["off_nact"][0]["name"], "add_labels", "{summary}");
    assert!(
        summary["off_nact"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("required input `labels`"),
        "{summary}"
    );
    assert!(server.terminate());
}
