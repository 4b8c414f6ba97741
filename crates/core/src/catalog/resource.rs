//! Catalog-declared resources: documents a catalog serves beside its tools (MCP resources),
//! written in a catalog file's `resources:` section. Each is text or base64 bytes with a media
//! type, at a fixed `uri` or at every URI a `uri_template` (RFC 6570 level 1: `{name}`
//! variables) matches, its variables substituted into the text.
//!
//! Checked at load: exactly one of `uri` / `uri_template` and of `text` / `blob`, a URI with a
//! scheme and not under `toolhost://` (the server's own), unique URIs and templates, valid
//! base64, a media type for bytes, well-formed template variables, and a bounded size.

use std::collections::BTreeSet;

use base64::Engine as _;
use serde::Deserialize;

use super::problem::{Place, Problem, Severity};

/// The most bytes of one resource's content (text, or bytes after decoding).
pub const MAX_RESOURCE_BYTES: usize = 1024 * 1024;
/// The URI scheme of the resources the server makes of tools and agents; catalogs may not use it.
pub const RESERVED_SCHEME: &str = "toolhost";

/// A resource as a catalog file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResourceDef {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    uri_template: Option<String>,
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text (for a template, with `{name}` where each variable's value goes).
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// Where a resource is: one URI, or every URI a template matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A fixed URI.
    Uri(String),
    /// An RFC 6570 level-1 template: literal text and `{name}` variables.
    Template(String),
}

/// One catalog-declared resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its URI or URI template.
    pub address: Address,
    /// A short name.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its media type (`text/plain` for text that names none).
    pub mime_type: String,
    /// What it holds.
    pub content: Content,
}

/// A piece of a URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece<'t> {
    Literal(&'t str),
    Variable(&'t str),
}

/// Splits a template into literals and variables, or says what is wrong with it.
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Piece::Literal(&rest[..open]));
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| {
            format!(
                "`{{` at byte {} is not closed by `}}`",
                template.len() - rest.len() + open
            )
        })?;
        let name = &after[..close];
        if !is_variable(name) {
            return Err(format!(
                "`{{{name}}}` is not a variable; write `{{name}}` with a letter or `_` followed by letters, digits or `_` (RFC 6570 level 1)"
            ));
        }
        if matches!(out.last(), Some(Piece::Variable(_))) {
            return Err(format!(
                "`{{{name}}}` follows another variable directly; put literal text between them so a URI can be split"
            ));
        }
        out.push(Piece::Variable(name));
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err("a `}` has no `{` before it".to_owned());
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    Ok(out)
}

