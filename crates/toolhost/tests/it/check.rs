//! `toolhost check DIR`.

use crate::support::{Scratch, run};

#[test]
fn shipped_examples_pass() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/catalog");
    let out = run(&["check", dir]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("ok: 6 tools"), "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
}

#[test]
fn prints_every_problem_and_fails() {
    let dir = Scratch::new();
    dir.write(
        "a.yaml",
        r#"
toolkits:
  - name: Demo
    tools:
      - name: lookup_weather
        description: Weather.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, required: false, description: A city. }]
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
          - version: 1.1.0
            inputs: [{ name: city, description: A city. }]
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
      - name: BadName
        description: ""
        versions:
          - version: "1.0"
            backend: { kind: native, function: no.such }
"#,
    );
    dir.write("b.yaml", "toolkits: [ {");
    let out = run(&["check", dir.0.to_str().expect("utf-8 path")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The issue's own example message, with its place.
    assert!(
        stderr.contains("a.yaml: tool `lookup_weather` version 1.1.0"),
        "{stderr}"
    );
    assert!(
        stderr.contains("makes input `city` required, but 1.0.0 had it optional"),
        "{stderr}"
    );
    assert!(stderr.contains("description is empty"), "{stderr}");
    assert!(stderr.contains("`1.0` is not a semantic version"), "{stderr}");
    assert!(stderr.contains("no native function `no.such`"), "{stderr}");
    assert!(stderr.contains("b.yaml: failed to parse"), "{stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("not snake_case"),
        "{stderr}"
    );
}

#[test]
fn missing_directory_is_an_error() {
    let out = run(&["check", "/nonexistent/toolhost/catalog"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("failed to read the catalog"));
}

/// Issue #12.1: everything the project runs or cites is in the repository. A fresh clone has
/// nothing beside it, so no file may point outside it (the team's reading material lives there).
#[test]
fn nothing_in_the_repository_points_outside_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let forbidden = [format!("..{}shared", '/'), format!("PROTOCOLS{}md", '.')];
    let mut offenders = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map_while(Result::ok) {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') && name != ".ci" || name == "target" || name == "node_modules" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                for word in &forbidden {
                    if text.contains(word.as_str()) {
                        offenders.push(format!(
                            "{} mentions {word}",
                            path.strip_prefix(&root).unwrap_or(&path).display()
                        ));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
    assert!(root.join("docs/protocols.md").is_file());
    assert!(root.join("tests/vendor/otc-1.0/LICENSE").is_file());
}

const SECRET_TOOL: &str = r#"
toolkits:
  - name: Demo
    tools:
      - name: fetch_thing
        description: Fetches a thing.
        versions:
          - version: 1.0.0
            outputs: [{ name: thing, type: json, description: The thing. }]
            backend:
              kind: http
              base_url: https://api.example.com
              auth: { bearer: "{{secret.API_TOKNE}}" }
              steps: [{ name: get, path: /thing }]
              outputs: { thing: get.body }
"#;

/// Issue #12.9: `check FILE` checks one file; `check --config` finds what `serve --config`
/// would refuse (a misspelled `{{secret.NAME}}`), with the catalog given or the config's own.
#[test]
fn check_takes_one_file_and_the_servers_config() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    let file = dir.write("catalog/tools.yaml", SECRET_TOOL);
    let config = dir.write(
        "toolhost.toml",
        "catalog = \"catalog\"\n\n[secrets]\nAPI_TOKEN = { env = \"CHECK_TEST_API_TOKEN\" }\n",
    );
    let out = run(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "a single file is a catalog: {stderr}");
    assert!(
        stderr.contains("ok: 1 tools") && stderr.contains("pass --config"),
        "{stderr}"
    );

    let with_config = |args: &[&str]| {
        let mut command = std::process::Command::new(crate::support::BIN);
        command.args(args).env("CHECK_TEST_API_TOKEN", "a-test-token");
        command.output().unwrap()
    };
    let config = config.to_str().unwrap();
    for args in [
        vec!["check", "--config", config],
        vec!["check", "--config", config, file.to_str().unwrap()],
    ] {
        let out = with_config(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("API_TOKNE"), "{args:?}: {stderr}");
    }
    dir.write("catalog/tools.yaml", &SECRET_TOOL.replace("API_TOKNE", "API_TOKEN"));
    let out = with_config(&["check", "--config", config]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("pass --config"), "{stderr}");
}

/// Issue #22.1: `check --lock` writes `versions.lock` beside the catalog; afterwards an
/// in-place edit of a locked version fails `check` and `serve` names the tool and version,
/// and a new version is a warning until it is locked.
#[test]
fn a_locked_version_changed_in_place_fails_check_and_serve() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    let catalog = dir.0.join("catalog");
    let one = crate::support::ONE_TOOL;
    dir.write("catalog/demo.yaml", one);
    let out = run(&["check", catalog.to_str().unwrap(), "--lock"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lock = std::fs::read_to_string(catalog.join("versions.lock")).unwrap();
    assert!(lock.contains("\"echo_city\"") && lock.contains("\"1.0.0\""), "{lock}");

    // Edited in place: the description of the served version.
    dir.write(
        "catalog/demo.yaml",
        &one.replace("description: A city.", "description: A town."),
    );
    let out = run(&["check", catalog.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tool `echo_city`") && stderr.contains("version 1.0.0") && stderr.contains("changed in place"),
        "{stderr}"
    );
    let serve = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--catalog",
        catalog.to_str().unwrap(),
    ]);
    assert_eq!(serve.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&serve.stderr).contains("changed in place"));
    // `--lock` never rewrites a locked version.
    let out = run(&["check", catalog.to_str().unwrap(), "--lock"]);
    assert_eq!(out.status.code(), Some(1));

    // Restored, with a new version: a warning until it is locked.
    let grown = one.replace(
        "            backend: { kind: native, function: testing.echo }\n",
        "            backend: { kind: native, function: testing.echo }\n          - version: 1.1.0\n            inputs: [{ name: city, description: A city. }]\n            outputs: [{ name: city, type: string, description: The same city. }]\n            backend: { kind: native, function: testing.echo }\n",
    );
    dir.write("catalog/demo.yaml", &grown);
    let out = run(&["check", catalog.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("version 1.1.0 is not in") && stderr.contains("check --lock"),
        "{stderr}"
    );
}

/// Issue #22 (Also): every row of `docs/conformance.md` names a test that exists (a file and a
/// `fn` of that name in it), or says it is deliberately not a test (`—`).
#[test]
fn conformance_rows_name_existing_tests() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/conformance.md")).unwrap();
    // The requirement tables; the page ends with how to run the checker, whose tables are flags.
    let doc = doc.split("\n## Running the checks").next().unwrap_or_default();
    let mut rows = 0;
    for line in doc
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| §") && !l.starts_with("| Page"))
    {
        rows += 1;
        let refs: Vec<&str> = line
            .split('`')
            .filter(|part| part.starts_with("crates/") && part.contains(".rs::"))
            .collect();
        assert!(!refs.is_empty() || line.contains("| —"), "a row without a test: {line}");
        for reference in refs {
            let (file, name) = reference.split_once("::").unwrap();
            let text =
                std::fs::read_to_string(root.join(file)).unwrap_or_else(|_| panic!("{file} does not exist: {line}"));
            assert!(
                text.contains(&format!("fn {name}(")),
                "{file} has no test `{name}`: {line}"
            );
        }
    }
    assert!(rows >= 40, "the tables are there: {rows} rows");
}

/// Issue #14/#15: `check` says which protocols reach a tool that not all four do.
#[test]
fn check_says_which_protocols_reach_a_tool() {
    let dir = Scratch::new();
    let file = dir.write(
        "a.yaml",
        r#"
toolkits:
  - name: Demo
    tools:
      - name: send_sms
        description: Sends a text message with the caller's key.
        requirements: { secrets: [SMS_KEY] }
        versions:
          - version: 1.0.0
            inputs: [{ name: to, description: The number. }]
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
      - name: count_tags
        description: Counts tags.
        versions:
          - version: 1.0.0
            inputs: [{ name: tags, type: json, schema: { type: array, items: { type: string } }, description: The tags. }]
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
"#,
    );
    let out = run(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: tool `send_sms` is served over OTC only"),
        "{stderr}"
    );
    // Said once (issue #32.8), with why (#38.2).
    assert_eq!(stderr.matches("tool `count_tags`").count(), 1, "{stderr}");
    assert!(
        stderr.contains("note: tool `count_tags` is not on N-ACT: its required input `tags` is `json`"),
        "{stderr}"
    );
}
