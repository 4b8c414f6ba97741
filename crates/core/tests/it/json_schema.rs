//! Issue #38.1: the catalog holds JSON Schema. An input may carry any JSON Schema 2020-12
//! (arrays, nested objects, unions, conditionals, `$defs`/`$ref` through the version's
//! `input_rules`, `enum`/`const` of any JSON, `default`, `examples`, formats, bounds,
//! patterns); it is compiled once at load and validated on every call, with per-field messages.

use serde_json::{Value, json};
use toolhost_core::backend::CallContext;
use toolhost_core::{Engine, Error, Invocation, ParameterError, VersionSelector};

use crate::{clean, error_with, tool, v};

/// One tool, `issue`, whose inputs use every kind of schema the issue names.
fn issue() -> String {
    // `testing.echo` answers the input; each input comes back as the output of its name.
    let mut version = v("1.0.0");
    for name in INPUTS {
        version = version.output(name, "json", "required: false");
    }
    tool(
        "issue",
        &[version
            .raw_input(
                r#"{name: labels, description: Labels to add., required: false,
                    schema: {type: array, items: {type: string, minLength: 1, maxLength: 50}, maxItems: 3, uniqueItems: true},
                    examples: [[bug, docs]]}"#,
            )
            .raw_input(
                r#"{name: author, description: Who wrote it., required: false,
                    schema: {type: object, properties: {login: {type: string, pattern: "^[a-z]+$"}, id: {type: integer, minimum: 1}},
                             required: [login], additionalProperties: false}}"#,
            )
            .raw_input(
                r#"{name: milestone, description: A number or a title., required: false,
                    schema: {anyOf: [{type: integer, exclusiveMinimum: 0}, {type: string, format: date}, {type: "null"}]}}"#,
            )
            .raw_input(r##"{name: home, description: Where to write., required: false, schema: {$ref: "#/$defs/address"}}"##)
            .raw_input(
                r#"{name: shape, description: Any of a few JSON values., required: false,
                    schema: {enum: [1, "one", true, null, [1, 2], {a: 1}]}}"#,
            )
            .raw_input(r#"{name: fixed, description: Always the same., required: false, schema: {const: {on: true}}}"#)
            .raw_input(
                r#"{name: per_page, type: int, min: 1, max: 100, default: 30, examples: [10], required: false,
                    description: Results per page.}"#,
            )
            .raw_input(
                r#"{name: state, type: enum, required: false, default: open, description: The state.,
                    values: [{name: OPEN, value: open, description: Open.}, {name: CLOSED, value: closed, description: Closed.}]}"#,
            )
            .raw_input(r#"{name: contact, type: enum, required: false, description: How to reach us.,
                    values: [{name: PHONE, value: phone, description: By phone.}, {name: EMAIL, value: email, description: By mail.}]}"#)
            .raw_input(r#"{name: phone, description: A phone number., required: false}"#)
            .raw_input(r#"{name: email, description: A mail address., required: false}"#)
            .with(
                r#"input_rules: {
                    $defs: {address: {$anchor: addressDef, type: object, properties: {city: {type: string}}, required: [city]}},
                    allOf: [{allOf: [{not: {required: [fixed, shape]}}]}],
                    if: {properties: {contact: {const: phone}}, required: [contact]},
                    then: {required: [phone]}}"#,
            )
],
    )
}

const INPUTS: [&str; 11] = [
    "labels",
    "author",
    "milestone",
    "home",
    "shape",
    "fixed",
    "per_page",
    "state",
    "contact",
    "phone",
    "email",
];

async fn call(engine: &Engine, input: Value) -> Result<Value, Vec<ParameterError>> {
    let Value::Object(input) = input else { unreachable!() };
    let invocation = Invocation {
        tool: "issue".to_owned(),
        version: VersionSelector::Latest,
        input,
        context: CallContext::default(),
    };
    match engine.invoke(invocation).await {
        Ok(outcome) => Ok(Value::Object(outcome.output)),
        Err(Error::InvalidInput { errors, .. }) => Err(errors),
        Err(other) => panic!("{other}"),
    }
}

