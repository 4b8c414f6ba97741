//! Issue #41.1: the book's command blocks run as written. Each block below is taken from its
//! page and run by bash (`set -e`, bounded to a minute) in a scratch copy of `examples/`, with
//! this build's `toolhost` on PATH, against `toolhost serve --agents examples/agents` on a free
//! port in place of 8080 (the only change made to the text).

use std::path::Path;
use std::process::Command;

use crate::deploy::repo;
use crate::support::{BIN, Scratch, Server, copy_tree};

/// The first ```sh block after `marker` on the page `docs/PAGE`.
fn block(page: &str, marker: &str) -> String {
    let text = std::fs::read_to_string(repo().join("docs").join(page)).unwrap();
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("docs/{page} has no {marker:?}"));
    let rest = &text[start..];
    let rest = &rest[rest
        .find("```sh\n")
        .unwrap_or_else(|| panic!("no sh block after {marker:?}"))
        + 6..];
    rest[..rest.find("```").unwrap()].to_owned()
}

/// Runs `script` as described in the module docs; its output, which must be a success.
fn run_block(dir: &Path, base: &str, script: &str) -> String {
    let script = script.replace("http://127.0.0.1:8080", base);
    let path = format!(
        "{}:{}",
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("timeout")
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .env("TOOLHOST_CACHE_DIR", dir.join("cache"))
        .args(["60", "bash", "-c"])
        .arg(format!("set -e\n{script}"))
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script}\n---\n{said}");
    said
}

#[test]
fn the_client_and_agent_pages_blocks_run_as_written() {
    let dir = Scratch::new();
    copy_tree(&repo().join("examples"), &dir.0.join("examples"));
    let server = Server::start(&["--agents", "examples/agents"], &[], Some(&dir.0));
    let base = server.base.clone();

    let said = run_block(&dir.0, &base, &block("client.md", "skipped, with the reason)."));
    assert!(
        said.contains("convert_length") && dir.0.join("tools.json").exists(),
        "{said}"
    );

    let said = run_block(&dir.0, &base, &block("agents.md", "## Agents from the client"));
    assert!(said.contains("travel") && said.contains("2.5"), "{said}");
    assert!(
        std::fs::read_to_string(dir.0.join("travel.json"))
            .unwrap()
            .contains("\"system\"")
    );

    run_block(&dir.0, &base, &block("agents.md", "## One agent over stdio"));
    assert!(dir.0.join(".config/Claude/claude_desktop_config.json").exists());
    assert!(dir.0.join(".vscode/mcp.json").exists());

    let said = run_block(&dir.0, &base, &block("import.md", "## Aiming an import"));
    assert!(said.contains("search\tsearch\tGET\t/v1/search"), "{said}");
    assert!(server.terminate());
}
