//! Where the imported tools send their requests, and what a description may not write into a
//! catalog.
//!
//! A description is untrusted input (issue #30): its server URL must not point the tools at
//! loopback, link-local (the cloud metadata service at 169.254.169.254) or private addresses
//! unless the operator says so (`--allow-private`, as the client's guard; link-local never),
//! and nothing it contributes may become a live template (`{{secret.X}}` in a path would send
//! a server secret to the description's server). A description without a usable server URL
//! still imports (issue #32.6): the tools then read their base URL from a server secret.

use std::net::IpAddr;

use serde_json::{Value, json};

use super::Draft;

/// Where the tools' requests go.
#[derive(Debug, PartialEq)]
pub(crate) enum Base {
    /// A URL, from `--base-url` or the description.
    Url(String),
    /// Not known at import: read at serve time from this secret (`{{secret.NAME}}`), for the
    /// reason given.
    Secret { name: String, why: String },
}

/// The base URL of the tools: `--base-url` as the operator wrote it; else the description's
/// first server, its variables at their defaults, made absolute against the description's own
/// location (a relative `/api/v1`) or https (a protocol-relative `//api.example.com`), and
/// checked; else a secret named `{prefix}_BASE_URL`. `Err` when the description's URL is one
/// the tools may not call.
pub(crate) fn base(
    doc: &Value,
    given: Option<&str>,
    location: Option<&str>,
    allow_private: bool,
    prefix: &str,
) -> Result<(Base, Option<String>), String> {
    if let Some(url) = given {
        return Ok((Base::Url(url.trim_end_matches('/').to_owned()), None));
    }
    let urls = server_urls(doc);
    if urls.is_empty() {
        return Ok((
            Base::Secret {
                name: format!("{prefix}_BASE_URL"),
                why: "the description names no server".to_owned(),
            },
            None,
        ));
    }
    // The first server the tools may call; a description listing `http://localhost:8080` for
    // development before its real address still imports, with a note.
    let mut refused: Option<String> = None;
    let mut unusable = None;
    for written in &urls {
        match one(written, location, allow_private, prefix) {
            Ok((Base::Url(url), note)) => {
                let note = match &refused {
                    Some(why) => Some(format!("{why}; the next server, {url}, is used instead")),
                    None => note,
                };
                return Ok((Base::Url(url), note));
            }
            Ok(other) => {
                unusable.get_or_insert(other);
            }
            Err(why) => {
                refused.get_or_insert(why);
            }
        }
    }
    match (refused, unusable) {
        (Some(why), _) => Err(why),
        (None, Some(secret)) => Ok(secret),
        (None, None) => unreachable!("every server URL is a URL, a secret or refused"),
    }
}

/// One server URL as written: absolute and checked, or a secret when it cannot be used.
fn one(
    written: &str,
    location: Option<&str>,
    allow_private: bool,
    prefix: &str,
) -> Result<(Base, Option<String>), String> {
    let written = written.to_owned();
    let secret = |why: String| Base::Secret {
        name: format!("{prefix}_BASE_URL"),
        why,
    };
    if written.contains("{{") || written.contains("}}") {
        return Err(format!(
            "the description's server URL `{written}` has `{{{{` or `}}}}`, which a catalog reads as a template (a server secret, the caller's token); pass --base-url"
        ));
    }
    let mut note = None;
    let absolute = if let Some(rest) = written.strip_prefix("//") {
        note = Some(format!("the server URL `{written}` names no scheme: https is used"));
        format!("https://{rest}")
    } else if written.contains("://") {
        written.clone()
    } else {
        match location
            .and_then(|l| url::Url::parse(l).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https"))
        {
            Some(at) => match at.join(&written) {
                Ok(url) => {
                    note = Some(format!(
                        "the server URL `{written}` is relative: it is read against the description's own address, {url}"
                    ));
                    url.to_string()
                }
                Err(_) => return Ok((secret(format!("the server URL `{written}` is not a URL")), None)),
            },
            None => {
                return Ok((
                    secret(format!(
                        "the server URL `{written}` is relative, and the description was not read from a URL it could be relative to"
                    )),
                    None,
                ));
            }
        }
    };
    let Ok(url) = url::Url::parse(&absolute) else {
        return Ok((secret(format!("the server URL `{written}` is not a URL")), None));
    };
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Ok((
            secret(format!("the server URL `{written}` is not an http(s) URL")),
            None,
        ));
    }
    if url.as_str().contains('{') || url.as_str().contains("%7B") {
        return Ok((
            secret(format!("the server URL `{written}` has a variable without a default")),
            None,
        ));
    }
    internal(&url, allow_private)?;
    Ok((Base::Url(url.as_str().trim_end_matches('/').to_owned()), note))
}

