//! Issue #32 (what the API says, the tool says) and #30.3/#30.11 (a description is untrusted),
//! on small descriptions: each import is rendered and loaded by core's loader with the `http`
//! backend, as `toolhost check` does, so nothing here passes the import and fails `check`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Imported, Options, import, merge, render, short_title, unique_within};

/// The catalog an import writes, loaded as `check` loads it; panics with every problem.
fn checked(imported: &Imported) -> toolhost_core::Catalog {
    let text = render(imported, &merge::fresh(imported));
    let factory = toolhost_sculpt::Factory::for_checking().unwrap();
    let loader = toolhost_core::catalog::Loader::default().with_backend("http", Arc::new(factory));
    let source = toolhost_core::catalog::Source {
        name: "imported.yaml".to_owned(),
        text: text.clone(),
    };
    match loader.load(&[source]) {
        Ok(catalog) => catalog,
        Err(problems) => panic!(
            "check refuses the import:\n{}\n--- catalog ---\n{text}",
            problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
        ),
    }
}

fn doc(paths: Value) -> Value {
    json!({
        "openapi": "3.0.3", "info": {"title": "Test API"}, "servers": [{"url": "https://api.example.com/v1"}],
        "components": {"schemas": {
            "Id": {"type": "string", "description": "The id of the thing, from its page."},
            "State": {"type": "string", "enum": ["open", "closed", "New York"], "default": "open",
                      "x-enum-descriptions": ["Still running.", "Done.", "A city."]}
        }},
        "paths": paths
    })
}

fn tool<'a>(imported: &'a Imported, name: &str) -> &'a super::Draft {
    imported.tools.iter().find(|d| d.name == name).unwrap_or_else(|| {
        panic!(
            "no tool `{name}` in {:?}",
            imported.tools.iter().map(|d| &d.name).collect::<Vec<_>>()
        )
    })
}

fn input<'a>(draft: &'a super::Draft, name: &str) -> &'a Value {
    draft
        .inputs
        .iter()
        .find(|i| i["name"] == json!(name))
        .unwrap_or_else(|| panic!("no input `{name}` in {:?}", draft.inputs))
}

/// #32.1: a parameter's description comes from the parameter, else its schema, else the
/// `$ref`'d schema; examples are said, and a default is the input's `default` (#38.4) unless
/// the input cannot take it as written.
#[test]
fn descriptions_survive_from_the_schema_and_the_reference() {
    let imported = import(
        &doc(json!({"/things/{id}": {"get": {
            "operationId": "getThing",
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"$ref": "#/components/schemas/Id"}},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "description": "How many.", "default": 20, "example": 5}},
                {"name": "page", "in": "query", "schema": {"type": "integer", "description": "Page.", "maximum": 10, "default": 900}},
                {"name": "q", "in": "query", "description": "Search text.", "schema": {"type": "string"}},
                {"name": "market", "in": "query", "schema": {"title": "Market", "type": "string"}}
            ],
            "responses": {"200": {"description": "ok"}}
        }}})),
        &Options::default(),
    )
    .unwrap();
    let thing = tool(&imported, "get_thing");
    assert_eq!(input(thing, "id")["description"], "The id of the thing, from its page.");
    assert_eq!(input(thing, "limit")["description"], "How many. Example: 5.");
    assert_eq!(input(thing, "limit")["default"], 20);
    // A default the input would refuse (above its maximum) stays in words.
    assert_eq!(input(thing, "page")["description"], "Page. Default: 900.");
    assert!(input(thing, "page").get("default").is_none());
    assert_eq!(input(thing, "q")["description"], "Search text.");
    assert_eq!(input(thing, "market")["description"], "Market");
    checked(&imported);
}

