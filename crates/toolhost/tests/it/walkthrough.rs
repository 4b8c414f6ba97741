//! Issue #41.1: the README's ten-minute walkthrough runs as written. The block marked
//! `<!-- run: walkthrough -->` is run by bash in a scratch copy of `examples/` (`book::Shell`:
//! this build's `toolhost` on PATH, bounded to two minutes; only its two ports are swapped for
//! free ones so that tests may run side by side). Then each step's artifact is where the README says:
//! the imported catalog and its config, the agent, the MCP client entry, the export with the
//! procedure, and the versions published only by the last step.

use serde_json::Value;

use crate::book::{Shell, group};
use crate::deploy::repo;

#[test]
fn the_readme_walkthrough_runs_as_written() {
    let walkthrough = group("walkthrough");
    assert_eq!(walkthrough.len(), 1, "the README has one walkthrough");
    let shell = Shell::new();
    let said = shell.run(&walkthrough[0], 120);
    let dir = shell.dir;
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