/// The message of the one error for `parameter`.
fn message(errors: &[ParameterError], parameter: &str) -> String {
    errors
        .iter()
        .find(|e| e.parameter == parameter)
        .unwrap_or_else(|| panic!("no error for `{parameter}` in {errors:?}"))
        .message
        .clone()
}

#[test]
fn the_schema_is_shown_as_written_with_defaults_examples_and_rules() {
    let catalog = clean(&issue());
    let schema = &catalog.tools()[0].latest().input_schema();
    let p = &schema["properties"];
    assert_eq!(p["labels"]["items"]["maxLength"], 50);
    assert_eq!(p["labels"]["examples"], json!([["bug", "docs"]]));
    assert_eq!(p["author"]["required"], json!(["login"]));
    assert_eq!(p["milestone"]["anyOf"][1]["format"], "date");
    assert_eq!(p["home"]["$ref"], "#/$defs/address");
    assert_eq!(p["shape"]["enum"][5], json!({"a": 1}));
    assert_eq!(p["per_page"]["default"], 30);
    assert_eq!(p["per_page"]["examples"], json!([10]));
    // An enum as the API spells it: its wire values, its default one of them.
    assert_eq!(p["state"]["enum"], json!(["open", "closed"]));
    assert_eq!(p["state"]["type"], "string");
    assert_eq!(p["state"]["default"], "open");
    assert!(p["state"]["description"].as_str().unwrap().contains("open (Open)"));
    // The version's rules sit on the input object itself, beside the properties.
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(schema["then"], json!({"required": ["phone"]}));
    assert_eq!(schema["additionalProperties"], false);
}

#[tokio::test]
async fn a_valid_call_reaches_the_backend_unchanged() {
    let engine = Engine::new(clean(&issue()));
    let input = json!({
        "labels": ["bug", "docs"], "author": {"login": "ada", "id": 7}, "milestone": "2024-05-01",
        "home": {"city": "Oslo"}, "shape": [1, 2], "state": "closed", "per_page": 100,
        "contact": "phone", "phone": "555"
    });
    assert_eq!(call(&engine, input.clone()).await.unwrap(), input);
    assert!(
        call(&engine, json!({"milestone": null, "fixed": {"on": true}}))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn every_call_is_validated_with_a_message_per_field() {
    let engine = Engine::new(clean(&issue()));
    let errors = call(
        &engine,
        json!({"labels": ["bug", ""], "author": {"name": "ada"}, "per_page": 500, "state": "OPEN", "home": {}}),
    )
    .await
    .unwrap_err();
    let labels = message(&errors, "labels");
    assert!(labels.starts_with("`labels` expects an array"), "{labels}");
    assert!(labels.contains("`labels.1`"), "names the item: {labels}");
    let author = message(&errors, "author");
    assert!(author.contains("author"), "{author}");
    assert!(
        message(&errors, "per_page").contains("expects an integer from 1 to 100, but got 500"),
        "{errors:?}"
    );
    // The enum is accepted as the API spells it, and the message says so.
    assert!(
        message(&errors, "state").contains("one of open, closed, but got \"OPEN\""),
        "{errors:?}"
    );
    assert!(message(&errors, "home").contains("city"), "{errors:?}");
    let milestone = call(&engine, json!({"milestone": 0})).await.unwrap_err();
    assert!(message(&milestone, "milestone").contains("anyOf"), "{milestone:?}");
    let shape = call(&engine, json!({"shape": [2, 1]})).await.unwrap_err();
    assert!(message(&shape, "shape").contains("shape"), "{shape:?}");
    let fixed = call(&engine, json!({"fixed": {"on": false}})).await.unwrap_err();
    assert!(message(&fixed, "fixed").contains("fixed"), "{fixed:?}");
}

#[tokio::test]
async fn rules_over_the_whole_input_are_said_as_the_validator_says_them() {
    let engine = Engine::new(clean(&issue()));
    let errors = call(&engine, json!({"contact": "phone"})).await.unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].parameter, "");
    assert!(
        errors[0].message.contains("\"phone\" is a required property"),
        "{errors:?}"
    );
    assert!(call(&engine, json!({"contact": "email"})).await.is_ok());
    let both = call(&engine, json!({"fixed": {"on": true}, "shape": 1}))
        .await
        .unwrap_err();
    assert!(both[0].message.contains("input schema"), "{both:?}");
}