/// Refuses a URL whose host is a loopback, link-local, private or otherwise internal address
/// (or a name that is one everywhere, `localhost`, the metadata service's), unless private
/// addresses are allowed (link-local and metadata never are).
pub(crate) fn internal(url: &url::Url, allow_private: bool) -> Result<(), String> {
    let mut policy = toolhost_client::Policy::strict();
    if allow_private {
        policy = policy.allow_private();
    }
    let denied = match url.host() {
        Some(url::Host::Ipv4(ip)) => policy.check(IpAddr::V4(ip)).err().map(|d| (d.to_string(), d.private)),
        Some(url::Host::Ipv6(ip)) => policy.check(IpAddr::V6(ip)).err().map(|d| (d.to_string(), d.private)),
        Some(url::Host::Domain(host)) => {
            let host = host.trim_end_matches('.').to_ascii_lowercase();
            if host == "metadata.google.internal" || host == "metadata" {
                Some((format!("{host} is the cloud metadata service"), false))
            } else if (host == "localhost" || host.ends_with(".localhost")) && !allow_private {
                Some((format!("{host} is loopback"), true))
            } else {
                None
            }
        }
        None => None,
    };
    match denied {
        None => Ok(()),
        Some((what, private)) => Err(format!(
            "the description's server URL {url} points at an internal address ({what}): its tools would call it{}; pass --base-url with the API's real address",
            if private {
                ", so it is refused unless you pass --allow-private"
            } else {
                ", which is never allowed"
            }
        )),
    }
}

