//! Problem documents (RFC 9457) as the client reads them: every member optional, since the RFC
//! requires none and servers written from N-ACT or WoA send only some (`type`, `title`,
//! `status`, `detail`), with toolhost's extension members (`errors`, `retryable`, `code`,
//! `prompt`) when present. Text is cleaned: it comes from the server.

use serde_json::Value;

use crate::text;

/// The members of a problem document the client uses, cleaned.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Read {
    /// `detail`, else `title`.
    pub detail: Option<String>,
    /// Per-parameter messages (`errors`), by parameter name.
    pub errors: Vec<(String, String)>,
    /// The server's word on retrying, when it gives one.
    pub retryable: Option<bool>,
    /// The tool's failure code.
    pub code: Option<String>,
    /// Text for the model.
    pub prompt: Option<String>,
}

impl Read {
    /// The problem in `body`, when it is a JSON object (whatever members it has).
    pub fn from_body(body: &[u8]) -> Option<Self> {
        let Value::Object(map) = serde_json::from_slice::<Value>(body).ok()? else {
            return None;
        };
        let text = |key: &str| {
            map.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(|s| text::clean(s, 2000))
        };
        let errors = match map.get("errors") {
            Some(Value::Object(errors)) => errors
                .iter()
                .filter_map(|(name, message)| Some((name.clone(), text::clean(message.as_str()?, 2000))))
                .collect(),
            _ => Vec::new(),
        };
        Some(Self {
            detail: text("detail").or_else(|| text("title")),
            errors,
            retryable: map.get("retryable").and_then(Value::as_bool),
            code: text("code"),
            prompt: text("prompt"),
        })
    }

    /// Whether the problem says how a tool failed (a code, a prompt or a retry verdict), not
    /// only that a request did.
    pub fn describes_a_failure(&self) -> bool {
        self.code.is_some() || self.prompt.is_some() || self.retryable.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_and_extended_problems() {
        let plain =
            Read::from_body(br#"{"type": "about:blank", "title": "Service Unavailable", "status": 503}"#).unwrap();
        assert_eq!(plain.detail.as_deref(), Some("Service Unavailable"));
        assert!(!plain.describes_a_failure());
        let full = Read::from_body(
            br#"{"detail": "no\u001b[2J", "retryable": false, "code": "c", "errors": {"n": "bad", "m": 1}}"#,
        )
        .unwrap();
        assert_eq!(full.detail.as_deref(), Some("no[2J"));
        assert_eq!(full.errors, [("n".to_owned(), "bad".to_owned())]);
        assert_eq!(full.retryable, Some(false));
        assert!(full.describes_a_failure());
        assert_eq!(Read::from_body(b"<html>"), None);
        assert_eq!(Read::from_body(b"[1]"), None);
    }
}
