//! Issue #41.3: design, then publish. `serve --dev` serves the catalog as it is and records no
//! version, so rewording a tool while designing publishes nothing (a reload that changes a
//! version in place is taken); the page and `check` name the tools with unpublished changes;
//! `check --lock` publishes them, and a server started without `--dev` holds to them.

use serde_json::Value;

use crate::ops::wait_ready;
use crate::support::{ONE_TOOL, Scratch, Server, json_of, run};

async fn unpublished(base: &str) -> Value {
    let summary = json_of(reqwest::Client::new().get(format!("{base}/ui/api/summary"))).await;
    summary["design"]["unpublished"].clone()
}

#[tokio::test]
async fn rewording_under_dev_publishes_nothing_and_check_lock_publishes() {
    let dir = Scratch::new();
    dir.write("demo.yaml", ONE_TOOL);
    let catalog = dir.0.to_str().unwrap().to_owned();
    let lock = dir.0.join("versions.lock");
    let server = Server::start(
        &["--catalog", &catalog, "--dev", "--reload-interval-ms", "100"],
        &[],
        None,
    );
    let base = server.base.clone();
    assert_eq!(unpublished(&base).await, serde_json::json!(["echo_city"]));

    // Reworded in place, twice: served at once, and still nothing recorded.
    let http = reqwest::Client::new();
    for (generation, wording) in [(2, "Repeat a city name."), (3, "Say a city name again.")] {
        dir.write("demo.yaml", &ONE_TOOL.replace("Echo a city name back.", wording));
        let status = wait_ready(&http, &base, |s| {
            s["catalog"]["generation"].as_u64() >= Some(generation)
        })
        .await;
        assert_eq!(status["last_reload_failed"], false, "{status}");
        // Served at once (a reload may come before the rename the write is: poll briefly).
        let mut tools = Value::Null;
        for _ in 0..50 {
            tools = json_of(http.get(format!("{base}/otc/tools"))).await;
            if tools["tools"][0]["description"] == wording {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(tools["tools"][0]["description"], wording, "{tools}");
    }
    assert!(!lock.exists(), "design mode recorded versions");
    let checked = run(&["check", &catalog]);
    let stderr = String::from_utf8_lossy(&checked.stderr);
    // No lock at all: `check` says none of the versions is published, once.
    assert!(
        stderr.contains("none of the catalog's 1 versions is locked"),
        "{stderr}"
    );

    // Publishing records the last wording; the page then has nothing unpublished.
    let published = run(&["check", "--lock", &catalog]);
    assert!(published.status.success(), "{published:?}");
    assert!(std::fs::read_to_string(&lock).unwrap().contains("echo_city"));
    assert_eq!(unpublished(&base).await, serde_json::json!([]));
    assert!(server.terminate());

    // Without --dev, the published version holds: a rewording is refused.
    dir.write(
        "demo.yaml",
        &ONE_TOOL.replace("Echo a city name back.", "Reworded after publishing."),
    );
    let checked = run(&["check", &catalog]);
    assert!(!checked.status.success(), "{checked:?}");

    // A new version after the published one: `check` names the tool as unpublished.
    let next = ONE_TOOL
        .replace("Echo a city name back.", "Say a city name again.")
        .trim_end()
        .to_owned()
        + "\n          - version: 1.1.0\n            inputs: [{ name: city, description: A city. }]\n            outputs: [{ name: city, type: string, description: The same city. }]\n            backend: { kind: native, function: testing.echo }\n";
    dir.write("demo.yaml", &next);
    let checked = run(&["check", &catalog]);
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(stderr.contains("unpublished changes in 1 tools: echo_city"), "{stderr}");
}