/// #32.2: an enumeration is an enum on every protocol, its names mapped to the API's values,
/// its `x-enum-descriptions` and default the values' descriptions.
#[test]
fn enumerations_stay_enumerations_with_wire_values() {
    let imported = import(
        &doc(json!({"/things": {"get": {
            "operationId": "listThings",
            "parameters": [
                {"name": "state", "in": "query", "schema": {"$ref": "#/components/schemas/State"}},
                {"name": "per", "in": "query", "schema": {"type": "integer", "enum": [10, 50]}}
            ],
            "responses": {"200": {"description": "ok"}}
        }}})),
        &Options::default(),
    )
    .unwrap();
    let list = tool(&imported, "list_things");
    let state = input(list, "state");
    assert_eq!(state["type"], "enum");
    // The default as JSON Schema's `default`, spelled as the API spells it (#38.4).
    assert_eq!(state["default"], "open");
    assert_eq!(
        state["values"],
        json!([
            {"name": "OPEN", "value": "open", "description": "Still running."},
            {"name": "CLOSED", "value": "closed", "description": "Done."},
            {"name": "NEW_YORK", "value": "New York", "description": "A city."}
        ])
    );
    assert_eq!(
        input(list, "per")["values"][1],
        json!({"name": "VALUE_50", "value": 50, "description": "`50`."})
    );
    let catalog = checked(&imported);
    let version = &catalog.find("list_things").unwrap().versions[0];
    // As the API spells them where inputs are JSON Schema (#38.2); N-ACT shows the names.
    assert_eq!(
        version.input_schema()["properties"]["state"]["enum"],
        json!(["open", "closed", "New York"])
    );
    assert_eq!(version.input_schema()["properties"]["state"]["default"], "open");
    assert!(
        version.inputs.iter().all(|p| p.kind.name() != "json"),
        "every input an N-ACT scalar"
    );
}

/// #38.4: unions keep their enumerations: one of enumerations only is one enumeration (GitHub's
/// `budget_type`), an optional one that is partly one (GitHub's gist `public`: a boolean or
/// `"true"`/`"false"`) is taken whole with its schema.
#[test]
fn unions_keep_their_enumerations() {
    let imported = import(
        &doc(json!({"/budgets": {"post": {
            "operationId": "createBudget",
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                "kind": {"oneOf": [{"type": "string", "enum": ["Bundle"]}, {"type": "string", "enum": ["Sku"]}]},
                "public": {"oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["true", "false"]}]}
            }}}}},
            "responses": {"200": {"description": "ok"}}
        }}})),
        &Options::default(),
    )
    .unwrap();
    let create = tool(&imported, "create_budget");
    assert_eq!(input(create, "kind")["type"], "enum");
    assert_eq!(input(create, "kind")["values"][1]["value"], "Sku");
    assert_eq!(input(create, "public")["type"], "json");
    assert_eq!(
        input(create, "public")["schema"]["oneOf"][1]["enum"],
        json!(["true", "false"])
    );
    let catalog = checked(&imported);
    let schema = &catalog.find("create_budget").unwrap().versions[0].input_schema();
    assert_eq!(schema["properties"]["kind"]["enum"], json!(["Bundle", "Sku"]));
}

