//! Why an upstream refused a request, in its own words, as a caller and its model may read them
//! (issue #38.5): the message of a JSON error body or the start of a text body, on one line and
//! bounded.
//!
//! The text given here must already be scrubbed of every secret the call could have sent (the
//! callers scrub the whole answer before reading it), so that a cut never leaves part of a
//! secret behind. Only a refusal (4xx) is read: a 5xx body is the upstream's internals.
//!
//! Where the reason is found, in order:
//!
//! | body | reason |
//! |---|---|
//! | `{"message": …}` (GitHub, Stripe's inner `error`, most REST APIs) | the message |
//! | `{"error": "…", "error_description": "…"}` (OAuth 2.0) | both |
//! | `{"error": {"message": …}}` (Google, Stripe) | the inner object's reason |
//! | `{"title": …, "detail": …}` (RFC 9457 problem+json) | both |
//! | `{"detail": "…"}` (FastAPI) | the detail |
//! | `errors: [...]` beside any of those, or alone (GitHub, JSON:API) | each item's message, detail, title or `resource.field: code` |
//! | `detail: [{loc, msg}]` (FastAPI's validation) | each `loc: msg` |
//! | `errors: {field: [messages]}` (Rails) | each `field: message` |
//! | HTML or XML | its `<title>` or `<message>` |
//! | other text | its start |
//!
//! A JSON body with none of these gives no reason (its members mean nothing known).

use serde_json::{Map, Value};

/// The most characters of an upstream's reason passed on.
pub const MAX_REASON_CHARS: usize = 400;

/// How many entries of an error list are read.
const MAX_ITEMS: usize = 8;

/// How deep an `error` object inside another is followed.
const MAX_DEPTH: usize = 3;

/// The reason in an upstream's answer `body` (JSON as read, or text), on one line and bounded;
/// `None` when the body says nothing that reads as one.
pub fn from_body(body: &Value) -> Option<String> {
    let text = match body {
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            // JSON sent under another content type is still JSON.
            Ok(value @ (Value::Object(_) | Value::Array(_))) => from_json(&value, 0),
            _ => from_text(text),
        },
        Value::Object(_) | Value::Array(_) => from_json(body, 0),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }?;
    bounded(&text)
}

/// `text` on one line (control characters gone, runs of white space one space) and at most
/// [`MAX_REASON_CHARS`] characters, cut at a character boundary with `…`; `None` when nothing
/// is left.
pub fn bounded(text: &str) -> Option<String> {
    bounded_to(text, MAX_REASON_CHARS)
}

/// [`bounded`] to at most `max` characters.
pub fn bounded_to(text: &str, max: usize) -> Option<String> {
    let mut out = String::new();
    let mut count = 0;
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            count += 1;
            space = false;
        }
        if count == max {
            out.push('…');
            return Some(out);
        }
        out.push(c);
        count += 1;
    }
    (!out.is_empty()).then_some(out)
}

/// The reason marked as the upstream's words for the model: `the API said: "…"`.
pub fn quoted(who: &str, reason: &str) -> String {
    format!("{who} said: \"{reason}\"")
}

fn from_json(value: &Value, depth: usize) -> Option<String> {
    let object = match value {
        Value::Object(object) => object,
        Value::Array(items) => return joined(items.iter().filter_map(item)),
        _ => return None,
    };
    let head = head(object, depth);
    let list = match (object.get("errors"), object.get("detail")) {
        (Some(Value::Array(items)), _) | (_, Some(Value::Array(items))) => joined(items.iter().filter_map(item)),
        (Some(Value::Object(fields)), _) => joined(fields.iter().filter_map(|(field, said)| {
            let said = match said {
                Value::Array(items) => joined(items.iter().filter_map(item))?,
                other => item(other)?,
            };
            Some(format!("{field}: {said}"))
        })),
        _ => None,
    };
    match (head, list) {
        (Some(head), Some(list)) if head.contains(&list) => Some(head),
        (Some(head), Some(list)) => Some(format!("{head}: {list}")),
        (head, list) => head.or(list),
    }
}

/// The one-sentence reason of an error object: `message`, `error` (text or object),
/// problem+json's `title` and `detail`.
fn head(object: &Map<String, Value>, depth: usize) -> Option<String> {
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    if let Some(message) = text("message") {
        return Some(message.to_owned());
    }
    match object.get("error") {
        Some(Value::String(error)) if !error.trim().is_empty() => {
            return Some(pair(Some(error.trim()), text("error_description")));
        }
        Some(inner @ Value::Object(_)) if depth < MAX_DEPTH => {
            if let Some(reason) = from_json(inner, depth + 1) {
                return Some(reason);
            }
        }
        _ => {}
    }
    match (text("title"), text("detail")) {
        (None, None) => text("error_description").map(str::to_owned),
        (title, detail) => Some(pair(title, detail)),
    }
}

/// "title: detail", either alone, or the detail alone when it already says the title.
fn pair(title: Option<&str>, detail: Option<&str>) -> String {
    match (title, detail) {
        (Some(title), Some(detail)) if !detail.starts_with(title) => format!("{title}: {detail}"),
        (_, Some(detail)) => detail.to_owned(),
        (Some(title), None) => title.to_owned(),
        (None, None) => String::new(),
    }
}

