//! What the server under test sends, made safe to report (issue #37.6, #37.7).
//!
//! Every string of a report may come from the server: a tool's name, a cursor, an excerpt of an
//! answer. A hostile server can put terminal escape sequences in them (which move the cursor or
//! rewrite earlier lines), a newline and a forged `PASS` line, C1 controls (8-bit escapes on some
//! terminals), bidirectional overrides (text that reads otherwise than it is), or noncharacters
//! such as U+FFFE that no XML parser accepts. [`text`] replaces each with a visible escape
//! (`\u{1b}`), so every format shows what was sent and none can be subverted by it.
//!
//! A server can also echo the request's headers, and with them the credentials the user gave
//! (`--bearer`, `--api-key`, `--header`). [`Redactor`] replaces every such value, verbatim or
//! JSON-escaped, before anything is read from an answer, so no excerpt, and no message quoting
//! it, can carry one, even cut in half.

use std::borrow::Cow;

use http::{HeaderMap, HeaderValue};
use serde_json::Value;

/// The longest a string of a report may be, in characters; the rest is cut with `…`.
pub(crate) const MAX_FIELD: usize = 2000;

/// What a redacted credential reads as.
pub(crate) const REDACTED: &str = "[redacted]";

/// Whether `c` is shown as an escape: controls (C0, DEL, C1; newlines and tabs too, so a
/// report line is one line), bidirectional marks, embeddings, overrides and isolates, zero-width
/// and invisible characters, line and paragraph separators, interlinear annotations, tags, and
/// noncharacters (U+FDD0..U+FDEF and every U+xFFFE, U+xFFFF), which XML 1.0 does not allow.
fn escaped(c: char) -> bool {
    let n = c as u32;
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{FDD0}'..='\u{FDEF}'
                | '\u{E0000}'..='\u{E007F}'
        )
        || n & 0xFFFE == 0xFFFE
}

/// `text` safe for a terminal and for every report format: each character of [`escaped`]
/// written as `\u{…}` in printable ASCII, at most [`MAX_FIELD`] characters of `text` (each escape
/// counted as one). Applying it again changes nothing within that bound.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_FIELD * 4));
    for (count, c) in text.chars().enumerate() {
        if count >= MAX_FIELD {
            out.push('…');
            break;
        }
        if escaped(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The credentials of a run, and their removal from what the server sends back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    /// Each value, longest first (so a value containing another is replaced whole).
    secrets: Vec<String>,
}

impl Redactor {
    /// The values of the headers the user gave (`--bearer`, `--api-key`, `--header`, the
    /// servers file): each whole, and for `Scheme token` (`Bearer …`, `Basic …`) the token too.
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets = Vec::new();
        for value in values {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            secrets.push(value.to_owned());
            if let Some((_, token)) = value.split_once(' ') {
                let token = token.trim();
                if !token.is_empty() {
                    secrets.push(token.to_owned());
                }
            }
        }
        // Each value also as JSON writes it inside a string (a `"` or `\` escaped).
        let escaped: Vec<String> = secrets
            .iter()
            .filter_map(|s| {
                let json = serde_json::to_string(s).ok()?;
                let inner = json[1..json.len() - 1].to_owned();
                (inner != *s).then_some(inner)
            })
            .collect();
        secrets.extend(escaped);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self { secrets }
    }

    fn found_in(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
    }

    /// `text` with every credential replaced by [`REDACTED`].
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.found_in(text) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_owned();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), REDACTED);
        }
        Cow::Owned(out)
    }

    /// A body with every credential replaced: inside the strings (and keys) of a JSON body, so
    /// it stays the JSON it was; as text otherwise.
    pub fn body(&self, body: Vec<u8>) -> Vec<u8> {
        if self.secrets.is_empty() {
            return body;
        }
        let text = String::from_utf8_lossy(&body);
        if !self.found_in(&text) {
            return body;
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(mut value) => {
                self.json(&mut value);
                serde_json::to_vec(&value).unwrap_or_else(|_| self.text(&text).as_bytes().to_vec())
            }
            Err(_) => self.text(&text).into_owned().into_bytes(),
        }
    }

    fn json(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(clean) = self.text(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.json(&mut v);
                    map.insert(self.text(&key).into_owned(), v);
                }
            }
            _ => {}
        }
    }

    /// Header values with every credential replaced (an `ETag` can be quoted in evidence too).
    pub fn headers(&self, headers: HeaderMap) -> HeaderMap {
        if self.secrets.is_empty() {
            return headers;
        }
        let mut out = HeaderMap::with_capacity(headers.len());
        for (name, value) in &headers {
            let value = match value.to_str() {
                Ok(text) if self.found_in(text) => {
                    HeaderValue::from_str(&self.text(text)).unwrap_or(HeaderValue::from_static(REDACTED))
                }
                _ => value.clone(),
            };
            out.append(name.clone(), value);
        }
        out
    }

    /// Text for a report: credentials replaced, then made [`text`] safe.
    pub fn report(&self, value: &str) -> String {
        text(&self.text(value))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_a_terminal_or_a_parser_could_misread_is_escaped_once() {
        let hostile = "ok\u{1b}[2J\nPASS  forged\r\u{85}\u{9b}31m\u{202e}txt.exe\u{2066}\u{fffe}\u{ffff}\u{1fffe}\u{e0041}\u{2028}\u{7f}\t";
        let safe = text(hostile);
        assert_eq!(
            safe,
            "ok\\u{1b}[2J\\u{a}PASS  forged\\u{d}\\u{85}\\u{9b}31m\\u{202e}txt.exe\\u{2066}\\u{fffe}\\u{ffff}\\u{1fffe}\\u{e0041}\\u{2028}\\u{7f}\\u{9}"
        );
        assert!(safe.chars().all(|c| c.is_ascii_graphic() || c == ' '), "{safe}");
        assert_eq!(text(&safe), safe, "idempotent");
        assert_eq!(text("naïve ünïcode — ok"), "naïve ünïcode — ok");
        let long = "x".repeat(MAX_FIELD + 10);
        assert_eq!(text(&long).chars().count(), MAX_FIELD + 1);
    }

    #[test]
    fn credentials_are_redacted_in_json_text_and_headers() {
        let redactor = Redactor::new(["Bearer tok-123", "key\"with\\quote", "X"]);
        let body = json!({"echo": {"authorization": "Bearer tok-123", "tok-123": 1, "k": "key\"with\\quote"}, "n": 5});
        let out: Value = serde_json::from_slice(&redactor.body(serde_json::to_vec(&body).unwrap())).unwrap();
        assert_eq!(out["echo"]["authorization"], REDACTED);
        assert_eq!(out["echo"][REDACTED], 1);
        assert_eq!(out["echo"]["k"], REDACTED);
        assert_eq!(out["n"], 5, "numbers are kept");
        let plain = redactor.body(b"headers: authorization=Bearer tok-123; k=key\\\"with\\\\quote".to_vec());
        let plain = String::from_utf8(plain).unwrap();
        assert!(!plain.contains("tok-123") && !plain.contains("with"), "{plain}");
        let mut headers = HeaderMap::new();
        headers.insert("etag", HeaderValue::from_static("\"tok-123\""));
        assert_eq!(redactor.headers(headers)["etag"], "\"[redacted]\"");
        assert_eq!(redactor.report("a\nX"), "a\\u{a}[redacted]");
    }
}