/// #32.3: a union of scalars fills its path hole; a required object is an input (flattened when
/// its fields are scalars, else `json`); a body the step cannot send skips the tool, saying why;
/// an output the schema requires is required.
#[test]
fn nothing_the_api_requires_is_dropped() {
    let imported = import(
        &doc(json!({
            "/workflows/{workflow_id}/dispatches": {"post": {
                "operationId": "dispatch",
                "parameters": [{"name": "workflow_id", "in": "path", "required": true,
                                "schema": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["ref", "config", "inputs"],
                    "properties": {
                        "ref": {"type": "string"},
                        "config": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}, "secret": {"type": "string"}}},
                        "inputs": {"type": "object", "additionalProperties": {"type": "string"}},
                        "labels": {"type": "array", "items": {"type": "string"}}
                    }
                }}}},
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["id", "note"],
                    "properties": {"id": {"type": "integer"}, "note": {"type": "string", "nullable": true}, "extra": {"type": "string"}}
                }}}}}
            }},
            "/upload": {"post": {
                "operationId": "upload",
                "requestBody": {"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                "responses": {"200": {"description": "ok"}}
            }}
        })),
        &Options::default(),
    )
    .unwrap();
    let dispatch = tool(&imported, "dispatch");
    assert_eq!(dispatch.steps[0]["path"], "/workflows/{{input.workflow_id}}/dispatches");
    assert_eq!(input(dispatch, "workflow_id")["type"], "string");
    assert_eq!(
        dispatch.steps[0]["body"]["config"],
        json!({"url": "{{input.config_url}}", "secret": "{{input.config_secret}}"})
    );
    assert_eq!(input(dispatch, "config_secret")["required"], false);
    assert_eq!(input(dispatch, "inputs")["type"], "json");
    assert_eq!(dispatch.steps[0]["body"]["inputs"], "{{input.inputs}}");
    // An optional list is taken whole (#38.4), never left out.
    assert_eq!(input(dispatch, "labels")["required"], false);
    assert_eq!(dispatch.steps[0]["body"]["labels"], "{{input.labels}}");
    let required: Vec<(&str, bool)> = dispatch
        .outputs
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["required"].as_bool().unwrap()))
        .collect();
    assert_eq!(required, [("extra", false), ("id", true), ("note", false)]);
    assert!(dispatch.structured.is_empty(), "{:?}", dispatch.structured);
    assert!(imported.tools.iter().all(|d| d.name != "upload"));
    let notes = imported.notes.join("\n");
    assert!(
        notes.contains("POST /upload: skipped: its request body is application/octet-stream"),
        "{notes}"
    );
    assert!(
        notes.contains("`inputs` takes JSON the API requires") && notes.contains("not N-ACT"),
        "{notes}"
    );
    let catalog = checked(&imported);
    let dispatch = &catalog.find("dispatch").unwrap().versions[0];
    assert!(dispatch.inputs.iter().any(|p| p.kind.name() == "json"));
}

/// #32.4: `Accept` per operation from its answers; a text answer is a string output.
#[test]
fn a_text_operation_asks_for_text_and_answers_a_string() {
    let imported = import(
        &doc(json!({
            "/time.txt": {"get": {"operationId": "timeText", "responses": {"200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/time": {"get": {"operationId": "time", "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": {"now": {"type": "string"}}}}}}}}}
        })),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(imported.defaults["headers"]["Accept"], "application/json");
    let text = tool(&imported, "time_text");
    assert_eq!(text.steps[0]["headers"]["Accept"], "text/plain");
    assert_eq!(text.outputs[0]["type"], "string");
    assert!(tool(&imported, "time").steps[0].get("headers").is_none());
    checked(&imported);
}

/// #32.6: no servers, a GET with a body and a pattern in another regex dialect import, with
/// notes, into a catalog `check` accepts.
#[test]
fn quirks_import_with_a_note_rather_than_a_refusal() {
    let mut quirky = doc(json!({"/search": {"get": {
        "operationId": "search",
        "parameters": [{"name": "name", "in": "query", "schema": {"type": "string", "pattern": "^[\\w- ]*$"}}],
        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"q": {"type": "string"}}}}}},
        "responses": {"200": {"description": "ok"}}
    }}}));
    quirky.as_object_mut().unwrap().remove("servers");
    let imported = import(&quirky, &Options::default()).unwrap();
    assert_eq!(imported.defaults["base_url"], "{{secret.TEST_BASE_URL}}");
    assert!(imported.secrets.contains("TEST_BASE_URL"));
    let notes = imported.notes.join("\n");
    assert!(
        notes.contains("names no server") && notes.contains("TEST_BASE_URL"),
        "{notes}"
    );
    assert!(notes.contains("a GET request with a body"), "{notes}");
    assert!(notes.contains("`^[\\w\\- ]*$`"), "{notes}");
    assert_eq!(input(tool(&imported, "search"), "name")["pattern"], "^[\\w\\- ]*$");
    checked(&imported);
}

