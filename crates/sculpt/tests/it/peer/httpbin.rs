//! httpbin (0.10.4 under gunicorn): every placement of a value, hostile input, status codes,
//! delays, slow bodies, redirects, body caps, text bodies and outbound auth.

use std::time::{Duration, Instant};

use percent_encoding::percent_decode_str;
use serde_json::json;
use toolhost_core::Engine;

use super::httpbin;
use crate::support::{Logs, call, engine, failure, tool};

const SEEN: &str = r#"[{name: seen, type: json, description: "What httpbin saw."}]"#;

const PLACEMENTS: &str = r#"
kind: http
base_url: BASE
headers: { X-Backend: everywhere }
steps:
  - name: echo
    method: POST
    path: /anything/{{input.id}}
    query: { q: "{{input.id}}", num: "{{input.n}}", tags: [a, "{{input.id}}"] }
    headers: { X-Id: "{{input.id}}", X-Key: "{{secret.KEY}}" }
    body: { id: "{{input.id}}", num: "{{input.n}}", label: "n={{input.n}}", missing: "{{input.absent}}" }
outputs: { seen: echo.body }
"#;

#[tokio::test]
async fn values_land_in_path_query_headers_and_body_and_hostile_input_stays_put() {
    let Some(httpbin) = httpbin().await else { return };
    let inputs = r#"[{name: id, description: "An id."}, {name: n, type: int, description: "A number."}, {name: absent, required: false, description: "Never given."}]"#;
    let engine = engine(&tool(inputs, SEEN, PLACEMENTS), &httpbin.base, &[("KEY", "k-123")]);
    let logs = Logs::capture();
    for id in [
        "plain",
        "../admin",
        "a?b=c",
        "x#y",
        "a b",
        "ünï/코드",
        "%2e%2e",
        "a/../../b",
        "a&q=evil",
    ] {
        let out = call(&engine, json!({"id": id, "n": 7}))
            .await
            .unwrap_or_else(|e| panic!("{id:?}: {e}"));
        let seen = &out["seen"];
        assert_eq!(seen["method"], "POST");
        assert_eq!(seen["args"], json!({"q": id, "num": "7", "tags": ["a", id]}), "{id:?}");
        // Header values go out as UTF-8 bytes; WSGI hands them to httpbin as Latin-1 text.
        let header: Vec<u8> = seen["headers"]["X-Id"]
            .as_str()
            .unwrap()
            .chars()
            .map(|c| c as u8)
            .collect();
        assert_eq!(String::from_utf8(header).unwrap(), id, "{id:?}");
        assert_eq!(
            seen["headers"]["X-Key"], "<redacted>",
            "delivered, and not handed back (issue #21.1)"
        );
        assert_eq!(seen["headers"]["X-Backend"], "everywhere");
        assert_eq!(seen["json"], json!({"id": id, "num": 7, "label": "n=7"}), "{id:?}");
        // httpbin reports the path decoded: the whole id is one segment, nothing was
        // normalized away, cut off as a fragment or split into the query. (Werkzeug rebuilds
        // `url` from a decoded path and re-normalizes escapes, so an id that is itself
        // percent-encoded cannot be compared here; the in-process echo test checks the exact
        // bytes on the wire for every id.)
        if id.contains('%') {
            continue;
        }
        let url = seen["url"].as_str().unwrap();
        let path = url.split_once('?').map_or(url, |(p, _)| p);
        let path = percent_decode_str(path).decode_utf8_lossy();
        assert_eq!(path, format!("{}/anything/{id}", httpbin.base), "{id:?}: {url}");
    }
    assert!(!logs.text().contains("k-123"), "the key is not logged");
    for id in ["..", "."] {
        assert_eq!(
            failure(call(&engine, json!({"id": id, "n": 1})).await).code.as_deref(),
            Some("invalid_input")
        );
    }
}

#[tokio::test]
async fn form_bodies_and_text_answers() {
    let Some(httpbin) = httpbin().await else { return };
    let backend = r#"
kind: http
base_url: BASE
steps:
  - { name: form, method: PUT, path: /anything/form, form: { city: "{{input.city}}", count: 2 } }
  - { name: page, path: /html }
outputs:
  seen: form.body
  page: page.body
"#;
    let outputs = r#"[{name: seen, type: json, description: "s"}, {name: page, type: string, description: "p"}]"#;
    let inputs = r#"[{name: city, description: "A city."}]"#;
    let engine = engine(&tool(inputs, outputs, backend), &httpbin.base, &[]);
    let out = call(&engine, json!({"city": "São Paulo & co"})).await.unwrap();
    assert_eq!(out["seen"]["form"], json!({"city": "São Paulo & co", "count": "2"}));
    assert_eq!(
        out["seen"]["headers"]["Content-Type"],
        "application/x-www-form-urlencoded"
    );
    assert!(
        out["page"].as_str().unwrap().contains("Herman Melville"),
        "HTML comes back as text"
    );
}

fn status_engine(base: &str) -> Engine {
    let backend = r#"
kind: http
base_url: BASE
retries: 1
steps:
  - name: s
    path: /status/{{input.code}}
    errors: { "404": { message: "nothing at {{input.code}}", prompt: "Pick another code." } }
outputs: { seen: s.status }
"#;
    let inputs = r#"[{name: code, type: int, min: 100, max: 599, description: "A status."}]"#;
    let outputs = r#"[{name: seen, type: int, description: "s"}]"#;
    engine(&tool(inputs, outputs, backend), base, &[])
}

