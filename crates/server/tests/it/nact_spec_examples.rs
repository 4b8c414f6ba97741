//! The examples of draft-rosenberg-aiproto-nact-00, ported as tests.
//!
//! The draft's JSON has mistakes (missing commas, `"{versionNum}` unquoted on one side, a
//! trailing comma, `{ [ … ] }` around `allowed-values`); the expected documents here are the
//! corrected readings of docs/protocols.md §3. Parameter names must match `^[A-Za-z][A-Za-z0-9_]*$`
//! (docs/protocols.md §1), so the draft's display names ("City", "Temperature in Fahrenheit") become
//! `city` and `temp_fh`; the draft's output id `temp-fh` is kept as the id.

use serde_json::{Map, Value, json};
use toolhost_core::{CallContext, ToolFailure};

use crate::support::{Server, Spawn, is_uuid, outputs, yaml};

/// Figure 2's tool, with the toolkit `system` so that its tags are exactly the figure's.
const WEATHER: &str = r#"toolkits:
  - name: system
    tools:
      - name: lookup_weather_by_city
        id: 0479a45d-ad0a-49d4-94db-75edf00d2ca4
        description: Invoke this tool to lookup the weather for a given city.
        img: https://example.invalid/weather.png
        tags: [retrievals]
        versions:
          - version: 1.0.0
            inputs:
              - id: city
                name: city
                description: The city for the weather lookup. For example, Boston or Los Angeles.
                required: true
            outputs:
              - id: temp-fh
                name: temp_fh
                type: int
                description: The current temperature in the named city.
            backend: { kind: native, function: weather.lookup }
"#;

/// Figure 3's enum input, on a tool that echoes the chosen class.
const FLIGHTS: &str = r#"toolkits:
  - name: travel
    tools:
      - name: reserve_flight_seat
        description: Reserve a seat on a flight in the chosen cabin class.
        versions:
          - version: 1.0.0
            inputs:
              - id: flight_class
                name: flight_class
                type: enum
                description: The cabin class for the flight reservation
                values:
                  - name: ECONOMY
                    description: Economy class, the least expensive cabin class. Also known as coach.
                  - name: PREMIUM_ECONOMY
                    description: Premium economy class, the second seat tier. More legroom.
                  - name: BUSINESS
                    description: Business class, the next to top seat tier. Offers lie-down seating.
                  - name: FIRST
                    description: The top tier. Lie down seating, luxury meal service, lounge access.
            outputs:
              - name: flight_class
                type: string
                description: The cabin class that was reserved.
            backend: { kind: native, function: testing.echo }
"#;

/// The weather in every city is 80 °F (N-ACT §7's example answer).
fn weather_lookup(_: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let mut output = Map::new();
    output.insert("temp_fh".to_owned(), json!(80));
    Ok(output)
}

async fn spec_server() -> Server {
    Spawn::new(vec![yaml("weather.yaml", WEATHER), yaml("flights.yaml", FLIGHTS)])
        .with_function("weather.lookup", weather_lookup)
        .start()
        .await
}

/// N-ACT §6.1, Figure 2 ("ToolSignature Object Example"), corrected: commas added,
/// `version`/`currentVersion` as JSON integers (docs/protocols.md §3), names as identifiers.
fn figure_2() -> Value {
    json!({
        "toolId": "0479a45d-ad0a-49d4-94db-75edf00d2ca4",
        "name": "lookup_weather_by_city",
        "description": "Invoke this tool to lookup the weather for a given city.",
        "img": "https://example.invalid/weather.png",
        "version": 1,
        "currentVersion": 1,
        "tags": ["system", "retrievals"],
        "input_parameters": [
            {
                "id": "city",
                "name": "city",
                "type": "string",
                "description": "The city for the weather lookup. For example, Boston or Los Angeles.",
                "required": true
            }
        ],
        "output_parameters": [
            {
                "id": "temp-fh",
                "name": "temp_fh",
                "type": "int",
                "description": "The current temperature in the named city."
            }
        ]
    })
}

/// Asserts that `served` is `expected` plus, at most, toolhost's documented extension members.
#[track_caller]
fn assert_signature(served: &Value, expected: &Value) {
    let mut served = served.clone();
    let top = served.as_object_mut().expect("a signature is an object");
    assert_eq!(
        top.remove("semver"),
        Some(json!("1.0.0")),
        "extension: the semver of `version`"
    );
    for output in top["output_parameters"].as_array_mut().expect("outputs") {
        let output = output.as_object_mut().expect("an output is an object");
        assert_eq!(
            output.remove("required"),
            Some(json!(true)),
            "extension: outputs say whether they are always there"
        );
    }
    assert_eq!(served, *expected);
}