/// #32.7: a short toolkit name from the title; tool names cut at words, and said.
#[test]
fn names_are_short_cut_at_words_and_the_cut_is_said() {
    assert_eq!(short_title("GitHub's official OpenAPI spec"), "GitHub");
    assert_eq!(
        short_title("GitHub's Official OpenAPI Spec (Octokit extension)"),
        "GitHub"
    );
    assert_eq!(short_title("Swagger Petstore - OpenAPI 3.0"), "Petstore");
    assert_eq!(short_title("Spotify Web API"), "SpotifyWeb");
    assert_eq!(short_title("API"), "Api");
    assert_eq!(
        short_title("GitHub's official OpenAPI spec + Octokit extension"),
        "GitHub"
    );
    assert_eq!(short_title("OpenAPI - Acme Billing"), "AcmeBilling");
    assert_eq!(
        unique_within(
            "actions_create_or_update_environment_secret",
            &mut Default::default(),
            30
        ),
        "actions_create_or_update"
    );
    let long = "reactions_create_for_team_discussion_comment_in_org_legacy_version";
    let mut d = doc(json!({"/a": {"get": {"operationId": long, "responses": {}}}}));
    d["info"]["title"] = json!("GitHub's official OpenAPI spec");
    let imported = import(&d, &Options::default()).unwrap();
    assert_eq!(imported.toolkit, "GitHub");
    let name = &imported.tools[0].name;
    assert!(
        long.starts_with(name.as_str()) && long[name.len()..].starts_with('_'),
        "{name}"
    );
    assert!(
        imported.notes.iter().any(|n| n.contains("1 tool name(s) were cut")),
        "{:?}",
        imported.notes
    );
    checked(&imported);
}

/// A description with nothing to call says so, and one whose every operation was skipped says
/// why, rather than blaming filters that were not given.
#[test]
fn nothing_to_import_says_why() {
    let none = import(&doc(json!({})), &Options::default()).unwrap_err();
    assert!(none.contains("no operations under `paths`"), "{none}");
    let skipped = import(
        &doc(json!({"/x/{{secret.K}}": {"get": {"responses": {}}}})),
        &Options::default(),
    )
    .unwrap_err();
    assert!(
        skipped.contains("no operation could be imported") && skipped.contains("template"),
        "{skipped}"
    );
}

