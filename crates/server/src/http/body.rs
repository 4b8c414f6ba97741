//! JSON request bodies: content type, size limit and parse errors, each a [`BodyError`] that
//! says what to change. Adapters whose protocol has its own error shape take
//! `Result<Json<T>, BodyError>` and map it; the default rendering is a problem document.

use std::fmt;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::problem::ProblemResponse;

/// A JSON object body deserialized into `T`.
#[derive(Debug)]
pub struct Json<T>(pub T);

/// Why a request body was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// The `Content-Type` is not JSON (the given one, if any).
    UnsupportedMediaType(Option<String>),
    /// The body is larger than the configured limit.
    TooLarge,
    /// The body could not be read.
    Unreadable(String),
    /// The body is empty or only white space.
    Empty,
    /// The body is JSON but not an object.
    NotObject,
    /// The body is not valid JSON.
    Malformed(String),
    /// The JSON does not have the expected members or types.
    Shape(String),
}

impl BodyError {
    /// The HTTP status for protocols that use HTTP semantics (N-ACT, WoA).
    pub fn status(&self) -> StatusCode {
        match self {
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unreadable(_) | Self::Empty | Self::NotObject | Self::Malformed(_) | Self::Shape(_) => {
                StatusCode::BAD_REQUEST
            }
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedMediaType(Some(given)) => {
                write!(
                    f,
                    "expected `Content-Type: application/json`, but got `{given}`; send the body as JSON"
                )
            }
            Self::UnsupportedMediaType(None) => {
                f.write_str("expected `Content-Type: application/json`, but got none; send the body as JSON")
            }
            Self::TooLarge => f.write_str("the request body is larger than this server accepts; send less data"),
            Self::Unreadable(e) => write!(f, "failed to read the request body: {e}"),
            Self::Empty => f.write_str("the request body is empty; send a JSON object"),
            Self::NotObject => f.write_str("expected the request body to be a JSON object (`{...}`)"),
            Self::Malformed(e) => write!(f, "the request body is not valid JSON: {e}"),
            Self::Shape(e) => write!(f, "the JSON body does not have the expected shape: {e}"),
        }
    }
}

impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        let kind = match self {
            Self::UnsupportedMediaType(_) => "unsupported-media-type",
            Self::TooLarge => "body-too-large",
            _ => "bad-request",
        };
        ProblemResponse::new(self.status(), kind, self.to_string()).into_response()
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = BodyError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        check_content_type(req.headers().get(header::CONTENT_TYPE))?;
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                BodyError::TooLarge
            } else {
                BodyError::Unreadable(rejection.body_text())
            }
        })?;
        parse(&bytes).map(Json)
    }
}

/// A media type without its parameters (`application/json; charset=utf-8` → `application/json`),
/// as written: compare it ignoring ASCII case.
pub fn essence(value: &str) -> &str {
    value.split(';').next().unwrap_or_default().trim()
}

fn check_content_type(value: Option<&HeaderValue>) -> Result<(), BodyError> {
    let given = value.map(|v| v.to_str().unwrap_or("(not text)"));
    let is_json = given.is_some_and(|v| {
        let essence = essence(v);
        essence.eq_ignore_ascii_case("application/json")
            || essence
                .rsplit_once('+')
                .is_some_and(|(ty, suffix)| ty.starts_with("application/") && suffix.eq_ignore_ascii_case("json"))
    });
    if is_json {
        Ok(())
    } else {
        Err(BodyError::UnsupportedMediaType(given.map(str::to_owned)))
    }
}

/// Parses a JSON object body; says whether the JSON itself or its shape is wrong.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, BodyError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        None => return Err(BodyError::Empty),
        Some(_) => return Err(BodyError::NotObject),
    }
    serde_json::from_slice(bytes).map_err(|e| {
        if e.is_data() {
            BodyError::Shape(e.to_string())
        } else {
            BodyError::Malformed(e.to_string())
        }
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
        let detail = |b: &[u8]| parse::<Body>(b).unwrap_err().to_string();
        assert!(detail(b"[1]").contains("JSON object"));
        assert!(detail(b"  ").contains("empty"));
        assert!(detail(b"{\"a\": ").contains("not valid JSON"));
        assert!(detail(b"{\"a\": \"x\"}").contains("expected shape"));
        assert!(detail(b"{\"a\": 1, \"b\": 2}").contains("unknown field `b`"));
    }

    #[test]
    fn content_types() {
        let ok = |v: &str| check_content_type(Some(&HeaderValue::from_str(v).unwrap())).is_ok();
        assert!(ok("application/json"));
        assert!(ok("application/json; charset=utf-8"));
        assert!(ok("application/problem+json"));
        assert!(!ok("text/plain"));
        assert!(!ok("application/x-www-form-urlencoded"));
        assert_eq!(check_content_type(None), Err(BodyError::UnsupportedMediaType(None)));
    }
}
