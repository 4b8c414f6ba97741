//! The upstream of the sculpted-tool comparison: `GET /add?a=&b=` answers `{"sum": a + b}`, after
//! `delay_us` microseconds when that is given (a stand-in for an API that takes its time). The
//! benchmark calls it directly, and through a one-step `kind: http` tool on toolhost.

use axum::Json;
use axum::Router;
use axum::extract::Query;
use axum::routing::get;
use serde_json::{Map, Value};

use crate::add;

/// The one route.
pub(crate) fn app() -> Router {
    Router::new().route("/add", get(sum))
}

async fn sum(Query(mut query): Query<Map<String, Value>>) -> Json<Value> {
    let delay = query
        .remove("delay_us")
        .and_then(|v| v.as_str().and_then(|s| s.parse::<u64>().ok()));
    if let Some(us) = delay {
        tokio::time::sleep(std::time::Duration::from_micros(us)).await;
    }
    // Query values arrive as strings; read them as numbers, as a JSON API would.
    let input: Map<String, Value> = query
        .into_iter()
        .map(|(k, v)| {
            let number = v
                .as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number);
            (k, number)
        })
        .collect();
    Json(Value::Object(add(&input)))
}
