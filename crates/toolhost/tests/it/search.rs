//! `toolhost search` and `toolhost eval search` as a user runs them (issue #42): against a
//! toolhost that ranks (N-ACT `?q=`), against an endpoint that does not (ranked by the client),
//! and on a catalog directory; `check` warns of tools too alike to tell apart.

use std::process::Output;

use serde_json::Value;

use crate::client_support::Local;
use crate::support::{BIN, Scratch};

const CATALOG: &str = r#"toolkits:
  - name: GitHub
    tools:
      - name: issues_add_labels
        description: "Add labels to an issue. Adds labels to an issue."
        versions:
          - version: 1.0.0
            outputs: [{ name: ok, type: boolean, description: Whether it worked. }]
            backend: { kind: static, output: { ok: true } }
      - name: issues_remove_label
        description: "Remove a label from an issue. Removes the specified label from the issue."
        versions:
          - version: 1.0.0
            outputs: [{ name: ok, type: boolean, description: Whether it worked. }]
            backend: { kind: static, output: { ok: true } }
      - name: actions_re_run_workflow_failed_jobs
        description: "Re-run failed jobs from a workflow run. Re-run all of the failed jobs in a workflow run."
        versions:
          - version: 1.0.0
            outputs: [{ name: ok, type: boolean, description: Whether it worked. }]
            backend: { kind: static, output: { ok: true } }
      - name: pulls_merge
        description: "Merge a pull request. Merges a pull request into the base branch."
        versions:
          - version: 1.0.0
            outputs: [{ name: ok, type: boolean, description: Whether it worked. }]
            backend: { kind: static, output: { ok: true } }
"#;

const QUERIES: &str = r#"{"q": "put the 'bug' label on issue 42", "want": ["issues_add_labels"]}
{"q": "rerun a failed CI workflow run", "want": ["actions_re_run_workflow_failed_jobs"]}

{"q": "merge PR 314", "want": ["pulls_merge"]}
{"q": "send an email to the team", "want": ["mail_send"]}
"#;

/// Runs `toolhost ARGS` off the async runtime (the server under test runs on it).
async fn toolhost(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(BIN)
            .args(&args)
            .env("NO_COLOR", "1")
            .output()
            .expect("run toolhost")
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn json_out(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "toolhost failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn search_uses_the_servers_ranking_and_ranks_itself_where_there_is_none() {
    let server = Local::start(CATALOG).await;
    let nact = format!("{}/nact", server.base);
    let found = json_out(
        &toolhost(args(&[
            "search",
            &nact,
            "take the wontfix label off issue 7",
            "--limit",
            "2",
            "--json",
            "--allow-private",
            "--no-cache",
        ]))
        .await,
    );
    assert_eq!(names(&found), ["issues_remove_label", "issues_add_labels"]);

    // OTC has no search: the client ranks what the server lists, and says so.
    let otc = format!("{}/otc", server.base);
    let output = toolhost(args(&[
        "search",
        &otc,
        "merge PR 314",
        "--limit",
        "1",
        "--json",
        "--allow-private",
        "--no-cache",
    ]))
    .await;
    assert!(String::from_utf8_lossy(&output.stderr).contains("ranked here"));
    let found = json_out(&output);
    assert_eq!(names(&found).len(), 1);
    assert!(names(&found)[0].ends_with("pulls_merge"), "{found}");

    // The table form, and nothing found said in words.
    let output = toolhost(args(&[
        "search",
        &nact,
        "zebra xylophone",
        "--allow-private",
        "--no-cache",
    ]))
    .await;
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("no tool matches"));
}

#[tokio::test]
async fn eval_search_reports_recall_mrr_and_misses_on_a_catalog_and_on_a_server() {
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.0.join("catalog")).unwrap();
    let catalog = scratch.write("catalog/github.yaml", CATALOG);
    let queries = scratch.write("queries.jsonl", QUERIES);
    let dir = catalog.parent().unwrap().to_str().unwrap().to_owned();
    let report = json_out(
        &toolhost(args(&[
            "eval",
            "search",
            queries.to_str().unwrap(),
            "--catalog",
            &dir,
            "--json",
        ]))
        .await,
    );
    assert_eq!(report["queries"], 4);
    assert_eq!(report["recall_at_5"], 0.75, "{report}");
    assert_eq!(report["ranked_by"], "catalog");
    assert_eq!(report["misses"][0]["q"], "send an email to the team");
    assert_eq!(report["misses"][0]["want"][0], "mail_send");

    let server = Local::start(CATALOG).await;
    let nact = format!("{}/nact", server.base);
    let over_server = json_out(
        &toolhost(args(&[
            "eval",
            "search",
            queries.to_str().unwrap(),
            &nact,
            "--json",
            "--allow-private",
            "--no-cache",
        ]))
        .await,
    );
    assert_eq!(over_server["ranked_by"], "server");
    assert_eq!(over_server["recall_at_5"], report["recall_at_5"]);
    assert_eq!(
        over_server["mrr"], report["mrr"],
        "the server ranks as the catalog does"
    );

    // Text, and a bad line named by its number.
    let text = toolhost(args(&["eval", "search", queries.to_str().unwrap(), "--catalog", &dir])).await;
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.starts_with("4 queries, ranked by the catalog: recall@1"), "{text}");
    assert!(text.contains("\"send an email to the team\": want mail_send"), "{text}");
    let bad = scratch.write("bad.jsonl", "{\"q\": \"x\", \"want\": []}\n{\"query\": 1}\n");
    let output = toolhost(args(&["eval", "search", bad.to_str().unwrap(), "--catalog", &dir])).await;
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("bad.jsonl:1: `want` names no tool"));
}

#[tokio::test]
async fn check_warns_of_tools_too_alike_to_tell_apart() {
    let scratch = Scratch::new();
    let alike = CATALOG.replace(
        "      - name: pulls_merge\n        description: \"Merge a pull request. Merges a pull request into the base branch.\"",
        "      - name: issues_add_label\n        description: \"Add labels to an issue. Adds labels to an issue.\"",
    );
    std::fs::create_dir_all(scratch.0.join("catalog")).unwrap();
    scratch.write("catalog/github.yaml", &alike);
    let dir = scratch.0.join("catalog");
    let output = toolhost(args(&["check", dir.to_str().unwrap()])).await;
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("tools `issues_add_label` and `issues_add_labels` are too alike to tell apart"),
        "{err}"
    );
    assert_eq!(err.matches("too alike").count(), 1, "{err}");
}