#[tokio::test]
async fn figure_2_signature_from_the_enumeration() {
    // N-ACT §6.1: `GET {platform-root}/tools` returns `items`, an array of ToolSignature.
    let server = spec_server().await;
    let page = server.get("/nact/tools?tag=system").await.expect_ok();
    let items = page["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    assert_signature(&items[0], &figure_2());
    assert!(
        is_uuid(items[0]["toolId"].as_str().expect("toolId")),
        "§6.1: the toolID is always a UUID"
    );
    assert!(
        items[0]["version"].is_u64() && items[0]["currentVersion"].is_u64(),
        "docs/protocols.md §3: integers"
    );
    // §6.4: `paging` holds the applied `pageLimit` and, on the last page, no `next`.
    assert_eq!(page["paging"], json!({ "pageLimit": 50 }));
}

#[tokio::test]
async fn figure_2_signature_by_id_by_name_and_by_version() {
    // N-ACT §6.2 (`/tools/{toolID}`) and §6.3 (`/versions`, `/versions/{versionNum}`).
    let server = spec_server().await;
    for path in [
        "/nact/tools/0479a45d-ad0a-49d4-94db-75edf00d2ca4",
        "/nact/tools/lookup_weather_by_city",
        "/nact/tools/lookup_weather_by_city/versions/1",
    ] {
        assert_signature(&server.get(path).await.expect_ok(), &figure_2());
    }
    let versions = server
        .get("/nact/tools/0479a45d-ad0a-49d4-94db-75edf00d2ca4/versions")
        .await
        .expect_ok();
    let items = versions["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    assert_signature(&items[0], &figure_2());
}

#[tokio::test]
async fn figure_3_allowed_values_are_a_plain_array() {
    // N-ACT §6.1, Figure 3 ("ToolSignature Input Parameters Enum Support"), corrected: the
    // `{ [ … ] }` around the values is a plain array, the trailing comma and missing commas fixed.
    let expected = json!({
        "id": "flight_class",
        "name": "flight_class",
        "type": "enum",
        "description": "The cabin class for the flight reservation",
        "allowed-values": [
            { "name": "ECONOMY", "description": "Economy class, the least expensive cabin class. Also known as coach." },
            { "name": "PREMIUM_ECONOMY", "description": "Premium economy class, the second seat tier. More legroom." },
            { "name": "BUSINESS", "description": "Business class, the next to top seat tier. Offers lie-down seating." },
            { "name": "FIRST", "description": "The top tier. Lie down seating, luxury meal service, lounge access." }
        ],
        "required": true
    });
    let server = spec_server().await;
    let signature = server.get("/nact/tools/reserve_flight_seat").await.expect_ok();
    assert_eq!(signature["input_parameters"], json!([expected]));
}

#[tokio::test]
async fn figure_3_enum_values_are_enforced_on_invocation() {
    // N-ACT §5.1: an enum value that is not amongst the allowed values is rejected.
    let server = spec_server().await;
    let result = server
        .invoke(
            "/nact/tools/reserve_flight_seat",
            &[("flight_class", json!("PREMIUM_ECONOMY"))],
        )
        .await
        .expect_ok();
    assert_eq!(
        outputs(&result),
        [("flight_class".to_owned(), json!("PREMIUM_ECONOMY"))]
    );
    let errors = server
        .invoke("/nact/tools/reserve_flight_seat", &[("flight_class", json!("COACH"))])
        .await
        .expect_invalid(&["flight_class"]);
    let message = errors["flight_class"].as_str().unwrap_or_default();
    assert!(
        message.contains("ECONOMY, PREMIUM_ECONOMY, BUSINESS, FIRST"),
        "{message}"
    );
}

#[tokio::test]
async fn section_7_invocation_example() {
    // N-ACT §7: `POST {platform-root}/tools/{toolID}:invoke` with the invocation object; corrected:
    // closing braces added, names as in the signature (docs/protocols.md §3).
    let server = spec_server().await;
    let request = json!({
        "name": "lookup_weather_by_city",
        "input_parameters": [
            { "name": "city", "value": "Omaha, Nebraska" }
        ]
    });
    let expected = json!({
        "output_parameters": [
            { "name": "temp_fh", "value": 80 }
        ]
    });
    for path in [
        "/nact/tools/lookup_weather_by_city:invoke",
        "/nact/tools/0479a45d-ad0a-49d4-94db-75edf00d2ca4:invoke",
        // §7: "invocation of a specific version of the tool".
        "/nact/tools/0479a45d-ad0a-49d4-94db-75edf00d2ca4/versions/1:invoke",
    ] {
        let mut result = server.post_json(path, &request).await.expect_ok();
        let object = result.as_object_mut().expect("an object");
        assert_eq!(
            object.remove("version"),
            Some(json!(1)),
            "extension: the version that ran"
        );
        // §7: "The output MUST include the name which matches to the output name in the signature."
        assert_eq!(result, expected, "{path}");
    }
}

#[tokio::test]
async fn section_7_the_draft_display_name_is_not_a_parameter_name() {
    // The draft's example sends `"name": "City"`; the signature's parameter is `city`, and names
    // are matched exactly, so the call is refused with a message naming both.
    let server = spec_server().await;
    let request = json!({
        "name": "lookup_weather_by_city",
        "input_parameters": [{ "name": "City", "value": "Omaha, Nebraska" }]
    });
    let reply = server
        .post_json("/nact/tools/lookup_weather_by_city:invoke", &request)
        .await;
    let errors = reply.expect_invalid(&["City", "city"]);
    assert!(
        errors["City"].as_str().unwrap_or_default().contains("city"),
        "{errors:?}"
    );
}

#[tokio::test]
async fn section_7_the_tool_name_in_the_body_must_match() {
    // docs/protocols.md §3: a `name` that differs from the addressed tool is 400.
    let server = spec_server().await;
    let request = json!({
        "name": "Lookup Weather",
        "input_parameters": [{ "name": "city", "value": "Omaha, Nebraska" }]
    });
    server
        .post_json("/nact/tools/lookup_weather_by_city:invoke", &request)
        .await
        .expect_problem(400);
}
