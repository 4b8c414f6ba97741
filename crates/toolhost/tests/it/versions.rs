//! Issue #31.1: a served version never moves across a restart, without relying on the operator.
//! `serve` records what it serves (`versions.lock` beside the catalog, or in `--state-dir`) and
//! refuses at start a catalog that changes a recorded version in place, removes one or slips one
//! in before it; a retired version keeps its number.

use std::path::Path;

use serde_json::Value;

use crate::support::{Scratch, Server, json_of, run, run_bounded};

/// `echo_city` with the versions given as `(semver, description, retired)`.
fn catalog(versions: &[(&str, &str, bool)]) -> String {
    let mut text = String::from(
        "toolkits:\n  - name: Demo\n    tools:\n      - name: echo_city\n        description: Echo a city name back.\n        versions:\n",
    );
    for (semver, description, retired) in versions {
        text.push_str(&format!(
            "          - version: {semver}\n            description: {description}\n            retired: {retired}\n            inputs: [{{ name: city, description: A city. }}]\n            outputs: [{{ name: city, type: string, description: The same city. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
        ));
    }
    text
}

const THREE: [(&str, &str, bool); 3] = [
    ("1.0.0", "Echo a city.", false),
    ("1.1.0", "Echo a city again.", false),
    ("1.2.0", "Echo a city once more.", false),
];

/// `serve` on `dir` to completion (it fails before listening): its exit code and stderr.
fn refused(dir: &Path, more: &[&str]) -> String {
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--catalog", dir.to_str().unwrap()];
    args.extend_from_slice(more);
    let out = run_bounded(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "serve should refuse: {stderr}");
    stderr
}

async fn signature(server: &Server, number: u32) -> (u16, Value) {
    let response = reqwest::get(format!("{}/nact/tools/echo_city/versions/{number}", server.base))
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// Starts `serve` on `dir` (with `more` flags) and returns it once it listens.
fn serve(dir: &Path, more: &[&str]) -> Server {
    let mut args = vec!["--catalog", dir.to_str().unwrap(), "--reload-interval-ms", "0"];
    args.extend_from_slice(more);
    Server::start(&args, &[], None)
}

/// Starts `serve` on `dir`, looking for changes every 100 ms, and returns it once it listens.
fn watching(dir: &Path) -> Server {
    Server::start(
        &["--catalog", dir.to_str().unwrap(), "--reload-interval-ms", "100"],
        &[],
        None,
    )
}

#[tokio::test]
async fn serve_records_what_it_serves_and_a_restart_refuses_an_in_place_edit() {
    let dir = Scratch::new();
    dir.write("demo.yaml", &catalog(&THREE));
    let server = serve(&dir.0, &[]);
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("recorded the served versions")));
    assert!(
        logs.iter()
            .any(|x| x.contains("recorded the served versions") && x.contains("versions.lock")),
        "serve says it wrote the record: {logs:#?}"
    );
    assert_eq!(signature(&server, 1).await.1["description"], "Echo a city.");
    assert!(server.terminate());
    let lock = std::fs::read_to_string(dir.0.join("versions.lock")).unwrap();
    for semver in ["1.0.0", "1.1.0", "1.2.0"] {
        assert!(lock.contains(&format!("\"{semver}\"")), "{lock}");
    }

    // Version 1 edited in place, no lock committed by anyone: never served as version 1.
    let mut edited = THREE;
    edited[0].1 = "Echo a town.";
    dir.write("demo.yaml", &catalog(&edited));
    let stderr = refused(&dir.0, &[]);
    assert!(
        stderr.contains("tool `echo_city`") && stderr.contains("version 1.0.0") && stderr.contains("changed in place"),
        "{stderr}"
    );

    // Restored, and 1.1.0 removed: versions/2 would answer with 1.2.0, and currentVersion go down.
    dir.write("demo.yaml", &catalog(&[THREE[0], THREE[2]]));
    let stderr = refused(&dir.0, &[]);
    assert!(
        stderr.contains("version 1.1.0") && stderr.contains("retired: true"),
        "{stderr}"
    );

    // A version slipped in before a recorded one would renumber it.
    dir.write(
        "demo.yaml",
        &catalog(&[THREE[0], ("1.0.5", "Echo a city, halfway.", false), THREE[1], THREE[2]]),
    );
    let stderr = refused(&dir.0, &[]);
    assert!(
        stderr.contains("version 1.0.5") && stderr.contains("other N-ACT numbers"),
        "{stderr}"
    );

    // Retired explicitly: its slot and number stay, so version 3 is still 1.2.0 and current.
    let mut retired = THREE;
    retired[1].2 = true;
    dir.write("demo.yaml", &catalog(&retired));
    let server = serve(&dir.0, &[]);
    let (status, third) = signature(&server, 3).await;
    assert_eq!(status, 200, "{third}");
    assert_eq!(third["semver"], "1.2.0");
    assert_eq!(third["currentVersion"], 3);
    assert_eq!(signature(&server, 2).await.0, 404, "the retired version is not served");
    assert_eq!(signature(&server, 1).await.1["description"], "Echo a city.");
    assert!(server.terminate());
}

