//! A tool's `execution` key (docs/tasks.md): whether it runs as a task, and whether it asks its
//! first questions before it becomes one.

use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{Severity, TaskSupport};

fn catalog(execution: &str) -> String {
    format!(
        "toolkits:\n  - name: Jobs\n    tools:\n      - name: run\n        description: Runs a job.\n        execution: {execution}\n        versions:\n          - version: 1.0.0\n            returns_nothing: true\n            backend: {{ kind: native, function: testing.echo }}\n"
    )
}

fn load(execution: &str) -> Result<toolhost_core::Catalog, Vec<toolhost_core::Problem>> {
    Loader::default().load(&[Source {
        name: "jobs.yaml".into(),
        text: catalog(execution),
    }])
}

#[test]
fn ask_first_is_kept_for_a_task_tool_and_refused_for_one_that_never_is() {
    let catalog = load("{ task: required, ask_first: true }").expect("loads");
    let tool = catalog.find("run").expect("served");
    assert_eq!(tool.task, TaskSupport::Required);
    assert!(tool.task_asks_first);
    let plain = load("{ task: optional }").expect("loads");
    assert!(!plain.find("run").expect("served").task_asks_first, "off by default");

    let problems = load("{ ask_first: true }").expect_err("refused");
    let errors: Vec<String> = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("execution.ask_first") && e.contains("task: optional")),
        "{errors:#?}"
    );
}
