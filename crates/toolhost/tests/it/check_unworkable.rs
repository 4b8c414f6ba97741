//! Issue #32.8 and .10: `toolhost check` names the tools that load but cannot work (a path hole
//! no input fills, a field the upstream requires that nothing sends, secrets `serve` would
//! refuse without a config), says each problem once, and says nothing of secrets when a catalog
//! reads none.

use crate::support::{ONE_TOOL, Scratch, run};

/// A sculpted tool with a path hole left from its description and a required field it does not
/// send, reading a server secret.
const UNWORKABLE: &str = r#"
toolkits:
  - name: Flows
    backend: { kind: http, base_url: "https://flows.example.com", auth: { bearer: "{{secret.FLOWS_TOKEN}}" } }
    tools:
      - name: run_flow
        description: Run a flow.
        versions:
          - version: 1.0.0
            inputs: [{ name: name, description: The run's name. }]
            outputs: [{ name: result, type: json, required: false, description: The answer. }]
            backend:
              kind: http
              steps:
                - { name: call, method: PUT, path: "/flows/{flow_id}/runs", body: { name: "{{input.name}}" }, requires: [body.name, body.steps] }
              outputs: { result: call.body }
"#;

/// One tool whose two versions take the same json input.
const JSON_TWICE: &str = r#"
toolkits:
  - name: Shapes
    tools:
      - name: draw
        description: Draw shapes.
        versions:
          - version: 1.0.0
            inputs: [{ name: shape, type: json, schema: { type: object }, description: A shape. }]
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
          - version: 1.1.0
            inputs: [{ name: shape, type: json, schema: { type: object }, description: "A shape, drawn." }]
            returns_nothing: true
            backend: { kind: native, function: testing.echo }
"#;

fn check(args: &[&str]) -> (bool, String) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let out = run(&all);
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn check_names_tools_that_load_but_cannot_work() {
    let dir = Scratch::new();
    let file = dir.write("flows.yaml", UNWORKABLE);
    let (ok, said) = check(&[file.to_str().unwrap()]);
    assert!(ok, "the catalog loads: {said}");
    assert!(
        said.contains("tool `run_flow` version 1.0.0, backend: step `call`: the path `/flows/{flow_id}/runs` keeps `{flow_id}`, which no input fills"),
        "{said}"
    );
    assert!(
        said.contains("step `call`: the upstream requires `body.steps`, which no input or constant provides")
            && !said.contains("requires `body.name`"),
        "{said}"
    );
    // `serve` without a config refuses a catalog reading secrets: said, with what to do.
    assert!(
        said.contains(
            "reads the server secrets FLOWS_TOKEN, and `serve` refuses it unless its config's [secrets] gives them"
        ),
        "{said}"
    );
    // Three problems of the tool and the unlocked versions (issue #31.1).
    assert!(said.contains("ok: 1 tools, 1 versions, 0 agents, 4 warnings"), "{said}");

    // With the config, a missing secret is the error `serve` would stop at.
    let config = dir.write("toolhost.toml", "[secrets]\n");
    let (ok, said) = check(&["--config", config.to_str().unwrap(), file.to_str().unwrap()]);
    assert!(!ok && said.contains("FLOWS_TOKEN"), "{said}");
}

#[test]
fn check_says_each_problem_once_and_no_secret_note_without_secrets() {
    let dir = Scratch::new();
    let file = dir.write("shapes.yaml", JSON_TWICE);
    let (ok, said) = check(&[file.to_str().unwrap()]);
    assert!(ok, "{said}");
    // Every version off N-ACT for one reason: said once, for the tool (#38.2).
    assert_eq!(said.matches("is not on N-ACT").count(), 1, "{said}");
    assert!(
        said.contains("note: tool `draw` is not on N-ACT: its required input `shape` is `json`"),
        "{said}"
    );
    // The unlocked versions (issue #31.1); the note is not a warning.
    assert!(said.contains("1 warnings"), "{said}");

    let plain = dir.write("one.yaml", ONE_TOOL);
    let (ok, said) = check(&[plain.to_str().unwrap()]);
    assert!(ok, "{said}");
    assert!(
        !said.contains("secret"),
        "a catalog without secrets hears nothing of them: {said}"
    );
}
