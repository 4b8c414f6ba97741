//! Confirmation policy (issue #40) as the loader reads it: a tool's `confirmation` and
//! `approvers` hold from the version that writes them on; the server-wide setting covers every
//! tool not read-only; an agent's `confirmation` list marks its own copies; the engine never
//! runs a gated version without a gate; the digest is of the effective input.

use serde_json::json;
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{CallContext, Engine, Error, Invocation, Severity, VersionSelector};

const CATALOG: &str = r#"
toolkits:
  - name: Pay
    tools:
      - name: send
        description: Sends money.
        confirmation: required
        approvers: [caller, payments]
        versions:
          - version: 1.0.0
            inputs: [{ name: to, description: Who., required: false, default: bob }]
            outputs: [{ name: ok, type: boolean, description: Done. }]
            backend: { kind: static, output: { ok: true } }
          - version: 1.1.0
            confirmation: none
            inputs: [{ name: to, description: Who., required: false, default: bob }]
            outputs: [{ name: ok, type: boolean, description: Done. }]
      - name: look
        description: Looks.
        annotations: { read_only: true }
        versions:
          - version: 1.0.0
            outputs: [{ name: ok, type: boolean, description: Done. }]
            backend: { kind: static, output: { ok: true } }
      - name: poke
        description: Pokes.
        versions:
          - version: 1.0.0
            outputs: [{ name: ok, type: boolean, description: Done. }]
            backend: { kind: static, output: { ok: true } }
"#;

fn sources(extra: &[(&str, &str)]) -> Vec<Source> {
    let mut sources = vec![Source {
        name: "pay.yaml".into(),
        text: CATALOG.into(),
    }];
    sources.extend(extra.iter().map(|(name, text)| Source {
        name: (*name).into(),
        text: (*text).into(),
    }));
    sources
}

#[test]
fn a_policy_holds_from_its_version_on_and_the_server_wide_one_spares_read_only_tools() {
    let catalog = Loader::default().load(&sources(&[])).unwrap();
    let send = catalog.find("send").unwrap();
    let policy = send.versions[0]
        .confirmation
        .as_ref()
        .expect("1.0.0 needs confirmation");
    assert_eq!(policy.approvers, ["caller", "payments"]);
    assert!(policy.caller_may_approve());
    assert!(send.versions[1].confirmation.is_none(), "1.1.0 says none");
    assert!(catalog.find("poke").unwrap().latest().confirmation.is_none());

    let everything = Loader::default()
        .with_confirmation_for_actions(true)
        .load(&sources(&[]))
        .unwrap();
    assert!(everything.find("poke").unwrap().latest().confirmation.is_some());
    assert!(
        everything.find("look").unwrap().latest().confirmation.is_none(),
        "read-only"
    );
}

#[test]
fn an_unknown_policy_is_an_error_naming_the_field() {
    let bad = CATALOG.replace("confirmation: required", "confirmation: maybe");
    let problems = Loader::default()
        .load(&[Source {
            name: "pay.yaml".into(),
            text: bad,
        }])
        .unwrap_err();
    let text: Vec<String> = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert!(
        text.iter().any(|t| t.contains("confirmation") && t.contains("`maybe`")),
        "{text:#?}"
    );
}

#[test]
fn an_agent_can_require_confirmation_and_is_warned_when_its_procedure_never_mentions_the_tool() {
    let agent = "---\nname: poker\ndescription: Pokes.\ntools: [poke, look]\nconfirmation: [poke]\n---\nUse look() to look around.\n";
    let catalog = Loader::default().load(&sources(&[("agents/poker.md", agent)])).unwrap();
    let own = catalog.agent("poker").unwrap().catalog();
    assert!(own.find("poke").unwrap().latest().confirmation.is_some());
    assert!(
        catalog.find("poke").unwrap().latest().confirmation.is_none(),
        "the catalog's own is untouched"
    );
    let warnings: Vec<String> = catalog.warnings().iter().map(ToString::to_string).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("poke()") && w.contains("confirmation")),
        "{warnings:#?}"
    );
}

#[tokio::test]
async fn without_a_gate_a_gated_version_fails_closed() {
    let engine = Engine::new(Loader::default().load(&sources(&[])).unwrap());
    let call = Invocation {
        tool: "send".into(),
        version: VersionSelector::Number(1),
        input: serde_json::Map::new(),
        context: CallContext::default(),
    };
    match engine.invoke(call).await {
        Err(Error::Failed { failure, .. }) => assert!(failure.message.contains("nothing was done"), "{failure:?}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_digest_is_of_the_effective_input() {
    let catalog = Loader::default().load(&sources(&[])).unwrap();
    let version = &catalog.find("send").unwrap().versions[0];
    let empty = serde_json::Map::new();
    let explicit = json!({"to": "bob"}).as_object().unwrap().clone();
    let other = json!({"to": "eve"}).as_object().unwrap().clone();
    let digest = |input| toolhost_core::confirm::digest(&toolhost_core::confirm::effective_input(version, input));
    assert_eq!(digest(&empty), digest(&explicit), "the default is what runs");
    assert_ne!(digest(&explicit), digest(&other));
}