#[tokio::test]
async fn status_codes_map_to_permanent_and_retryable_failures() {
    let Some(httpbin) = httpbin().await else { return };
    let engine = status_engine(&httpbin.base);
    assert_eq!(call(&engine, json!({"code": 204})).await.unwrap()["seen"], 204);
    for (status, code, retryable) in [
        (400, "upstream_4xx", false),
        (418, "upstream_4xx", false),
        (429, "rate_limited", true),
        (500, "upstream_5xx", true),
        (503, "upstream_5xx", true),
    ] {
        let f = failure(call(&engine, json!({"code": status})).await);
        assert_eq!(
            (f.code.as_deref(), f.retryable),
            (Some(code), retryable),
            "{status}: {f:?}"
        );
        assert!(f.developer_message.unwrap_or_default().contains(&status.to_string()));
    }
    let f = failure(call(&engine, json!({"code": 404})).await);
    assert_eq!(
        (f.message.as_str(), f.prompt.as_deref()),
        ("nothing at 404", Some("Pick another code."))
    );
}

fn one_step(base: &str, step: &str, extra: &str, secrets: &[(&str, &str)]) -> Engine {
    let backend = format!("kind: http\nbase_url: BASE\n{extra}steps:\n  - {step}\noutputs: {{ seen: s.body }}\n");
    let outputs = r#"[{name: seen, type: json, required: false, description: "s"}]"#;
    engine(&tool("[]", outputs, &backend), base, secrets)
}

#[tokio::test]
async fn delays_slow_bodies_and_timeouts() {
    let Some(httpbin) = httpbin().await else { return };
    let quick = one_step(&httpbin.base, "{ name: s, path: /delay/1, timeout_ms: 3000 }", "", &[]);
    assert!(
        call(&quick, json!({})).await.unwrap()["seen"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/delay/1")
    );
    for step in [
        "{ name: s, path: /delay/3, timeout_ms: 500 }",
        "{ name: s, path: /drip, query: { duration: 3, numbytes: 5, delay: 0 }, timeout_ms: 700 }",
    ] {
        let slow = one_step(&httpbin.base, step, "", &[]);
        let started = Instant::now();
        let f = failure(call(&slow, json!({})).await);
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{step}: {:?}",
            started.elapsed()
        );
        assert_eq!((f.code.as_deref(), f.retryable), (Some("timeout"), true), "{step}");
    }
}

#[tokio::test]
async fn redirects_body_caps_and_auth() {
    let Some(httpbin) = httpbin().await else { return };
    let followed = one_step(&httpbin.base, "{ name: s, path: /redirect/3 }", "", &[]);
    assert!(
        call(&followed, json!({})).await.unwrap()["seen"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/get")
    );
    // `localhost` is another origin than `127.0.0.1`, though the same httpbin answers there.
    let elsewhere = httpbin.base.replace("127.0.0.1", "localhost");
    let step = format!("{{ name: s, path: /redirect-to, query: {{ url: \"{elsewhere}/get\", status_code: 302 }} }}");
    let away = one_step(&httpbin.base, &step, "", &[]);
    assert_eq!(
        failure(call(&away, json!({})).await).code.as_deref(),
        Some("upstream_redirect")
    );

    for (path, ok) in [
        ("/bytes/512", true),
        ("/bytes/4096", false),
        ("/stream-bytes/4096?chunk_size=256", false),
    ] {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let query = query
            .split_once('=')
            .map_or(String::new(), |(k, v)| format!(", query: {{ {k}: {v} }}"));
        let engine = one_step(
            &httpbin.base,
            &format!("{{ name: s, path: {path}{query} }}"),
            "max_response_bytes: 1024\n",
            &[],
        );
        let result = call(&engine, json!({})).await;
        if ok {
            assert!(result.is_ok(), "{path}: {result:?}");
        } else {
            assert_eq!(failure(result).code.as_deref(), Some("response_too_large"), "{path}");
        }
    }

    let logs = Logs::capture();
    let secrets = [("PASSWORD", "hunter2-pw"), ("TOKEN", "tok-abc-987")];
    let basic = "{ name: s, path: \"/basic-auth/user/{{secret.PASSWORD}}\", auth: { basic: { username: user, password: \"{{secret.PASSWORD}}\" } } }";
    let engine = one_step(&httpbin.base, basic, "", &secrets);
    assert_eq!(
        call(&engine, json!({})).await.unwrap()["seen"],
        json!({"authenticated": true, "user": "user"})
    );
    let wrong = "{ name: s, path: /basic-auth/user/other, auth: { basic: { username: user, password: \"{{secret.PASSWORD}}\" } } }";
    let engine = one_step(&httpbin.base, wrong, "", &secrets);
    let f = failure(call(&engine, json!({})).await);
    assert_eq!(f.code.as_deref(), Some("upstream_4xx"));
    let bearer = "{ name: s, path: /bearer, auth: { bearer: \"{{secret.TOKEN}}\" } }";
    let engine = one_step(&httpbin.base, bearer, "", &secrets);
    assert_eq!(
        call(&engine, json!({})).await.unwrap()["seen"],
        json!({"authenticated": true, "token": "<redacted>"}),
        "httpbin accepted the token and echoed it; the result carries no secret"
    );
    let logged = logs.text();
    for secret in ["hunter2-pw", "tok-abc-987", "dXNlcjpodW50ZXIyLXB3"] {
        assert!(
            !logged.contains(secret) && !format!("{f:?}").contains(secret),
            "{secret} leaked"
        );
    }
}
