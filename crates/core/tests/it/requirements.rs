//! Tool-level `requirements:` (secrets, authorization, user id) and `errors:` phrasing: the load
//! checks, `Error::MissingRequirement`, and rephrased failures.

use serde_json::{Value, json};
use toolhost_core::{CallContext, Engine, Error, Invocation, Requirement, Secret, Severity, VersionSelector};

use crate::{assert_problem, at_tool, clean, doc, obj, t, the_error, v};

fn divide() -> crate::V {
    v("1.0.0")
        .input("dividend", "number", "")
        .input("divisor", "number", "")
        .output("quotient", "number", "")
        .backend("{kind: native, function: calculator.divide}")
}

fn context_tool(requirements: &str) -> crate::T {
    let version = v("1.0.0")
        .output("secret_ids", "json", "")
        .output("secret_lengths", "json", "")
        .output("user_id", "json", "required: false")
        .backend("{kind: native, function: testing.context}");
    t("whoami", &[version]).with(&format!("requirements: {requirements}"))
}

fn context(secrets: &[(&str, &str)], authorization: &[&str], user_id: Option<&str>) -> CallContext {
    CallContext {
        secrets: secrets
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Secret::new(*v)))
            .collect(),
        authorization: authorization
            .iter()
            .map(|k| ((*k).to_owned(), Secret::new("token")))
            .collect(),
        user_id: user_id.map(str::to_owned),
        ..CallContext::default()
    }
}

async fn call(engine: &Engine, tool: &str, input: Value, context: CallContext) -> Result<Value, Error> {
    let invocation = Invocation {
        tool: tool.to_owned(),
        version: VersionSelector::Latest,
        input: obj(input),
        context,
    };
    engine.invoke(invocation).await.map(|out| Value::Object(out.output))
}

#[test]
fn requirements_are_loaded() {
    let requirements = "{secrets: [api_key], authorization: [{id: google, scopes: [calendar.read]}], user_id: true}";
    let catalog = clean(&doc(&[context_tool(requirements)]));
    let r = &catalog.find("whoami").expect("tool").requirements;
    assert_eq!(r.secrets, ["api_key"]);
    assert_eq!(r.authorization.len(), 1);
    assert_eq!(
        (r.authorization[0].id.as_str(), r.authorization[0].scopes.as_slice()),
        ("google", &["calendar.read".to_owned()][..])
    );
    assert!(r.user_id);
    assert!(!r.is_empty());
    let plain = clean(&doc(&[t("plain", &[v("1.0.0")])]));
    assert!(plain.find("plain").expect("tool").requirements.is_empty());
}

#[test]
fn duplicate_or_empty_requirement_ids_are_refused() {
    let p = the_error(&doc(&[context_tool("{secrets: [api_key, api_key]}")]));
    assert_problem(
        &p,
        Severity::Error,
        at_tool("whoami").field("requirements.secrets"),
        "secret id `api_key` is empty or listed twice",
    );
    let p = the_error(&doc(&[context_tool("{secrets: [\" \"]}")]));
    assert_problem(
        &p,
        Severity::Error,
        at_tool("whoami").field("requirements.secrets"),
        "is empty or listed twice",
    );
    let p = the_error(&doc(&[context_tool("{authorization: [{id: google}, {id: google}]}")]));
    assert_problem(
        &p,
        Severity::Error,
        at_tool("whoami").field("requirements.authorization"),
        "provider id `google` is empty or listed twice",
    );
}

#[test]
fn empty_error_phrase_message_is_refused() {
    let p = the_error(&doc(&[
        t("divide", &[divide()]).with("errors: {division_by_zero: {message: \"\"}}")
    ]));
    assert_problem(
        &p,
        Severity::Error,
        at_tool("divide").field("errors.division_by_zero"),
        "`message` is empty",
    );
}

#[tokio::test]
async fn a_missing_requirement_stops_the_call_before_the_backend() {
    let requirements = "{secrets: [api_key], authorization: [{id: google}], user_id: true}";
    let engine = Engine::new(clean(&doc(&[context_tool(requirements)])));
    let cases = [
        (
            context(&[], &["google"], Some("u1")),
            Requirement::Secret("api_key".into()),
        ),
        (
            context(&[("api_key", "k")], &[], Some("u1")),
            Requirement::Authorization("google".into()),
        ),
        (context(&[("api_key", "k")], &["google"], None), Requirement::UserId),
        (context(&[("api_key", "k")], &["google"], Some("")), Requirement::UserId),
    ];
    for (ctx, expected) in cases {
        match call(&engine, "whoami", json!({}), ctx).await {
            Err(Error::MissingRequirement { tool, missing }) => {
                assert_eq!(tool, "whoami");
                assert_eq!(missing, expected);
            }
            other => panic!("expected MissingRequirement({expected:?}), got {other:?}"),
        }
    }
    // The requirement is checked before the input.
    let err = call(&engine, "whoami", json!({"unknown": 1}), context(&[], &[], None))
        .await
        .expect_err("missing");
    assert!(matches!(err, Error::MissingRequirement { .. }), "{err:?}");
    assert!(err.to_string().contains("requires the secret `api_key`"), "{err}");
}

#[tokio::test]
async fn secrets_and_user_id_reach_the_backend() {
    let engine = Engine::new(clean(&doc(&[context_tool("{secrets: [api_key], user_id: true}")])));
    let ctx = context(&[("api_key", "s3cret"), ("extra", "xy")], &[], Some("user-7"));
    assert!(
        !format!("{ctx:?}").contains("s3cret"),
        "Debug of a context hides secrets"
    );
    let out = call(&engine, "whoami", json!({}), ctx).await.expect("ok");
    assert_eq!(
        out,
        json!({"secret_ids": ["api_key", "extra"], "secret_lengths": {"api_key": 6, "extra": 2}, "user_id": "user-7"})
    );
}

#[tokio::test]
async fn catalog_errors_rephrase_a_failure_by_its_code() {
    let phrase =
        "errors: {division_by_zero: {message: \"The divisor must not be 0.\", retryable: true, retry_after_ms: 1500}}";
    let engine = Engine::new(clean(&doc(&[
        t("divide", &[divide()]).with(phrase),
        t("plain_divide", &[divide()]),
    ])));
    let input = json!({"dividend": 1, "divisor": 0});
    match call(&engine, "divide", input.clone(), CallContext::default()).await {
        Err(Error::Failed { failure, .. }) => {
            assert_eq!(failure.message, "The divisor must not be 0.");
            assert!(failure.retryable);
            assert_eq!(failure.retry_after.map(|d| d.as_millis()), Some(1500));
            assert_eq!(failure.code.as_deref(), Some("division_by_zero"));
            // Fields the phrase leaves out keep the backend's value.
            assert!(
                failure
                    .prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("non-zero divisor")),
                "{failure:?}"
            );
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    match call(&engine, "plain_divide", input, CallContext::default()).await {
        Err(Error::Failed { failure, .. }) => {
            assert_eq!(failure.message, "cannot divide by zero");
            assert!(!failure.retryable);
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}
