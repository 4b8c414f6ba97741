//! `ETag` and `Cache-Control` on JSON documents, and 304 for a matching `If-None-Match`.

use std::hash::{Hash, Hasher};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

/// Who a document may be cached for (WoA §7, issue #22.5). With authentication on, what a
/// caller sees depends on its scopes, so a shared cache must not hand one caller's document to
/// another: `private`, and `Vary` on the credentials. With it off, the document is the same for
/// everyone and may be cached anywhere.
pub fn set_policy(headers: &mut HeaderMap, max_age: &'static str, per_caller: bool) {
    if per_caller {
        if let Ok(value) = HeaderValue::from_str(&format!("private, {max_age}")) {
            headers.insert(header::CACHE_CONTROL, value);
        }
        headers.insert(header::VARY, HeaderValue::from_static("Authorization, OTC-API-Key"));
    } else {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(max_age));
    }
}

/// Answers with `body` as JSON, tagged with a strong `ETag` of its bytes, or 304 when the
/// request's `If-None-Match` already names that tag; cached as [`set_policy`] says.
pub fn json(
    request: &HeaderMap,
    body: Vec<u8>,
    content_type: &'static str,
    max_age: &'static str,
    per_caller: bool,
) -> Response {
    let tag = etag(&body);
    let mut response = if if_none_match(request, &tag) {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(Body::from(body));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        r
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    set_policy(headers, max_age, per_caller);
    response
}

/// A strong entity tag of the body. The hasher has fixed keys, so every replica running the
/// same build gives the same tag for the same document.
pub fn etag(body: &[u8]) -> String {
    #[allow(deprecated)] // SipHasher is fixed-key and stable; that is what an ETag needs here.
    let mut hasher = std::hash::SipHasher::new();
    body.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

/// Whether `If-None-Match` lists `tag` (or `*`); weak comparison as RFC 9110 §13.1.2 asks.
pub fn if_none_match(request: &HeaderMap, tag: &str) -> bool {
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|candidate| {
            let candidate = candidate.trim();
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == tag
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_tag_gives_304_and_keeps_the_tag() {
        let tag = etag(b"{}");
        let mut headers = HeaderMap::new();
        headers.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_str(&format!("\"x\", W/{tag}")).unwrap(),
        );
        let response = json(&headers, b"{}".to_vec(), "application/json", "no-cache", false);
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(response.headers()[header::ETAG], tag.as_str());
        let response = json(&HeaderMap::new(), b"{}".to_vec(), "application/json", "no-cache", false);
        assert_eq!(response.status(), StatusCode::OK);
    }
}
