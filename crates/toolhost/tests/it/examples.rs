//! Issue #37.4: running the README's examples leaves the checkout as it was. Every
//! `toolhost serve` command the README gives for the bundled catalog or a directory under
//! `examples/` is run as written, from a copy of the repository's `examples/` (the README's
//! paths are relative to the checkout), until `/readyz` answers 200; then not one file there
//! differs, appears or disappears; so for every other example catalog. (That each shipped lock is byte for byte what `serve` writes
//! is `crates/sculpt/tests/it/shipped.rs`.)

use std::time::{Duration, Instant};

use crate::deploy::repo;
use crate::support::{Scratch, Server, copy_tree, tree};

/// The arguments after `toolhost serve` of every such command in the README and the book
/// (`docs/*.md`) that names an example directory or nothing (the bundled catalog); `--stdio`
/// ones are not servers on a port.
fn readme_serve_commands() -> Vec<Vec<String>> {
    let readme: String = crate::book::pages().into_iter().map(|p| p.text).collect();
    let mut commands = Vec::new();
    for line in readme.lines() {
        for (_, rest) in line
            .match_indices("toolhost serve")
            .map(|(i, m)| line.split_at(i + m.len()))
        {
            // The command ends where its inline code, shell list or comment does.
            let end = rest.find(['`', '&', '|', ';', '#', ',', ')']).unwrap_or(rest.len());
            let args: Vec<String> = rest[..end].split_whitespace().map(str::to_owned).collect();
            let examples = args.iter().any(|a| a.starts_with("examples/"));
            let bundled = args.is_empty() && rest.starts_with('`');
            if (examples || bundled) && !args.iter().any(|a| a == "--stdio") && !commands.contains(&args) {
                commands.push(args);
            }
        }
    }
    commands
}

#[tokio::test]
async fn serving_the_readme_examples_leaves_their_files_as_they_were() {
    let commands = readme_serve_commands();
    for expected in [
        vec!["--catalog", "examples/weather"],
        vec!["--agents", "examples/agents"],
        vec![],
    ] {
        assert!(
            commands.contains(&expected.iter().map(|a| (*a).to_owned()).collect()),
            "the README's `toolhost serve {}` was not found: {commands:?}",
            expected.join(" ")
        );
    }
    // Any other example catalog (those with a versions lock) is served the same way.
    let mut commands = commands;
    for entry in std::fs::read_dir(repo().join("examples")).unwrap() {
        let dir = entry.unwrap().path();
        let named = format!("examples/{}", dir.file_name().unwrap().to_string_lossy());
        let args = vec!["--catalog".to_owned(), named];
        if dir.join("versions.lock").exists() && !commands.contains(&args) {
            commands.push(args);
        }
    }
    let checkout = Scratch::new();
    copy_tree(&repo().join("examples"), &checkout.0.join("examples"));
    let before = tree(&checkout.0);
    let http = reqwest::Client::new();
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = Server::start(&args, &[], Some(&checkout.0));
        let started = Instant::now();
        while !http
            .get(format!("{}/readyz", server.base))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "`toolhost serve {}` is not ready",
                args.join(" ")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let logs = server.logs_when(|_| true);
        assert!(
            server.terminate(),
            "`toolhost serve {}` did not stop cleanly: {logs:#?}",
            args.join(" ")
        );
        let after = tree(&checkout.0);
        let changed: std::collections::BTreeSet<_> = before
            .keys()
            .chain(after.keys())
            .filter(|path| before.get(*path) != after.get(*path))
            .collect();
        assert!(
            changed.is_empty(),
            "`toolhost serve {}` changed files of the checkout: {changed:?}",
            args.join(" ")
        );
    }
}
