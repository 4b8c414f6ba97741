//! The shipped weather example (N-ACT §3.1.1), end to end against its local Open-Meteo
//! stand-in, `examples/weather/upstream.py`, exactly as its README line runs it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use toolhost_core::catalog::Source;
use toolhost_core::{CallContext, Engine};

use crate::support::{call_with, failure, loader, render};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/weather");

/// `python3 examples/weather/upstream.py 0`, killed on drop.
struct StandIn {
    child: Child,
    base: String,
}

impl StandIn {
    fn start() -> Self {
        let mut child = Command::new("python3")
            .arg(format!("{EXAMPLE}/upstream.py"))
            .arg("0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs examples/weather/upstream.py");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .expect("the stand-in prints its port");
        Self {
            base: format!("http://127.0.0.1:{port}"),
            child,
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn example_engine(base: &str) -> Engine {
    let sources: Vec<Source> = Source::read_dir(std::path::Path::new(EXAMPLE))
        .unwrap()
        .into_iter()
        .map(|s| Source {
            text: s.text.replace("http://127.0.0.1:8765", base),
            ..s
        })
        .collect();
    Engine::new(loader(&[]).load(&sources).unwrap_or_else(|p| panic!("{}", render(&p))))
}

#[tokio::test]
async fn lookup_weather_by_city_geocodes_then_forecasts() {
    let stand_in = StandIn::start();
    let engine = example_engine(&stand_in.base);
    let out = call_with(
        &engine,
        "lookup_weather_by_city",
        json!({"city": "Berlin"}),
        CallContext::default(),
    )
    .await
    .unwrap();
    // upstream.py's made-up weather at Berlin's coordinates (see `weather_at` there).
    assert_eq!(
        Value::Object(out),
        json!({
            "place": "Berlin, Germany",
            "temperature_c": 10.1,
            "temperature_f": 50.2,
            "wind_kmh": 18.4,
            "conditions": "cloudy"
        })
    );
    let accents = call_with(
        &engine,
        "lookup_weather_by_city",
        json!({"city": "São Paulo"}),
        CallContext::default(),
    )
    .await
    .unwrap();
    assert_eq!(accents["place"], "São Paulo, Brazil");
}

#[tokio::test]
async fn an_unknown_city_is_phrased_for_the_model() {
    let stand_in = StandIn::start();
    let engine = example_engine(&stand_in.base);
    let f = failure(
        call_with(
            &engine,
            "lookup_weather_by_city",
            json!({"city": "Atlantis"}),
            CallContext::default(),
        )
        .await,
    );
    assert_eq!(f.message, "no city named Atlantis was found");
    assert_eq!(
        f.prompt.as_deref(),
        Some("Check the spelling, or try a nearby larger city.")
    );
    assert_eq!(f.code.as_deref(), Some("city_not_found"));
    assert!(!f.retryable);
}

#[tokio::test]
async fn comparing_two_cities_names_the_warmer() {
    let stand_in = StandIn::start();
    let engine = example_engine(&stand_in.base);
    let out = call_with(
        &engine,
        "compare_weather_in_cities",
        json!({"first_city": "Tokyo", "second_city": "London"}),
        CallContext::default(),
    )
    .await
    .unwrap();
    assert_eq!(out["warmer"], "Tokyo", "{out:?}");
    assert!(out["first_c"].as_f64().unwrap() > out["second_c"].as_f64().unwrap());
}
