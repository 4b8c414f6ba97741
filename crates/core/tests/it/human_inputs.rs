//! Human-only inputs (`source: human`, CHEQ's Flow B, issue #40.4) as the loader and the engine
//! see them: in no schema an agent is shown, refused in a call without echoing its value,
//! checked on their own schema, merged into what the backend gets once a gate admits the call;
//! a human-only input on a tool that needs no confirmation is a load error naming where.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::confirm::{Admission, Gate, GateCall, HumanValues, Stored};
use toolhost_core::{BoxFuture, CallContext, Engine, Error, Invocation, Severity, VersionSelector};

const CATALOG: &str = r#"
toolkits:
  - name: Calc
    tools:
      - name: add
        description: Adds a secret number to a public one.
        confirmation: required
        versions:
          - version: 1.0.0
            inputs:
              - { name: a, type: number, description: The public number. }
              - { name: b, type: number, description: The secret number., source: human, min: 0, max: 100 }
              - { name: pin, description: A PIN., source: human, required: false, pattern: "^[0-9]{4}$" }
            outputs: [{ name: sum, type: number, description: The sum. }]
            backend: { kind: native, function: calculator.add }
"#;

fn load(text: &str) -> Result<toolhost_core::Catalog, Vec<toolhost_core::Problem>> {
    Loader::default().load(&[Source {
        name: "calc.yaml".into(),
        text: text.into(),
    }])
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

#[test]
fn a_human_input_is_in_no_agent_schema_and_has_a_schema_of_its_own() {
    let catalog = load(CATALOG).unwrap();
    let version = catalog.find("add").unwrap().latest();
    let names: Vec<&str> = version.inputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a"]);
    let schema = version.input_schema().to_string();
    assert!(!schema.contains("\"b\"") && !schema.contains("pin"), "{schema}");
    assert_eq!(version.input_schema()["additionalProperties"], false);
    let human: Vec<&str> = version.human_inputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(human, ["b", "pin"]);
    assert_eq!(version.human_schema()["required"], json!(["b"]));
    assert!(version.check_human(&object(json!({"b": 5, "pin": "1234"}))).is_ok());
    let wrong = version
        .check_human(&object(json!({"b": 500, "pin": "12"})))
        .unwrap_err();
    let fields: Vec<&str> = wrong.iter().map(|e| e.parameter.as_str()).collect();
    assert_eq!(fields, ["b", "pin"]);
    assert!(version.check_human(&object(json!({}))).is_err(), "b is required");
}

/// A gate that admits every call with the values a human typed.
#[derive(Debug)]
struct Typed(Map<String, Value>);

impl Gate for Typed {
    fn admit<'a>(&'a self, _: GateCall<'a>) -> BoxFuture<'a, Result<Admission, Error>> {
        Box::pin(async move {
            Ok(Admission::Run {
                id: "c1".into(),
                human: HumanValues::new(self.0.clone()),
            })
        })
    }

    fn settle<'a>(&'a self, _: &'a str, _: Stored) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

fn call(input: Value) -> Invocation {
    Invocation {
        tool: "add".into(),
        version: VersionSelector::Number(1),
        input: object(input),
        context: CallContext::default(),
    }
}

#[tokio::test]
async fn a_call_may_not_send_it_and_the_backend_gets_what_the_human_typed() {
    let engine = Engine::new(load(CATALOG).unwrap());
    engine.set_gate(Arc::new(Typed(object(json!({"b": 40})))));
    // The agent may not pass it: an unknown input, and the value is not repeated.
    match engine.invoke(call(json!({"a": 2, "b": 31337}))).await {
        Err(Error::InvalidInput { errors, .. }) => {
            let text = format!("{errors:?}");
            assert!(text.contains("no parameter `b`"), "{text}");
            assert!(!text.contains("31337"), "{text}");
        }
        other => panic!("expected an invalid input, got {other:?}"),
    }
    let outcome = engine.invoke(call(json!({"a": 2}))).await.unwrap();
    assert_eq!(outcome.output["sum"], 42.0);
}

#[test]
fn a_human_input_needs_a_confirmation_and_a_known_source() {
    let text = |problems: Vec<toolhost_core::Problem>| -> Vec<String> {
        problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .map(ToString::to_string)
            .collect()
    };
    let unconfirmed = text(load(&CATALOG.replace("confirmation: required", "confirmation: none")).unwrap_err());
    assert!(
        unconfirmed.iter().any(|t| t.contains("calc.yaml")
            && t.contains("add")
            && t.contains("1.0.0")
            && t.contains("input `b`.source")
            && t.contains("confirmation: required")),
        "{unconfirmed:#?}"
    );
    let unknown = text(load(&CATALOG.replace("source: human, min", "source: person, min")).unwrap_err());
    assert!(
        unknown
            .iter()
            .any(|t| t.contains("`source: person`") && t.contains("`human`")),
        "{unknown:#?}"
    );
    let mirrored = text(
        load(&CATALOG.replace(
            "source: human, required: false",
            "source: human, header: X-Pin, required: false",
        ))
        .unwrap_err(),
    );
    assert!(mirrored.iter().any(|t| t.contains("remove `header`")), "{mirrored:#?}");
    // The server-wide setting makes a tool that is not read-only need confirmation: enough.
    let wide = CATALOG.replace("confirmation: required", "confirmation: none");
    assert!(
        Loader::default()
            .with_confirmation_for_actions(true)
            .load(&[Source {
                name: "calc.yaml".into(),
                text: wide,
            }])
            .is_ok()
    );
}

#[test]
fn a_human_input_is_part_of_the_policy_revision() {
    let catalog = load(CATALOG).unwrap();
    let other = load(&CATALOG.replace("max: 100", "max: 1000")).unwrap();
    let revision = |catalog: &toolhost_core::Catalog| {
        let tool = catalog.find("add").unwrap();
        let version = tool.latest();
        version.confirmation.as_ref().unwrap().revision(tool, version)
    };
    assert_ne!(
        revision(&catalog),
        revision(&other),
        "a confirmation given before the change is void"
    );
}
