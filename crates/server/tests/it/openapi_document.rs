//! Issue #13 §3: `GET /openapi.json`, the catalog as an OpenAPI 3.1 document. Its operations
//! are the tools (WoA, named after the tool), each served version (N-ACT) and OTC's call with a
//! branch per version; the schemas are the catalog's, and a body written from the document is
//! answered as the document says. (An independent validator and schemathesis check it too:
//! `tests/peer/openapi_out.sh`.)

use serde_json::{Value, json};

use crate::support::{Spawn, histories};

/// The document's operation at `path` and `method`.
fn operation<'d>(document: &'d Value, path: &str, method: &str) -> &'d Value {
    document["paths"]
        .get(path)
        .and_then(|p| p.get(method))
        .unwrap_or_else(|| {
            panic!(
                "no {method} {path} in {:?}",
                document["paths"].as_object().map(|p| p.keys().collect::<Vec<_>>())
            )
        })
}

fn body_schema(operation: &Value) -> &Value {
    &operation["requestBody"]["content"]["application/json"]["schema"]
}

#[tokio::test]
async fn every_tool_and_served_version_is_an_operation_with_its_own_schemas() {
    let server = Spawn::bundled().with_sources(vec![histories()]).start().await;
    let reply = server.get("/openapi.json").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.content_type(), "application/json");
    let document = reply.json();
    assert_eq!(document["openapi"], "3.1.0");
    assert!(
        document["servers"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );

    // WoA: one operation per tool, named after it, its body the latest version's input.
    let catalog = server.engine.catalog();
    let tool = catalog.find("evolving_tool").unwrap();
    let woa = operation(&document, "/woa/agents/evolving_tool/invoke", "post");
    assert_eq!(woa["operationId"], "evolving_tool");
    assert_eq!(body_schema(woa)["properties"]["input"], **tool.latest().input_schema());
    let semvers: Vec<&str> = body_schema(woa)["properties"]["version"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(semvers.len(), 6, "served versions only (1.3.0 is retired): {semvers:?}");
    assert!(!semvers.contains(&"1.3.0"));

    // N-ACT: one operation per served version, at its number; a retired one is absent.
    for version in tool.served_versions() {
        let path = format!("/nact/tools/evolving_tool/versions/{}:invoke", version.number);
        let op = operation(&document, &path, "post");
        assert_eq!(op["operationId"], format!("nact_evolving_tool_v{}", version.number));
    }
    assert!(
        document["paths"]
            .get("/nact/tools/evolving_tool/versions/4:invoke")
            .is_none()
    );

    // OTC: a branch per served version, its tool_id and input.
    let otc = operation(&document, "/otc/tools/call", "post");
    let branches = body_schema(otc)["properties"]["request"]["oneOf"].as_array().unwrap();
    let ids: Vec<&str> = branches
        .iter()
        .filter_map(|b| b["properties"]["tool_id"]["const"].as_str())
        .collect();
    assert!(
        ids.contains(&"History.evolving_tool@1.6.0") && !ids.contains(&"History.evolving_tool@1.3.0"),
        "{ids:?}"
    );
    assert!(ids.contains(&"Calculator.add_numbers@1.0.0"), "{ids:?}");

    // Written as it is sent, never held whole (issue #42.1): the first answer has no tag (it
    // is learnt while sent); the next carries it, the same bytes, and 304 for a client that
    // has it.
    assert!(reply.headers.get("etag").is_none(), "{:?}", reply.headers);
    let again = server.get("/openapi.json").await;
    assert_eq!(again.text, reply.text, "the same catalog, the same document");
    let tag = again.headers["etag"].to_str().unwrap().to_owned();
    assert_eq!(server.get_if_none_match("/openapi.json", &tag).await.status, 304);
}

#[tokio::test]
async fn a_body_written_from_the_document_is_answered_as_the_document_says() {
    let server = Spawn::bundled().start().await;
    let document = server.get("/openapi.json").await.json();
    let add = operation(&document, "/woa/agents/add_numbers/invoke", "post");
    let input_schema = &body_schema(add)["properties"]["input"];
    let required: Vec<&str> = input_schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(required, ["a", "b"], "{input_schema}");
    let input = json!({"a": 2, "b": 40});
    assert!(jsonschema::is_valid(input_schema, &input));
    let reply = server
        .post_json("/woa/agents/add_numbers/invoke", &json!({"input": input}))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let answer = reply.json();
    let declared = &add["responses"]["200"]["content"]["application/json"]["schema"];
    assert!(jsonschema::is_valid(declared, &answer), "{answer} against {declared}");

    // N-ACT's pairs are typed one by one: a wrong type is outside the schema, and refused.
    let nact = operation(&document, "/nact/tools/add_numbers/versions/1:invoke", "post");
    let schema = body_schema(nact);
    let good = json!({"input_parameters": [{"name": "a", "value": 2}, {"name": "b", "value": 40}]});
    let bad = json!({"input_parameters": [{"name": "a", "value": "two"}, {"name": "b", "value": 40}]});
    assert!(jsonschema::is_valid(schema, &good) && !jsonschema::is_valid(schema, &bad));
    let reply = server
        .post_json("/nact/tools/add_numbers/versions/1:invoke", &good)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let declared = &nact["responses"]["200"]["content"]["application/json"]["schema"];
    assert!(jsonschema::is_valid(declared, &reply.json()), "{}", reply.text);
    assert_eq!(
        server
            .post_json("/nact/tools/add_numbers/versions/1:invoke", &bad)
            .await
            .status,
        422
    );
}

/// Issue #38.1: an input schema's `$ref`s into the version's `$defs` still resolve once the
/// schema sits inside the document (where `#` is the document), on WoA's operation and OTC's
/// branch; N-ACT, which cannot show the tool, has no operation for it.
#[tokio::test]
async fn refs_into_a_tools_defs_resolve_inside_the_document() {
    let conformance = without_sculpted_tools(include_str!("../../../../examples/conformance/tools.yaml"));
    let server = Spawn::new(vec![crate::support::yaml("tools.yaml", &conformance)])
        .start()
        .await;
    let document = server.get("/openapi.json").await.expect_ok();
    let woa =
        "/paths/~1woa~1agents~1json_schema_2020_12_tool~1invoke/post/requestBody/content/application~1json/schema";
    let input = &document.pointer(woa).unwrap()["properties"]["input"];
    let reference = input["properties"]["address"]["$ref"].as_str().unwrap();
    assert_eq!(
        document.pointer(&reference[1..]).unwrap()["$anchor"],
        "addressDef",
        "{reference}"
    );
    // The document as a schema whose root is WoA's request body: a validator resolves every
    // reference within it, and the rules and the referenced address both hold.
    let mut root = document.clone();
    root["$ref"] = json!(format!("#{woa}"));
    let validator = jsonschema::validator_for(&root).unwrap();
    assert!(validator.is_valid(&json!({"input": {"email": "a@b.c", "address": {"city": "Oslo"}}})));
    assert!(!validator.is_valid(&json!({"input": {"email": "a@b.c", "address": {"city": 1}}})));
    assert!(!validator.is_valid(&json!({"input": {"contactMethod": "phone", "email": "a@b.c"}})));
    // OTC's branch for the tool, the same way.
    let branches = document
        .pointer("/paths/~1otc~1tools~1call/post/requestBody/content/application~1json/schema/properties/request/oneOf")
        .unwrap()
        .as_array()
        .unwrap();
    let (i, branch) = branches
        .iter()
        .enumerate()
        .find(|(_, b)| b["properties"]["tool_id"]["const"] == "Conformance.json_schema_2020_12_tool@1.0.0")
        .unwrap();
    let reference = branch["properties"]["input"]["properties"]["address"]["$ref"]
        .as_str()
        .unwrap();
    assert!(reference.contains(&format!("/oneOf/{i}/")), "{reference}");
    assert_eq!(document.pointer(&reference[1..]).unwrap()["$anchor"], "addressDef");
    let paths = document["paths"].as_object().unwrap();
    assert!(
        !paths
            .keys()
            .any(|p| p.starts_with("/nact/tools/json_schema_2020_12_tool"))
    );
    assert!(paths.contains_key("/nact/tools/echo_with_region_header/versions/1:invoke"));
}

/// `catalog` without its sculpted (`kind: http`) tools: the `http` backend lives in a crate above
/// this one, and the tests here need the other tools only. A tool is a `      - name:` item of the
/// toolkit's `tools:` list, up to the next item or the next less-indented line.
fn without_sculpted_tools(catalog: &str) -> String {
    let mut out = Vec::new();
    let mut tool: Vec<&str> = Vec::new();
    let flush = |tool: &mut Vec<&str>, out: &mut Vec<String>| {
        if !tool.iter().any(|line| line.trim_start().starts_with("kind: http")) {
            out.extend(tool.iter().map(|line| (*line).to_owned()));
        }
        tool.clear();
    };
    for line in catalog.lines() {
        let indent = line.len() - line.trim_start().len();
        if line.starts_with("      - name: ") {
            flush(&mut tool, &mut out);
            tool.push(line);
        } else if !tool.is_empty() && (indent > 6 || line.trim().is_empty()) {
            tool.push(line);
        } else {
            flush(&mut tool, &mut out);
            out.push(line.to_owned());
        }
    }
    flush(&mut tool, &mut out);
    out.join("\n")
}