fn is_variable(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The variables of a template and their values in `uri`, when the template matches it. A
/// variable's value is non-empty and holds no `/`.
pub fn match_template(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    let pieces = pieces(template).ok()?;
    let mut values = Vec::new();
    let mut rest = uri;
    let mut i = 0;
    while i < pieces.len() {
        match pieces[i] {
            Piece::Literal(text) => rest = rest.strip_prefix(text)?,
            Piece::Variable(name) => {
                let end = match pieces.get(i + 1) {
                    Some(Piece::Literal(next)) => rest.find(next)?,
                    _ => rest.len(),
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains('/') {
                    return None;
                }
                values.push((name.to_owned(), value.to_owned()));
                rest = &rest[end..];
            }
        }
        i += 1;
    }
    rest.is_empty().then_some(values)
}

/// The variable names of a template, in order (empty for a malformed one).
pub fn template_variables(template: &str) -> Vec<&str> {
    pieces(template)
        .map(|p| {
            p.into_iter()
                .filter_map(|p| match p {
                    Piece::Variable(name) => Some(name),
                    Piece::Literal(_) => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Resource {
    /// Whether the media type says JSON (`application/json`, `…+json`).
    pub fn is_json(&self) -> bool {
        let essence = self.mime_type.split(';').next().unwrap_or("").trim();
        essence == "application/json" || essence.ends_with("+json")
    }

    /// This resource's content at `uri`, when it is served there: a fixed URI's own content,
    /// or a template's with each `{name}` in the text replaced by the variable's value (JSON
    /// string-escaped when the media type is JSON, so the document stays well-formed).
    pub fn read(&self, uri: &str) -> Option<Content> {
        match &self.address {
            Address::Uri(own) => (own == uri).then(|| self.content.clone()),
            Address::Template(template) => {
                let values = match_template(template, uri)?;
                Some(match &self.content {
                    Content::Blob(bytes) => Content::Blob(bytes.clone()),
                    Content::Text(text) => {
                        let mut text = text.clone();
                        for (name, value) in &values {
                            let value = if self.is_json() {
                                let quoted = serde_json::Value::String(value.clone()).to_string();
                                quoted[1..quoted.len() - 1].to_owned()
                            } else {
                                value.clone()
                            };
                            text = text.replace(&format!("{{{name}}}"), &value);
                        }
                        Content::Text(text)
                    }
                })
            }
        }
    }
}

/// Checks the resources of one catalog file; valid ones are appended to `out`, problems to
/// `problems`. `seen` holds the URIs and templates of files read before.
pub(super) fn load(
    file: &str,
    defs: Vec<ResourceDef>,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<Resource>,
    problems: &mut Vec<Problem>,
) {
    for (i, def) in defs.into_iter().enumerate() {
        let place = Place {
            file: file.to_owned(),
            field: Some(format!("resources[{i}] `{}`", def.name)),
            ..Place::default()
        };
        let mut error = |message: String| {
            problems.push(Problem {
                severity: Severity::Error,
                place: place.clone(),
                message,
            });
        };
        let address = match (def.uri, def.uri_template) {
            (Some(uri), None) => Address::Uri(uri),
            (None, Some(template)) => Address::Template(template),
            _ => {
                error(
                    "give exactly one of `uri` (one document) and `uri_template` (a family, e.g. `docs://pages/{id}`)"
                        .to_owned(),
                );
                continue;
            }
        };
        let written = match &address {
            Address::Uri(u) | Address::Template(u) => u.clone(),
        };
        match written.split_once(':') {
            Some((scheme, rest))
                if !scheme.is_empty()
                    && !rest.is_empty()
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
            {
                if scheme.eq_ignore_ascii_case(RESERVED_SCHEME) {
                    error(format!(
                        "`{RESERVED_SCHEME}:` URIs are the server's own (its tools and agents); use another scheme"
                    ));
                    continue;
                }
            }
            _ => {
                error(format!(
                    "`{written}` is not a URI; write one with a scheme, e.g. `docs://handbook/intro`"
                ));
                continue;
            }
        }
        if let Address::Template(t) = &address {
            match pieces(t) {
                Err(why) => {
                    error(format!("the URI template `{t}`: {why}"));
                    continue;
                }
                Ok(p) if !p.iter().any(|p| matches!(p, Piece::Variable(_))) => {
                    error(format!(
                        "the URI template `{t}` has no `{{variable}}`; write it as `uri`"
                    ));
                    continue;
                }
                Ok(_) => {}
            }
        }
        if !seen.insert(written.clone()) {
            error(format!(
                "another resource is at `{written}`; each URI and template is declared once"
            ));
            continue;
        }
        if def.name.trim().is_empty() {
            error("the name is empty; give the resource a short name".to_owned());
            continue;
        }
        let content = match (def.text, def.blob) {
            (Some(text), None) => Content::Text(text),
            (None, Some(blob)) => {
                let compact: String = blob.split_whitespace().collect();
                match base64::engine::general_purpose::STANDARD.decode(compact) {
                    Ok(bytes) => Content::Blob(bytes),
                    Err(e) => {
                        error(format!(
                            "`blob` is not base64 ({e}); write the bytes base64-encoded (RFC 4648, with padding)"
                        ));
                        continue;
                    }
                }
            }
            _ => {
                error("give exactly one of `text` and `blob` (base64 bytes)".to_owned());
                continue;
            }
        };
        let size = match &content {
            Content::Text(t) => t.len(),
            Content::Blob(b) => b.len(),
        };
        if size > MAX_RESOURCE_BYTES {
            error(format!(
                "the content has {size} bytes; at most {MAX_RESOURCE_BYTES} are served"
            ));
            continue;
        }
        let mime_type = match (def.mime_type, &content) {
            (Some(m), _) if m.contains('/') && !m.trim().is_empty() => m,
            (Some(m), _) => {
                error(format!(
                    "`{m}` is not a media type; write one like `text/plain` or `image/png`"
                ));
                continue;
            }
            (None, Content::Text(_)) => "text/plain".to_owned(),
            (None, Content::Blob(_)) => {
                error("bytes need a `mime_type` (e.g. `image/png`) so clients know what they are".to_owned());
                continue;
            }
        };
        out.push(Resource {
            address,
            name: def.name,
            title: def.title,
            description: def.description,
            mime_type,
            content,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_and_substitute() {
        assert_eq!(
            match_template("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".to_owned(), "123".to_owned())])
        );
        assert_eq!(
            match_template("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            match_template("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            match_template("a://{x}", "a://y"),
            Some(vec![("x".to_owned(), "y".to_owned())])
        );
        let r = Resource {
            address: Address::Template("t://{id}".into()),
            name: "t".into(),
            title: None,
            description: None,
            mime_type: "application/json".into(),
            content: Content::Text(r#"{"id":"{id}"}"#.into()),
        };
        assert_eq!(r.read("t://a\"b"), Some(Content::Text(r#"{"id":"a\"b"}"#.into())));
        assert!(pieces("t://{a}{b}").is_err());
        assert!(pieces("t://{a").is_err());
        assert!(pieces("t://{1a}").is_err());
    }
}