/// Issue #31.1: `currentVersion` never goes down. Retiring the current version is refused at the
/// next start; publishing a newer one first makes room to retire it.
#[tokio::test]
async fn the_current_version_is_retired_only_once_a_newer_one_is_served() {
    let dir = Scratch::new();
    dir.write("demo.yaml", &catalog(&THREE));
    let server = serve(&dir.0, &[]);
    assert_eq!(signature(&server, 3).await.1["currentVersion"], 3);
    assert!(server.terminate());

    let mut retired = THREE;
    retired[2].2 = true;
    dir.write("demo.yaml", &catalog(&retired));
    let stderr = refused(&dir.0, &[]);
    assert!(
        stderr.contains("version 1.2.0") && stderr.contains("currentVersion never goes down"),
        "{stderr}"
    );

    let mut replaced = retired.to_vec();
    replaced.push(("1.3.0", "Echo a city, as 1.1.0 did.", false));
    dir.write("demo.yaml", &catalog(&replaced));
    let server = serve(&dir.0, &[]);
    let (status, fourth) = signature(&server, 4).await;
    assert_eq!(status, 200, "{fourth}");
    assert_eq!(fourth["currentVersion"], 4);
    assert_eq!(signature(&server, 3).await.0, 404, "1.2.0 is retired");
    assert!(server.terminate());
}

#[tokio::test]
async fn with_a_state_dir_the_record_is_kept_there_and_holds_across_restarts() {
    let (dir, state) = (Scratch::new(), Scratch::new());
    dir.write("demo.yaml", &catalog(&THREE[..2]));
    let state_dir = state.0.join("toolhost");
    let flags = ["--state-dir", state_dir.to_str().unwrap()];
    let server = serve(&dir.0, &flags);
    assert_eq!(signature(&server, 2).await.0, 200);
    assert!(server.terminate());
    assert!(
        !dir.0.join("versions.lock").exists(),
        "the catalog directory is left alone"
    );
    let lock = std::fs::read_to_string(state_dir.join("versions.lock")).unwrap();
    assert!(lock.contains("\"1.1.0\""), "{lock}");

    let mut edited = THREE;
    edited[1].1 = "Echo something else.";
    dir.write("demo.yaml", &catalog(&edited[..2]));
    let stderr = refused(&dir.0, &flags);
    assert!(
        stderr.contains("version 1.1.0") && stderr.contains("changed in place"),
        "{stderr}"
    );

    // A new version after the recorded ones is served, and recorded.
    dir.write("demo.yaml", &catalog(&THREE));
    let server = serve(&dir.0, &flags);
    assert_eq!(signature(&server, 3).await.1["semver"], "1.2.0");
    assert!(server.terminate());
    let lock = std::fs::read_to_string(state_dir.join("versions.lock")).unwrap();
    assert!(lock.contains("\"1.2.0\""), "{lock}");
}

#[tokio::test]
async fn a_reload_records_the_versions_it_adds() {
    let dir = Scratch::new();
    dir.write("demo.yaml", &catalog(&THREE[..2]));
    let server = watching(&dir.0);
    dir.write("demo.yaml", &catalog(&THREE));
    let http = reqwest::Client::new();
    for _ in 0..100 {
        let ready = json_of(http.get(format!("{}/readyz", server.base))).await;
        if ready["catalog"]["generation"].as_u64() > Some(1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(signature(&server, 3).await.0, 200);
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("recorded the new served versions")));
    assert!(
        logs.iter().any(|x| x.contains("recorded the new served versions")),
        "{logs:#?}"
    );
    // Writing the record is not a catalog change: no second reload follows it.
    std::thread::sleep(std::time::Duration::from_millis(600));
    let ready = json_of(http.get(format!("{}/readyz", server.base))).await;
    assert_eq!(ready["catalog"]["generation"], 2, "{ready}");
    assert!(server.terminate());
    let lock = std::fs::read_to_string(dir.0.join("versions.lock")).unwrap();
    assert!(lock.contains("\"1.2.0\""), "{lock}");
}

#[test]
fn check_warns_of_an_unlocked_catalog_and_counts_every_warning_it_prints() {
    let dir = Scratch::new();
    dir.write("demo.yaml", &catalog(&THREE));
    let out = run(&["check", dir.0.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings = stderr.lines().filter(|l| l.starts_with("warning")).count();
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("warning") && l.contains("no versions lock yet") && l.contains("3 versions")),
        "{stderr}"
    );
    assert!(warnings >= 1, "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("ok:") && l.ends_with(&format!(", {warnings} warnings"))),
        "every warning printed is counted: {stderr}"
    );
    assert!(!stderr.contains(" 0 warnings"), "{stderr}");
}

/// A tool `name` in toolkit `Math` with the `id:` it keeps across a rename, and one version.
fn with_id(name: &str) -> String {
    format!(
        "toolkits:\n  - name: Math\n    tools:\n      - name: {name}\n        id: 6f1f3a52-9d8e-4a4e-9d55-7d2c0f5b1e11\n        description: A tool.\n        versions:\n          - version: 1.0.0\n            description: Echo a city.\n            inputs: [{{ name: city, description: A city. }}]\n            outputs: [{{ name: city, type: string, description: The same city. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
    )
}