/// One entry of an error list: text, or an object's message, detail, title or `msg` (with
/// FastAPI's `loc`), or GitHub's `resource`, `field` and `code`.
fn item(value: &Value) -> Option<String> {
    let object = match value {
        Value::String(text) => return Some(text.trim().to_owned()).filter(|t| !t.is_empty()),
        Value::Object(object) => object,
        _ => return None,
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    if let Some(said) = text("message").or_else(|| text("detail")).or_else(|| text("title")) {
        return Some(said.trim().to_owned());
    }
    if let Some(msg) = text("msg") {
        let location: Vec<String> = object
            .get("loc")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        return Some(if location.is_empty() {
            msg.to_owned()
        } else {
            format!("{}: {msg}", location.join("."))
        });
    }
    let field = match (text("resource"), text("field")) {
        (Some(resource), Some(field)) => format!("{resource}.{field}"),
        (resource, field) => resource.or(field)?.to_owned(),
    };
    Some(match text("code") {
        Some(code) => format!("{field}: {code}"),
        None => field,
    })
}

fn joined(items: impl Iterator<Item = String>) -> Option<String> {
    let items: Vec<String> = items.take(MAX_ITEMS).collect();
    (!items.is_empty()).then(|| items.join("; "))
}

/// The start of a text body; of markup, only its `<title>` or `<message>`.
fn from_text(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('<') {
        return Some(text.to_owned());
    }
    ["title", "message"]
        .iter()
        .find_map(|tag| element(trimmed, tag))
        .map(str::to_owned)
}

/// The text of the first `<tag>` element (any case), when it holds no markup.
fn element<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{tag}>");
    let start = lower.find(&open)? + open.len();
    let end = start + lower[start..].find(&format!("</{tag}>"))?;
    // ASCII lower-casing keeps byte offsets, so they index `text` too.
    let inner = text[start..end].trim();
    (!inner.is_empty() && !inner.contains('<')).then_some(inner)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MAX_REASON_CHARS, bounded, from_body};

    #[test]
    fn github_joins_the_message_and_each_error() {
        let body = json!({
            "message": "Validation Failed",
            "errors": [
                {"resource": "Label", "code": "invalid", "field": "name", "message": "label nope does not exist"},
                {"resource": "Issue", "field": "title", "code": "missing_field"}
            ],
            "documentation_url": "https://docs.github.com/rest"
        });
        assert_eq!(
            from_body(&body).as_deref(),
            Some("Validation Failed: label nope does not exist; Issue.title: missing_field")
        );
    }

    #[test]
    fn the_common_error_shapes() {
        let cases = [
            (
                json!({"title": "Invalid input", "detail": "`due` must be a date", "status": 422}),
                "Invalid input: `due` must be a date",
            ),
            (json!({"title": "Not Found", "status": 404}), "Not Found"),
            (
                json!({"error": "invalid_grant", "error_description": "The code expired"}),
                "invalid_grant: The code expired",
            ),
            (
                json!({"error": {"code": 400, "message": "Bad range", "status": "INVALID_ARGUMENT"}}),
                "Bad range",
            ),
            (json!({"detail": "Item not found"}), "Item not found"),
            (
                json!({"detail": [{"loc": ["body", "size", 0], "msg": "value is not an integer"}]}),
                "body.size.0: value is not an integer",
            ),
            (
                json!({"errors": [{"title": "Invalid Attribute", "detail": "First name must contain at least two characters."}]}),
                "First name must contain at least two characters.",
            ),
            (
                json!({"errors": {"name": ["can't be blank", "is too short"]}}),
                "name: can't be blank; is too short",
            ),
            (json!(["first problem", {"message": "second"}]), "first problem; second"),
        ];
        for (body, reason) in cases {
            assert_eq!(from_body(&body).as_deref(), Some(reason), "{body}");
        }
        assert_eq!(
            from_body(&json!({"ok": false, "code": 17})),
            None,
            "unknown members say nothing"
        );
        assert_eq!(from_body(&json!(null)), None);
    }

    #[test]
    fn text_markup_and_json_sent_as_text() {
        assert_eq!(
            from_body(&json!("no such\r\nuser\t here")).as_deref(),
            Some("no such user here")
        );
        let html = "<!DOCTYPE html><html><head><TITLE>400 Bad Request</TITLE></head><body><h1>Bad</h1></body></html>";
        assert_eq!(from_body(&json!(html)).as_deref(), Some("400 Bad Request"));
        let xml =
            "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key does not exist.</Message></Error>";
        assert_eq!(from_body(&json!(xml)).as_deref(), Some("The key does not exist."));
        assert_eq!(from_body(&json!("<html><body>oops</body></html>")), None);
        assert_eq!(
            from_body(&json!("{\"message\": \"as text\"}")).as_deref(),
            Some("as text")
        );
        assert_eq!(from_body(&json!("   ")), None);
    }

    #[test]
    fn a_reason_is_bounded_at_a_character_boundary_without_control_characters() {
        let long = "é\u{7}".repeat(MAX_REASON_CHARS * 2);
        let cut = bounded(&long).unwrap();
        assert_eq!(cut.chars().count(), MAX_REASON_CHARS + 1, "the characters and `…`");
        assert!(cut.ends_with('…') && !cut.chars().any(char::is_control), "{cut}");
        assert_eq!(bounded("a\u{0}\u{1b}[31mb").as_deref(), Some("a [31mb"));
        assert_eq!(bounded("exactly").as_deref(), Some("exactly"));
    }
}
