//! Agents (issue #33) as the loader reads them over the bundled catalog: each agent's own
//! catalog (a pin is that version only, a follower is the catalog's own tool), its engine, and
//! the check's errors and warnings with file, agent and field.

use std::sync::Arc;

use serde_json::json;
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{CallContext, Catalog, Engine, Error, Invocation, Problem, Severity, VersionSelector};

fn agent(name: &str, text: &str) -> Source {
    Source {
        name: format!("agents/{name}.md"),
        text: text.to_owned(),
    }
}

fn load(agents: &[Source]) -> Result<Catalog, Vec<Problem>> {
    let mut sources = toolhost_core::native::bundled_catalog();
    sources.extend(agents.iter().cloned());
    Loader::default().load(&sources)
}

fn errors(agents: &[Source]) -> Vec<String> {
    load(agents)
        .expect_err("refused")
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(ToString::to_string)
        .collect()
}

const TRAVEL: &str = "---\nname: travel\ndescription: Travel.\ntools:\n  - Units.convert_length@1\n  - divide_numbers\n---\n## Goal\nUse convert_length() and divide_numbers().\n";

#[test]
fn a_pinned_tool_is_that_version_only_and_a_follower_is_the_catalogs_own() {
    let catalog = load(&[agent("travel", TRAVEL)]).unwrap();
    let travel = catalog.agent("travel").unwrap();
    let own = travel.catalog();
    let names: Vec<&str> = own.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["convert_length", "divide_numbers"]);
    let pinned = own.find("convert_length").unwrap();
    assert_eq!(pinned.latest().semver.to_string(), "1.0.0");
    let served: Vec<String> = pinned.served_versions().map(|v| v.semver.to_string()).collect();
    assert_eq!(served, ["1.0.0"]);
    assert!(
        pinned.resolve(&VersionSelector::Number(3)).is_none(),
        "later versions are not there"
    );
    assert_eq!(
        catalog.find("convert_length").unwrap().latest().semver.to_string(),
        "1.2.0"
    );
    assert!(
        Arc::ptr_eq(
            own.find("divide_numbers").unwrap(),
            catalog.find("divide_numbers").unwrap()
        ),
        "a tool that follows the latest is the catalog's own"
    );
    assert_eq!(
        travel.tools[0].pin.as_ref().map(ToString::to_string).as_deref(),
        Some("1.0.0")
    );
    assert_eq!(travel.tools[0].uses, ["Use convert_length() and divide_numbers()."]);
    assert!(travel.procedure.starts_with("## Goal\n"));
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
}

#[tokio::test]
async fn an_agents_engine_calls_its_tools_at_its_versions_and_nothing_else() {
    let catalog = load(&[agent("travel", TRAVEL)]).unwrap();
    let own = Arc::clone(catalog.agent("travel").unwrap().catalog());
    let engine = Engine::for_agent(own, Arc::new(Engine::new(catalog)));
    let call = |tool: &str, version: VersionSelector, input: serde_json::Value| Invocation {
        tool: tool.to_owned(),
        version,
        input: input.as_object().unwrap().clone(),
        context: CallContext::default(),
    };
    let metres = json!({"value": 2, "from": "KILOMETRE", "to": "METRE"});
    let done = engine
        .invoke(call("convert_length", VersionSelector::Latest, metres.clone()))
        .await
        .unwrap();
    assert_eq!(done.version().semver.to_string(), "1.0.0");
    assert_eq!(done.output.get("unit"), None, "1.0.0 has no `unit`");
    let later = semver::Version::new(1, 2, 0);
    let refused = engine
        .invoke(call("convert_length", VersionSelector::Semver(later), metres))
        .await;
    assert!(
        matches!(&refused, Err(Error::VersionNotFound { served, .. }) if served == "1 (1.0.0)"),
        "{refused:?}"
    );
    let outside = engine
        .invoke(call("add_numbers", VersionSelector::Latest, json!({"a": 1, "b": 2})))
        .await;
    assert!(matches!(outside, Err(Error::ToolNotFound { .. })), "{outside:?}");
}