/// #30.3: nothing a description contributes is a live template: a path with `{{` skips the
/// operation, `{{` in descriptions is broken up, a server URL with one is refused.
#[test]
fn a_description_cannot_write_templates() {
    let imported = import(
        &doc(json!({
            "/leak/{{secret.OTHER}}/x": {"get": {"operationId": "leak", "responses": {}}},
            "/t/{id}": {"get": {
                "operationId": "fine",
                "description": "Sends {{caller.token}} nowhere.",
                "parameters": [
                    {"name": "id", "in": "path", "required": true, "description": "See {{secret.K}}.", "schema": {"type": "string"}},
                    {"name": "{{secret.K}}", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {}
            }}
        })),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(imported.tools.len(), 1);
    let fine = tool(&imported, "fine");
    assert_eq!(fine.description, "Sends { {caller.token} } nowhere.");
    assert_eq!(input(fine, "id")["description"], "See { {secret.K} }.");
    assert_eq!(fine.inputs.len(), 1);
    let text = render(&imported, &merge::fresh(&imported));
    assert!(!text.contains("{{secret.") && !text.contains("{{caller."), "{text}");
    assert!(!text.contains("null"), "nothing added on the way: {text}");
    let notes = imported.notes.join("\n");
    assert!(notes.contains("GET /leak/{{secret.OTHER}}/x: skipped"), "{notes}");
    assert!(notes.contains("the description, input `id`"), "{notes}");
    let mut server = doc(json!({"/a": {"get": {"responses": {}}}}));
    server["servers"] = json!([{"url": "https://x.example/{{secret.K}}"}]);
    assert!(import(&server, &Options::default()).unwrap_err().contains("template"));
    checked(&imported);
}

/// #30.11: a description pointing at the metadata service (or loopback) is refused, unless
/// the operator says otherwise (`--allow-private` for private ranges, `--base-url` always).
#[test]
fn a_description_pointing_inside_is_refused() {
    let mut inside = doc(json!({"/latest/meta-data": {"get": {"responses": {}}}}));
    inside["servers"] = json!([{"url": "http://169.254.169.254/latest"}]);
    let refused = import(&inside, &Options::default()).unwrap_err();
    assert!(
        refused.contains("169.254.169.254") && refused.contains("--base-url"),
        "{refused}"
    );
    let given = Options {
        base_url: Some("https://api.example.com".to_owned()),
        ..Options::default()
    };
    assert!(import(&inside, &given).is_ok());
    inside["servers"] = json!([{"url": "http://127.0.0.1:8080"}]);
    assert!(import(&inside, &Options::default()).is_err());
    let allowed = Options {
        allow_private: true,
        ..Options::default()
    };
    assert_eq!(
        import(&inside, &allowed).unwrap().defaults["base_url"],
        "http://127.0.0.1:8080"
    );
    // Nor can it send the client secret to an internal token endpoint.
    let mut token = doc(json!({"/a": {"get": {"responses": {}}}}));
    token["components"]["securitySchemes"] = json!({"cc": {"type": "oauth2", "flows": {"clientCredentials": {
        "tokenUrl": "http://169.254.169.254/token", "scopes": {}}}}});
    token["security"] = json!([{"cc": []}]);
    let imported = import(&token, &Options::default()).unwrap();
    assert!(imported.defaults.get("auth").is_none() && imported.secrets.is_empty());
    let notes = imported.notes.join("\n");
    assert!(
        notes.contains("token URL") && notes.contains("169.254.169.254"),
        "{notes}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever mix of enumerations, unions, required objects, bodies, answers and server URLs a
    /// description has, what imports passes `check` (issue #32: "import and pass `check`").
    #[test]
    fn what_imports_passes_check(
        values in proptest::collection::vec(proptest::sample::select(vec![
            json!("open"), json!("New York"), json!("a-b"), json!("a_b"), json!(""), json!(2), json!(-2),
            json!("ÉTÉ"), json!("{{secret.X}}"), json!(true), json!(null), json!("x".repeat(300)),
        ]), 1..6),
        kind in proptest::sample::select(vec!["string", "integer", "number", "boolean", "object", "array", "file"]),
        header in proptest::sample::select(vec!["X-Key", "X Key", "", "Accept", "é"]),
        union in proptest::sample::select(vec![
            json!({"type": "integer"}), json!({"oneOf": [{"type": "integer"}, {"type": "string"}]}),
            json!({"anyOf": [{"type": "object"}, {"type": "string"}]}), json!({"type": ["string", "null"]}),
        ]),
        pattern in proptest::sample::select(vec!["^[\\w- ]*$", "^(?<x>a)\\k<x>$", "[", "^a{2,1}$", "^\\p{L}+$"]),
        media in proptest::sample::select(vec!["application/json", "text/plain", "application/xml", "image/png"]),
        server in proptest::sample::select(vec![
            json!([]), json!([{"url": "/api"}]), json!([{"url": "//h.example/x"}]),
            json!([{"url": "https://{tenant}.example.com"}]), json!([{"url": "ftp://x"}]),
        ]),
        method in proptest::sample::select(vec!["get", "post"]),
    ) {
        let d = json!({
            "openapi": "3.0.3", "info": {"title": "Prop"}, "servers": server,
            "paths": {"/a/{id}": {method: {
                "operationId": "op",
                "parameters": [
                    {"name": "id", "in": "path", "required": true, "schema": union},
                    {"name": "e", "in": "query", "schema": {"enum": values}},
                    {"name": "p", "in": "query", "schema": {"type": "string", "pattern": pattern, "maxLength": 0}},
                    {"name": "l", "in": "query", "schema": {"type": "array", "items": {"enum": values}}},
                    {"name": header, "in": "header", "schema": {"type": "string"}}
                ],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["x", "y", "w", "w"],
                    "properties": {
                        "x": {"type": kind}, "y": {"type": "object", "properties": {"z": {"enum": values}}},
                        "w": {"type": "object", "required": ["q", "q"], "additionalProperties": 3,
                              "properties": {"q": {"type": [kind, "file"], "enum": []}, "n": {"type": "array"}}}
                    }
                }}}},
                "responses": {"200": {"description": "ok", "content": {media: {"schema": {
                    "type": "object", "required": ["r"], "properties": {"r": {"type": kind}}
                }}}}}
            }}}
        });
        if let Ok(imported) = import(&d, &Options::default()) {
            checked(&imported);
        }
    }
}
