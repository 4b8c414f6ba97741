//! Issue #41.1: the README's ten-minute walkthrough runs as written. The block between the
//! README's `<!-- walkthrough` markers is run by bash in a scratch copy of `examples/`, with this
//! build's `toolhost` on PATH, bounded to two minutes; only its two ports are swapped for free
//! ones so that tests may run side by side. Then each step's artifact is where the README says:
//! the imported catalog and its config, the agent, the MCP client entry, the export with the
//! procedure, and the versions published only by the last step.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::client_peers::free_port;
use crate::deploy::repo;
use crate::support::{BIN, Scratch, copy_tree};

/// The walkthrough's shell text, as the README has it.
fn walkthrough() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find("<!-- walkthrough").expect("the README has a walkthrough");
    let end = readme.find("<!-- /walkthrough -->").expect("the walkthrough ends");
    let block = &readme[start..end];
    let block = &block[block.find("```sh\n").expect("a sh block") + 6..];
    block[..block.find("```").unwrap()].to_owned()
}

#[test]
fn the_readme_walkthrough_runs_as_written() {
    // `serve`'s default address (8080) is moved by its environment variable.
    let port = free_port();
    let script = walkthrough()
        .replace("8080", &port.to_string())
        .replace("8765", &free_port().to_string());
    let dir = Scratch::new();
    copy_tree(&repo().join("examples"), &dir.0.join("examples"));
    let path = format!(
        "{}:{}",
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("timeout")
        .current_dir(&dir.0)
        .env("PATH", path)
        .env("HOME", &dir.0)
        .env("TOOLHOST_LISTEN", format!("127.0.0.1:{port}"))
        .env("TOOLHOST_CACHE_DIR", dir.0.join("cache"))
        .args(["120", "bash", "-c"])
        .arg(format!(
            "set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{script}"
        ))
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script}\n---\n{said}");
    assert!(said.contains("search\tsearch\tGET\t/v1/search"), "--list: {said}");
    assert!(said.contains("\"Berlin\""), "the agent's tool answered: {said}");
    assert!(said.contains("forecaster"), "{said}");
    assert!(dir.0.join("weather/meteo.yaml").exists());
    assert!(dir.0.join("toolhost.toml").exists());
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(dir.0.join(".mcp.json")).unwrap()).unwrap();
    let args = mcp["mcpServers"]["forecaster"]["args"].to_string();
    assert!(args.contains("--stdio") && args.contains("forecaster"), "{mcp}");
    let export: Value = serde_json::from_str(&std::fs::read_to_string(dir.0.join("forecaster.json")).unwrap()).unwrap();
    assert!(export["system"].as_str().unwrap().contains("find_place()"), "{export}");
    assert_eq!(export["tools"].as_array().unwrap().len(), 2, "{export}");
    let lock = std::fs::read_to_string(dir.0.join("weather/versions.lock")).unwrap();
    assert!(lock.contains("find_place") && lock.contains("weather_at"), "{lock}");
}

#[test]
fn the_readme_is_a_front_page_linking_every_page_of_the_book() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.len() < 20_000, "the README is {} bytes", readme.len());
    assert!(readme.contains("cargo install --locked --path crates/toolhost"));
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                readme.contains(&format!("](docs/{name}")),
                "the README does not link docs/{name}"
            );
        }
    }
    for link in readme.split("](docs/").skip(1) {
        let file = link.split([')', '#']).next().unwrap();
        assert!(
            repo().join("docs").join(file).exists(),
            "docs/{file} is linked but missing"
        );
    }
}
