//! json-server (0.17.4): a multi-step flow against a real REST upstream. Find a city by name,
//! then its forecast and alerts (in parallel), then, only when the caller gave a note, save it
//! with a POST.

use serde_json::{Value, json};

use super::json_server;
use crate::support::{call, engine, failure, tool};

const DB: &str = r#"{
  "cities": [
    {"id": 1, "name": "Berlin", "lat": 52.5, "lon": 13.4},
    {"id": 2, "name": "São Paulo", "lat": -23.5, "lon": -46.6}
  ],
  "forecasts": [
    {"id": 10, "cityId": 1, "temp_c": 10.5, "summary": "cloudy"},
    {"id": 20, "cityId": 2, "temp_c": 24, "summary": "sunny"}
  ],
  "alerts": [
    {"id": 100, "cityId": 1, "text": "wind"},
    {"id": 101, "cityId": 1, "text": "ice"}
  ],
  "notes": []
}"#;

const REPORT: &str = r#"
kind: http
base_url: BASE
steps:
  - name: city
    path: /cities
    query: { name: "{{input.city}}" }
    expect: ["body[0]"]
    errors:
      missing: { message: "no city named {{input.city}}", prompt: "Try Berlin or São Paulo.", code: city_not_found }
  - name: forecast
    path: /forecasts
    query: { cityId: "{{city.body[0].id}}" }
    expect: ["body[0]"]
  - name: alerts
    path: /alerts
    query: { cityId: "{{city.body[0].id}}", _sort: id }
  - name: note
    method: POST
    path: /notes
    when: ".input.note != null"
    body: { cityId: "{{city.body[0].id}}", text: "{{input.note}}" }
outputs:
  city: city.body[0].name
  temp_c: forecast.body[0].temp_c
  summary: "{{forecast.body[0].summary}} in {{city.body[0].name}}"
  alerts: { jq: "[.steps.alerts.body[].text]" }
  note_id: note.body.id
"#;

const INPUTS: &str =
    r#"[{name: city, description: "A city."}, {name: note, required: false, description: "A note to save."}]"#;
const OUTPUTS: &str = r#"[{name: city, type: string, description: "c"}, {name: temp_c, type: number, description: "t"}, {name: summary, type: string, description: "s"}, {name: alerts, type: json, description: "a"}, {name: note_id, type: int, required: false, description: "n"}]"#;

#[tokio::test]
async fn a_city_report_chains_finds_parallel_lookups_and_a_conditional_post() {
    let Some(server) = json_server(DB).await else { return };
    let engine = engine(&tool(INPUTS, OUTPUTS, REPORT), &server.base, &[]);
    let out = call(&engine, json!({"city": "Berlin"})).await.unwrap();
    assert_eq!(
        Value::Object(out),
        json!({"city": "Berlin", "temp_c": 10.5, "summary": "cloudy in Berlin", "alerts": ["wind", "ice"]})
    );
    let out = call(&engine, json!({"city": "São Paulo", "note": "bring sunscreen"}))
        .await
        .unwrap();
    assert_eq!(out["alerts"], json!([]));
    assert_eq!(out["note_id"], 1);
    let notes: Value = reqwest::get(format!("{}/notes", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(notes, json!([{"cityId": 2, "text": "bring sunscreen", "id": 1}]));

    let f = failure(call(&engine, json!({"city": "Atlantis"})).await);
    assert_eq!(f.message, "no city named Atlantis");
    assert_eq!(f.code.as_deref(), Some("city_not_found"));
    assert!(!f.retryable);
}

#[tokio::test]
async fn a_missing_resource_is_a_permanent_failure() {
    let Some(server) = json_server(DB).await else { return };
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: city
    path: /cities/{{input.id}}
    errors: { "404": "there is no city {{input.id}}" }
outputs: { city: city.body.name }
"#;
    let inputs = r#"[{name: id, type: int, description: "A city id."}]"#;
    let outputs = r#"[{name: city, type: string, description: "c"}]"#;
    let engine = engine(&tool(inputs, outputs, backend), &server.base, &[]);
    assert_eq!(call(&engine, json!({"id": 2})).await.unwrap()["city"], "São Paulo");
    let f = failure(call(&engine, json!({"id": 99})).await);
    assert_eq!(
        (f.message.as_str(), f.code.as_deref(), f.retryable),
        ("there is no city 99", Some("upstream_4xx"), false)
    );
}