/// The servers' URLs as written, in order, their variables at their defaults.
fn server_urls(doc: &Value) -> Vec<String> {
    let mut urls = Vec::new();
    for server in doc["servers"].as_array().into_iter().flatten() {
        let Some(mut url) = server["url"].as_str().map(|u| u.trim().to_owned()) else {
            continue;
        };
        for (name, var) in server["variables"].as_object().into_iter().flatten() {
            if let Some(default) = var["default"].as_str() {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
        if !url.is_empty() {
            urls.push(url);
        }
    }
    urls
}

/// The text with `{{` and `}}` broken up, so that no text a description wrote reads as a
/// template wherever it is copied; whether anything changed.
pub(crate) fn untemplate(text: &mut String) -> bool {
    if !text.contains("{{") && !text.contains("}}") {
        return false;
    }
    *text = text.replace("{{", "{ {").replace("}}", "} }");
    true
}

/// Untemplates every string in `value`; whether anything changed.
pub(crate) fn untemplate_all(value: &mut Value) -> bool {
    match value {
        Value::String(text) => untemplate(text),
        Value::Array(items) => items.iter_mut().fold(false, |any, v| untemplate_all(v) | any),
        Value::Object(members) => members.values_mut().fold(false, |any, v| untemplate_all(v) | any),
        _ => false,
    }
}

/// The holes in the strings of a step that are not `{{input.NAME}}` of one of `inputs`: what a
/// description would have smuggled into a template.
pub(crate) fn foreign_holes(step: &Value, inputs: &[Value]) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                let mut rest = text.as_str();
                while let Some(start) = rest.find("{{") {
                    let after = &rest[start + 2..];
                    let end = after.find("}}").unwrap_or(after.len());
                    out.push(after[..end].trim().to_owned());
                    rest = &after[end.min(after.len())..];
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(members) => members.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut holes = Vec::new();
    walk(step, &mut holes);
    holes.retain(|hole| {
        !hole
            .strip_prefix("input.")
            .is_some_and(|name| inputs.iter().any(|i| i["name"] == json!(name)))
    });
    holes
}

/// Nothing a description wrote reads as a template in the catalog (issue #30.3): a hole in a
/// step that is not one of the tool's own inputs skips the tool; `{{` in text it contributes
/// (descriptions) is broken up, and the note says where.
pub(crate) fn guard(draft: &mut Draft, notes: &mut Vec<String>) -> Result<(), String> {
    for step in &draft.steps {
        let foreign = foreign_holes(step, &draft.inputs);
        if !foreign.is_empty() {
            return Err(format!(
                "its request would read {} at serve time, which is not the description's to write",
                foreign
                    .iter()
                    .map(|h| format!("`{{{{{h}}}}}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let mut fields = Vec::new();
    if untemplate(&mut draft.description) {
        fields.push("the description".to_owned());
    }
    for (kind, list) in [("input", &mut draft.inputs), ("output", &mut draft.outputs)] {
        for item in list.iter_mut() {
            let name = item["name"].as_str().unwrap_or_default().to_owned();
            let mut changed = untemplate_all(&mut item["description"]);
            for value in item
                .get_mut("values")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                changed |= untemplate_all(&mut value["description"]);
            }
            if changed {
                fields.push(format!("{kind} `{name}`"));
            }
        }
    }
    if !fields.is_empty() {
        notes.push(format!(
            "{}: `{{{{` in {} is written `{{ {{`, so that it stays text and never reads as a template",
            draft.source,
            fields.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(url: &str) -> Value {
        json!({"servers": [{"url": url}]})
    }

    #[test]
    fn internal_server_urls_are_refused_unless_allowed() {
        for url in [
            "http://169.254.169.254/latest",
            "http://127.0.0.1:8080",
            "http://[::1]/",
            "http://10.0.0.7/api",
            "http://localhost:9000",
            "http://metadata.google.internal/computeMetadata/v1",
        ] {
            let refused = base(&doc(url), None, None, false, "X").unwrap_err();
            assert!(refused.contains("internal address"), "{url}: {refused}");
        }
        // --allow-private opens private ranges and loopback, never link-local.
        assert!(base(&doc("http://10.0.0.7/api"), None, None, true, "X").is_ok());
        assert!(base(&doc("http://127.0.0.1:8080"), None, None, true, "X").is_ok());
        assert!(base(&doc("http://169.254.169.254/latest"), None, None, true, "X").is_err());
        // A development server listed first does not hide the real one.
        let both = json!({"servers": [{"url": "http://localhost:8080"}, {"url": "https://api.example.com"}]});
        let (chosen, note) = base(&both, None, None, false, "X").unwrap();
        assert_eq!(chosen, Base::Url("https://api.example.com".to_owned()));
        assert!(note.unwrap().contains("localhost is loopback"));
        // What the operator writes is theirs.
        assert_eq!(
            base(
                &doc("http://169.254.169.254/"),
                Some("http://127.0.0.1:1/"),
                None,
                false,
                "X"
            )
            .unwrap()
            .0,
            Base::Url("http://127.0.0.1:1".to_owned())
        );
    }

    #[test]
    fn missing_relative_and_protocol_relative_servers_import() {
        let secret = |why: &str| (why.to_owned(), "X_BASE_URL".to_owned());
        let got = |doc: &Value, location: Option<&str>| match base(doc, None, location, false, "X").unwrap().0 {
            Base::Url(url) => (url, String::new()),
            Base::Secret { name, why } => (why, name),
        };
        assert_eq!(got(&json!({}), None), secret("the description names no server"));
        assert_eq!(got(&doc("/api/v1"), None).1, "X_BASE_URL");
        assert_eq!(
            got(&doc("/api/v1"), Some("https://api.example.com/specs/openapi.json")).0,
            "https://api.example.com/api/v1"
        );
        assert_eq!(got(&doc("//api.example.com/v2/"), None).0, "https://api.example.com/v2");
        assert_eq!(got(&doc("https://{region}.example.com"), None).1, "X_BASE_URL");
        assert!(
            base(&doc("http://x/{{secret.K}}"), None, None, false, "X")
                .unwrap_err()
                .contains("template")
        );
    }

    #[test]
    fn holes_a_description_smuggles_in_are_found() {
        let inputs = [json!({"name": "id"})];
        let step = json!({"path": "/a/{{input.id}}/{{secret.K}}", "query": {"q": "{{caller.token}}"}});
        assert_eq!(foreign_holes(&step, &inputs), ["secret.K", "caller.token"]);
        let mut text = "Use {{secret.K}} here".to_owned();
        assert!(untemplate(&mut text));
        assert_eq!(text, "Use { {secret.K} } here");
    }
}
