//! Issue #41.4: an import you can aim. `import openapi --list` prints each operation's tool
//! name, operationId, method and path (and why one is skipped) and writes nothing;
//! `--operations` takes the API's own operationIds (`issues/get`); the `next:` lines an import
//! of a Weatherbit-shaped description (an API key in the query) prints run as printed, in one
//! shell, with `toolhost` on PATH.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{BIN, Scratch, run};

/// GitHub's shape: operationIds with a `/`, and an operation a catalog cannot hold.
const ISSUES: &str = r#"{
  "openapi": "3.0.3",
  "info": {"title": "GitHub", "version": "1"},
  "servers": [{"url": "https://api.github.com"}],
  "paths": {
    "/repos/{owner}/{repo}/issues/{issue_number}": {
      "get": {"operationId": "issues/get", "summary": "Get an issue",
        "parameters": [
          {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "issue_number", "in": "path", "required": true, "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": {"title": {"type": "string"}}}}}}}}
    },
    "/repos/{owner}/{repo}/issues": {
      "get": {"operationId": "issues/list-for-repo", "summary": "List issues",
        "parameters": [
          {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}}
    },
    "/odd/{{x}}": {"get": {"operationId": "odd", "responses": {"200": {"description": "ok"}}}}
  }
}"#;

/// Weatherbit's shape: the key is a query parameter (`key`).
const WEATHER: &str = r#"{
  "openapi": "3.0.0",
  "info": {"title": "Weatherbit", "version": "2.0"},
  "servers": [{"url": "https://api.weatherbit.io/v2.0"}],
  "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "key"}}},
  "security": [{"key": []}],
  "paths": {
    "/current": {"get": {"operationId": "current", "summary": "Current weather",
      "parameters": [{"name": "city", "in": "query", "required": true, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": {"count": {"type": "integer"}}}}}}}}}
  }
}"#;

#[test]
fn list_writes_nothing_and_operations_match_operation_ids() {
    let dir = Scratch::new();
    let doc = dir.write("github.json", ISSUES);
    let out = dir.0.join("catalog");
    let listed = run(&[
        "import",
        "openapi",
        doc.to_str().unwrap(),
        "--list",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{listed:?}");
    assert!(
        stdout.contains("issues_get\tissues/get\tGET\t/repos/{owner}/{repo}/issues/{issue_number}\t\n"),
        "{stdout}"
    );
    assert!(stdout.contains("-\todd\tGET\t/odd/{{x}}\tits path has"), "{stdout}");
    assert!(!out.exists(), "--list wrote {}", out.display());
    assert!(!dir.0.join("toolhost.toml").exists());

    let selected = run(&[
        "import",
        "openapi",
        doc.to_str().unwrap(),
        "--operations",
        "issues/get",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(selected.status.success(), "{selected:?}");
    let yaml = std::fs::read_to_string(out.join("git_hub.yaml")).unwrap();
    assert!(yaml.contains("name: issues_get"), "{yaml}");
    assert!(!yaml.contains("issues_list_for_repo"), "{yaml}");
}

#[test]
fn every_next_line_of_an_import_runs_as_printed() {
    let dir = Scratch::new();
    dir.write("weatherbit.json", WEATHER);
    let imported = Command::new(BIN)
        .current_dir(&dir.0)
        .args(["import", "openapi", "weatherbit.json"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&imported.stderr);
    assert!(imported.status.success(), "{said}");
    assert!(said.contains("[secrets]: WEATHERBIT_API_KEY"), "{said}");
    let lines: Vec<&str> = said.lines().filter_map(|l| l.strip_prefix("next: ")).collect();
    assert_eq!(lines.len(), 3, "{said}");
    let path = format!(
        "{}:{}",
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = |script: String| {
        let mut command = Command::new("sh");
        command
            .current_dir(&dir.0)
            .env("PATH", &path)
            .env("TOOLHOST_LISTEN", "127.0.0.1:0")
            .args(["-c", &format!("set -e\n{script}")]);
        command
    };
    // The export, then the design server (stopped once it listens), then publishing.
    let mut serve = shell(format!("{}\nexec {}", lines[0], lines[1]))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut listening = false;
    let mut seen = Vec::new();
    for line in BufReader::new(serve.stderr.take().unwrap()).lines().take(200) {
        let line = line.unwrap();
        listening = line.contains("listening");
        seen.push(line);
        if listening {
            break;
        }
    }
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(listening, "{}: {seen:#?}", lines[1]);
    assert!(
        !dir.0.join("catalog/versions.lock").exists(),
        "the design server published"
    );
    let published = shell(format!("{}\n{}", lines[0], lines[2])).output().unwrap();
    assert!(published.status.success(), "{}: {published:?}", lines[2]);
    assert!(dir.0.join("catalog/versions.lock").exists());
}