#[test]
fn mistakes_in_schemas_defaults_and_rules_are_load_errors() {
    let one = |input: &str| tool("t", &[v("1.0.0").raw_input(input)]);
    error_with(
        &one(r#"{name: a, description: A., type: int, default: "ten"}"#),
        "default \"ten\" is not a value the input accepts",
    );
    error_with(
        &one(
            r#"{name: s, description: S., type: enum, default: OPEN, values: [{name: OPEN, value: open, description: O.}]}"#,
        ),
        "as the API spells them",
    );
    error_with(
        &one(r#"{name: a, description: A., schema: {type: array, items: {type: string}}, examples: [[1]]}"#),
        "an example [1] is not a value the input accepts",
    );
    error_with(
        &one(r#"{name: a, description: A., default: 1, schema: {type: integer, default: 2}}"#),
        "`default` is given both beside `schema` and inside it",
    );
    error_with(
        &one(r##"{name: a, description: A., schema: {$ref: "#/$defs/missing"}}"##),
        "`schema` is not a valid JSON Schema",
    );
    error_with(
        &tool(
            "t",
            &[v("1.0.0").with("input_rules: {properties: {a: {type: string}}}")],
        ),
        "`input_rules` may not set `properties`",
    );
    error_with(
        &tool("t", &[v("1.0.0").output("o", "string", "schema: {type: string}")]),
        "`schema` applies to a json output, not a string one",
    );
}

/// A default inside a json input's schema is that schema's annotation, shown as written and not
/// checked (a federated server's schema loads as its server wrote it).
#[test]
fn a_default_inside_the_schema_is_shown_as_written() {
    let catalog = clean(&tool(
        "t",
        &[v("1.0.0")
            .raw_input(r#"{name: a, description: A., required: false, schema: {type: integer, default: "two"}}"#)],
    ));
    let version = catalog.tools()[0].latest();
    assert_eq!(version.inputs[0].default, None);
    assert_eq!(version.input_schema()["properties"]["a"]["default"], "two");
}

/// The scalar forms written before #38 mean what they meant: the same schema, key for key.
#[test]
fn scalar_inputs_render_as_before() {
    let catalog = clean(&tool(
        "t",
        &[v("1.0.0")
            .input("city", "string", "max_length: 40, pattern: \"^[A-Z]\"")
            .input("days", "int", "min: 1")
            .input("units", "enum", "values: [{name: METRIC, description: Metres.}]")],
    ));
    let p = &catalog.tools()[0].latest().input_schema()["properties"];
    assert_eq!(
        p["city"],
        json!({"type": "string", "maxLength": 40, "pattern": "^[A-Z]", "description": "The city."})
    );
    assert_eq!(
        p["days"],
        json!({"type": "integer", "minimum": 1, "maximum": 65535, "description": "The days."})
    );
    assert_eq!(
        p["units"],
        json!({"type": "string", "enum": ["METRIC"], "description": "The units. Allowed values: METRIC (Metres)."})
    );
}

#[tokio::test]
async fn a_json_output_with_a_schema_is_checked_on_every_call() {
    let engine = Engine::new(clean(&tool(
        "t",
        &[v("1.0.0")
            .raw_input(r#"{name: items, description: I., schema: {type: array}}"#)
            .output("items", "json", "schema: {type: array, items: {type: integer}}")],
    )));
    let run = |items: Value| {
        let Value::Object(input) = json!({"items": items}) else {
            unreachable!()
        };
        engine.invoke(Invocation {
            tool: "t".to_owned(),
            version: VersionSelector::Latest,
            input,
            context: CallContext::default(),
        })
    };
    assert!(run(json!([1, 2])).await.is_ok());
    assert!(matches!(run(json!(["x"])).await, Err(Error::Failed { .. })));
}