/// Issue #37.13: a tool renamed with its `id:` kept would be version 1 of another tool under the
/// N-ACT toolId clients pinned. A restart refuses it (the record holds the toolId), and so does a
/// reload, which keeps serving the tool under its own name.
#[tokio::test]
async fn a_tool_renamed_with_its_id_kept_is_refused_on_restart_and_on_reload() {
    const ID: &str = "6f1f3a52-9d8e-4a4e-9d55-7d2c0f5b1e11";
    let dir = Scratch::new();
    dir.write("math.yaml", &with_id("add_numbers"));
    let server = serve(&dir.0, &[]);
    let tool = json_of(reqwest::Client::new().get(format!("{}/nact/tools/{ID}", server.base))).await;
    assert_eq!(tool["name"], "add_numbers", "{tool}");
    assert!(server.terminate());
    let lock = std::fs::read_to_string(dir.0.join("versions.lock")).unwrap();
    assert!(lock.contains(&format!("\"{ID}\": \"add_numbers\"")), "{lock}");

    dir.write("math.yaml", &with_id("divide_numbers"));
    let stderr = refused(&dir.0, &[]);
    assert!(
        stderr.contains("tool `divide_numbers`")
            && stderr.contains(ID)
            && stderr.contains("served as tool `add_numbers`"),
        "{stderr}"
    );

    dir.write("math.yaml", &with_id("add_numbers"));
    let server = watching(&dir.0);
    dir.write("math.yaml", &with_id("divide_numbers"));
    let http = reqwest::Client::new();
    let status = crate::ops::wait_ready(&http, &server.base, |s| s["reload_failures"] == 1).await;
    assert_eq!(status["reload_failures"], 1, "{status}");
    let tool = json_of(http.get(format!("{}/nact/tools/{ID}", server.base))).await;
    assert_eq!(tool["name"], "add_numbers", "{tool}");
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("served as tool")));
    assert!(
        logs.iter().any(|x| x.contains("served as tool `add_numbers`")),
        "{logs:#?}"
    );
    assert!(server.terminate());
}

/// Issue #37.14: a reload whose new versions cannot be recorded is refused, as `serve` refuses
/// them at start. The record cannot be written because a directory stands where its temporary
/// file goes (root cannot write that either). The versions served before keep serving; the new
/// one is not served, and once the record can be written again the next reload serves it.
#[tokio::test]
async fn a_reload_that_cannot_record_its_versions_is_refused() {
    let dir = Scratch::new();
    dir.write("demo.yaml", &catalog(&THREE[..2]));
    let server = watching(&dir.0);
    assert_eq!(signature(&server, 2).await.0, 200);
    let blocker = dir.0.join(format!("versions.lock.{}.tmp", server.pid()));
    std::fs::create_dir(&blocker).unwrap();
    dir.write("demo.yaml", &catalog(&THREE));
    let http = reqwest::Client::new();
    let status = crate::ops::wait_ready(&http, &server.base, |s| s["reload_failures"] == 1).await;
    assert_eq!(status["reload_failures"], 1, "{status}");
    assert_eq!(signature(&server, 3).await.0, 404, "1.2.0 is not served unrecorded");
    assert_eq!(signature(&server, 2).await.0, 200);
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("cannot record")));
    assert!(
        logs.iter()
            .any(|x| x.contains("cannot record") && x.contains("--state-dir")),
        "{logs:#?}"
    );
    let lock = std::fs::read_to_string(dir.0.join("versions.lock")).unwrap();
    assert!(!lock.contains("\"1.2.0\""), "{lock}");

    std::fs::remove_dir(&blocker).unwrap();
    server.signal("-HUP");
    let status = crate::ops::wait_ready(&http, &server.base, |s| s["catalog"]["generation"] == 2).await;
    assert_eq!(status["catalog"]["generation"], 2, "{status}");
    assert_eq!(signature(&server, 3).await.0, 200);
    let lock = std::fs::read_to_string(dir.0.join("versions.lock")).unwrap();
    assert!(lock.contains("\"1.2.0\""), "{lock}");
    assert!(server.terminate());
}

/// Issue #37.14: a lock of a format this toolhost does not know stops `serve` and `check
/// --lock`, and is left byte for byte as it was.
#[test]
fn a_lock_of_an_unknown_format_is_refused_and_left_as_it_is() {
    let dir = Scratch::new();
    dir.write("demo.yaml", &catalog(&THREE));
    let text = "{\n  \"format\": 9,\n  \"tools\": {}\n}\n";
    let lock = dir.write("versions.lock", text);
    let stderr = refused(&dir.0, &[]);
    assert!(
        stderr.contains("format 9") && stderr.contains("upgrade toolhost"),
        "{stderr}"
    );
    let out = run(&["check", "--lock", dir.0.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(lock).unwrap(), text);
}
