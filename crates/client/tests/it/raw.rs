//! `Raw`, the guarded HTTP handle of the conformance checker: the same guard, credentials and
//! body limit as every protocol module, and the answer as sent.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use toolhost_client::{Error, Options, Policy, Raw};

use crate::support::{Stub, serve};

/// Echoes the API key header and the body, with a status a protocol module would turn into an
/// error.
async fn echo(headers: HeaderMap, body: String) -> (StatusCode, String) {
    let key = headers
        .get("otc-api-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    (StatusCode::UNPROCESSABLE_ENTITY, format!("{key} {body}"))
}

#[tokio::test]
async fn raw_requests_pass_the_guard_carry_credentials_to_the_typed_origin_only_and_keep_the_answer() {
    let base = serve(axum::Router::new().route("/echo", post(echo))).await;
    let url = url::Url::parse(&format!("{base}/echo")).unwrap();
    let stub = Arc::new(Stub::default());
    let guarded = Options {
        lookup: Some(stub.clone()),
        headers: vec![("OTC-API-Key".to_owned(), "k1".to_owned())],
        timeout: Duration::from_secs(5),
        ..Options::default()
    };
    // Loopback is refused by default, before anything connects.
    let raw = Raw::new(&guarded).unwrap();
    let refused = raw.send(http::Method::POST, &url, HeaderMap::new(), None).await;
    assert!(matches!(refused, Err(Error::Refused { .. })), "{refused:?}");

    // Allowed but not typed: reachable, and the credentials stay home.
    let allowed = Options {
        policy: Policy::strict().allow_private(),
        ..guarded.clone()
    };
    let reply = Raw::new(&allowed)
        .unwrap()
        .send(http::Method::POST, &url, HeaderMap::new(), Some(b"{}".to_vec()))
        .await
        .unwrap();
    assert_eq!(
        (reply.status, String::from_utf8(reply.body).unwrap()),
        (422, "- {}".to_owned())
    );

    // Typed: the credentials go, and a 422 is an answer, not an error.
    let typed = Options {
        policy: Policy::strict().trust(&url),
        ..guarded
    };
    let reply = Raw::new(&typed)
        .unwrap()
        .send(http::Method::POST, &url, HeaderMap::new(), Some(b"[1]".to_vec()))
        .await
        .unwrap();
    assert_eq!(
        (reply.status, String::from_utf8(reply.body).unwrap()),
        (422, "k1 [1]".to_owned())
    );
}
