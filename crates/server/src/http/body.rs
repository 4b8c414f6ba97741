//! JSON request bodies: content type, size limit and parse errors become problem responses.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use super::problem::ProblemResponse;

/// A JSON object body deserialized into `T`; every failure is a problem a person can act on.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ProblemResponse;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        check_content_type(req.headers().get(header::CONTENT_TYPE))?;
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ProblemResponse::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "body-too-large",
                    "the request body is larger than this server accepts; send less data",
                )
            } else {
                ProblemResponse::bad_request(format!("failed to read the request body: {}", rejection.body_text()))
            }
        })?;
        parse(&bytes).map(Json)
    }
}

fn check_content_type(value: Option<&axum::http::HeaderValue>) -> Result<(), ProblemResponse> {
    let is_json = value.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let essence = v.split(';').next().unwrap_or_default().trim();
        essence.eq_ignore_ascii_case("application/json")
            || essence.rsplit_once('+').is_some_and(|(ty, suffix)| ty.starts_with("application/") && suffix.eq_ignore_ascii_case("json"))
    });
    if is_json {
        return Ok(());
    }
    let given = value.and_then(|v| v.to_str().ok()).map(|v| format!("`{v}`")).unwrap_or_else(|| "none".to_owned());
    Err(ProblemResponse::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported-media-type",
        format!("expected `Content-Type: application/json`, but got {given}; send the body as JSON"),
    ))
}

/// Parses a JSON object body; says whether the JSON itself or its shape is wrong.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ProblemResponse> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        None => return Err(ProblemResponse::bad_request("the request body is empty; send a JSON object")),
        Some(_) => {
            return Err(ProblemResponse::bad_request("expected the request body to be a JSON object (`{...}`)"));
        }
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let detail = if e.is_data() {
            format!("the JSON body does not have the expected shape: {e}")
        } else {
            format!("the request body is not valid JSON: {e}")
        };
        ProblemResponse::bad_request(detail)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        a: u32,
    }

    #[test]
    fn parse_says_what_is_wrong() {
        let detail = |b: &[u8]| parse::<Body>(b).unwrap_err().problem.detail;
        assert!(detail(b"[1]").contains("JSON object"));
        assert!(detail(b"  ").contains("empty"));
        assert!(detail(b"{\"a\": ").contains("not valid JSON"));
        assert!(detail(b"{\"a\": \"x\"}").contains("expected shape"));
        assert!(detail(b"{\"a\": 1, \"b\": 2}").contains("unknown field `b`"));
    }

    #[test]
    fn content_types() {
        let ok = |v: &str| check_content_type(Some(&axum::http::HeaderValue::from_str(v).unwrap())).is_ok();
        assert!(ok("application/json"));
        assert!(ok("application/json; charset=utf-8"));
        assert!(ok("application/problem+json"));
        assert!(!ok("text/plain"));
        assert!(!ok("application/x-www-form-urlencoded"));
        assert!(check_content_type(None).is_err());
    }
}