#[test]
fn the_check_names_file_agent_and_field_of_each_problem() {
    let bad = [
        agent(
            "a",
            "---\nname: Bad Name\ndescription: x\ntools: [add_numbers]\n---\nUse add_numbers().\n",
        ),
        agent(
            "b",
            "---\nname: b\ndescription: x\ntools: [Calculator.convert_length, add_numbers, add_numbers]\nhandoffs: [nobody]\n---\nUse add_numbers().\n",
        ),
        agent(
            "c",
            "---\nname: c\ndescription: x\ntools: [add_numbers]\nprompt: no\n---\nUse add_numbers().\n",
        ),
        agent("d", "no front matter\n"),
        agent(
            "e",
            "---\nname: b\ndescription: x\ntools: [add_numbers]\n---\nUse add_numbers().\n",
        ),
        agent(
            "f",
            "---\nname: f\ndescription: x\ntools: [add_numbers@1.0]\n---\nUse add_numbers().\n",
        ),
    ];
    let found = errors(&bad);
    let has = |text: &str| assert!(found.iter().any(|e| e.contains(text)), "{text}\nin {found:#?}");
    has("agents/a.md: agent `Bad Name`, name: the agent name `Bad Name` is not allowed");
    has("agents/b.md: agent `b`, tools[0]: `Calculator.convert_length` is not a tool of the catalog");
    has("agents/b.md: agent `b`, tools[2]: `add_numbers` is selected twice");
    has("agents/b.md: agent `b`, handoffs[0]: no agent is named `nobody`");
    has("agents/c.md: failed to parse the front matter");
    has("agents/d.md: an agent file starts with YAML front matter");
    has("agents/e.md: agent `b`, name: another agent file (agents/b.md) has this name");
    has("agents/f.md: agent `f`, tools[0]: `1.0` is not a version");
}

#[test]
fn unused_and_unselected_tools_are_warnings_and_a_handoff_is_checked() {
    let measure = "---\nname: measure\ndescription: x\ntools: [add_numbers, divide_numbers]\nhandoffs: [travel]\n---\nUse add_numbers(), or count_words_in_text() for words.\n";
    let catalog = load(&[agent("travel", TRAVEL), agent("measure", measure)]).unwrap();
    let warnings: Vec<String> = catalog.warnings().iter().map(ToString::to_string).collect();
    let has = |text: &str| assert!(warnings.iter().any(|w| w.contains(text)), "{text}\nin {warnings:#?}");
    has("agent `measure`, tools[1]: the procedure never calls `divide_numbers()`");
    has(
        "agent `measure`, procedure: the procedure calls `count_words_in_text()`, a catalog tool the agent does not select",
    );
    has("agent `measure`, handoffs[0]: the procedure never names `travel`");
    let measure = catalog.agent("measure").unwrap();
    assert_eq!(
        measure.findings.len(),
        3,
        "the agent keeps its own findings for the page"
    );
    assert_eq!(measure.handoffs, ["travel"]);
}

#[test]
fn a_pin_on_a_retired_version_is_refused_naming_the_agent() {
    let catalog = Source {
        name: "demo.yaml".into(),
        text: "toolkits:\n  - name: Demo\n    tools:\n      - name: echo_city\n        description: Echo a city.\n        versions:\n          - { version: 1.0.0, retired: true, inputs: [{ name: city, description: A city. }], outputs: [{ name: city, type: string, description: The city. }], backend: { kind: native, function: testing.echo } }\n          - { version: 1.1.0, inputs: [{ name: city, description: A city. }], outputs: [{ name: city, type: string, description: The city. }], backend: { kind: native, function: testing.echo } }\n".into(),
    };
    let pinned = agent(
        "cities",
        "---\nname: cities\ndescription: Cities.\ntools: [echo_city@1]\n---\nUse echo_city().\n",
    );
    let problems = Loader::default().load(&[catalog, pinned]).expect_err("refused");
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(|p| p.contains(
            "agents/cities.md: agent `cities`, tools[0]: `echo_city@1` pins version 1.0.0 of `echo_city`, which the catalog does not serve (served: 1.1.0)"
        )),
        "{text:#?}"
    );
}
