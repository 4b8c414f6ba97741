//! The `backend: { kind: upstream, ... }` block as a catalog writes it, and what the factory
//! reads from it at load: secrets filled in, names checked, refusals said with what to write
//! instead.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::Value;
use toolhost_client::Source;
use toolhost_core::Secret;

/// The backend block as a catalog writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Def {
    /// An http(s) URL, or `stdio:COMMAND ARGS`.
    pub source: String,
    /// What callers, `/readyz` and metrics call the upstream; by default a `stdio:` source's
    /// program and script names (never its arguments, which may hold keys), a URL's origin and
    /// path with credentials masked.
    #[serde(default)]
    pub name: Option<String>,
    /// The protocol to speak (probed when absent).
    #[serde(default)]
    pub protocol: Option<toolhost_client::Protocol>,
    /// The upstream's name for the tool (a tool's backend).
    #[serde(default)]
    pub tool: String,
    /// The upstream's URI of a federated resource (a toolkit's `resources:`, issue #39.5).
    #[serde(default)]
    pub resource: Option<String>,
    /// The upstream's URI template of a federated resource template.
    #[serde(default)]
    pub resource_template: Option<String>,
    /// The hash of the upstream's definition the signature was imported from.
    pub pin: String,
    /// The upstream's version calls go to, a semver (`"1.2.0"`) or an N-ACT version number
    /// (`3`), so that a version pinned here is the same version there (chaining toolhosts);
    /// absent: the upstream's current one (MCP, WoA).
    #[serde(default)]
    pub version: Option<Value>,
    /// Whether the tool may be called again without repeating an effect (annotations).
    #[serde(default)]
    pub idempotent: bool,
    /// Headers sent to the upstream (only to its origin), e.g. `Authorization: "Bearer
    /// {{secret.PEER_TOKEN}}"`; `{{secret.NAME}}` reads the server's `[secrets]`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The environment variables a `stdio:` server gets beside the harmless ones of toolhost's
    /// own (`PATH`, `HOME`, locale, …): `{API_KEY: "{{secret.PEER_KEY}}"}`. Nothing else of
    /// toolhost's environment reaches it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A token per call: the caller's own (`{forward: bearer}`, only with `same_audience`),
    /// one fetched with OAuth 2.0 client credentials (`{oauth2: {...}}`, also for listing), or
    /// the caller's exchanged (`{exchange: {...}}`, RFC 8693).
    #[serde(default)]
    pub auth: Option<AuthDef>,
    /// The operator's word that the upstream is part of this server's audience (it accepts the
    /// tokens this server accepts anyway), which `forward: bearer` needs.
    #[serde(default)]
    pub same_audience: bool,
    /// The largest answer passed on, in bytes of JSON (default 1 MiB, as for sculpted tools).
    #[serde(default)]
    pub max_response_bytes: Option<u64>,
}

/// `auth` of an upstream backend.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum AuthDef {
    Forward(Forwarded),
    Oauth2(OAuthDef),
    Exchange(OAuthDef),
}

/// What `forward` sends on: the caller's bearer token.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Forwarded {
    Bearer,
}

/// A token endpoint and the server's client there; `{{secret.NAME}}` in the id and secret.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OAuthDef {
    pub token_url: String,
    pub client_id: String,
    pub client_secret: String,
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// Why `forward: bearer` is refused without `same_audience` (issue #30.10).
pub(crate) const PASSTHROUGH: &str = "`auth: {forward: bearer}` sends the caller's own token, issued for this server, to the upstream, which could replay it here (token passthrough, which the MCP specification forbids). Use `auth: {exchange: {token_url, client_id, client_secret}}` (RFC 8693 token exchange) to get a token for the upstream's own audience; or, if the upstream is part of this server's audience and accepts the same tokens anyway, say so with `same_audience: true` on the backend";

/// The secret names read while their names are not checked (`check` without a config).
pub(crate) type Unchecked = std::sync::Mutex<std::collections::BTreeSet<String>>;

/// Fills `{{secret.NAME}}` in `value` (at `place`, for messages) from `secrets`; a name not there
/// is an error unless `lenient` (`check` without a config), which then records it.
pub(crate) fn fill(
    secrets: &HashMap<String, Secret>,
    lenient: Option<&Unchecked>,
    place: &str,
    value: &str,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("`{place}`: `{{{{` is not closed"))?;
        let name = after[..end].trim();
        let Some(secret) = name.strip_prefix("secret.") else {
            return Err(format!("`{place}`: only `{{{{secret.NAME}}}}` may be filled in here"));
        };
        match secrets.get(secret) {
            Some(value) => out.push_str(value.expose()),
            None if let Some(unchecked) = lenient => {
                unchecked
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(secret.to_owned());
            }
            None => {
                let mut known: Vec<&str> = secrets.keys().map(String::as_str).collect();
                known.sort_unstable();
                return Err(format!(
                    "`{place}` refers to secret `{secret}`, which is not in the server's [secrets] ({})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The `env` of a `stdio:` source, its secrets filled; refused for a URL.
pub(crate) fn env(
    def: &Def,
    source: &Source,
    secrets: &HashMap<String, Secret>,
    lenient: Option<&Unchecked>,
) -> Result<Vec<(String, Secret)>, Vec<String>> {
    if def.env.is_empty() {
        return Ok(Vec::new());
    }
    if matches!(source, Source::Url(_)) {
        return Err(vec![
            "`env` is the environment of a `stdio:` server; an http(s) upstream gets `headers`".to_owned(),
        ]);
    }
    let mut problems = Vec::new();
    let mut filled = Vec::new();
    for (name, value) in &def.env {
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            problems.push(format!(
                "`env.{name}`: an environment variable's name is letters, digits and underscores"
            ));
            continue;
        }
        match fill(secrets, lenient, &format!("env.{name}"), value) {
            Ok(value) if value.contains('\0') => problems.push(format!("`env.{name}` holds a NUL character")),
            Ok(value) => filled.push((name.clone(), Secret::new(value))),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() { Ok(filled) } else { Err(problems) }
}

/// What callers, `/readyz` and metrics call an upstream: `name` when the catalog gives one; for
/// a `stdio:` source `stdio:PROGRAM` with the program's file name, and the first argument's file
/// name when it is a script (`stdio:python3 server.py`), never other arguments (a key passed on
/// the command line); for a URL, the URL with its credentials and query values masked.
pub(crate) fn name(given: Option<&str>, source: &Source) -> String {
    if let Some(given) = given {
        return toolhost_client::text::one_line(given, 100);
    }
    match source {
        Source::Url(url) => toolhost_client::text::shown_url(url.as_str()),
        Source::Command { program, args } => {
            let file = |path: &str| {
                std::path::Path::new(path)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(path)
                    .to_owned()
            };
            const SCRIPTS: &[&str] = &[".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh", ".jar", ".php", ".pl"];
            let mut name = format!("{}{}", Source::STDIO, file(program));
            if let Some(script) = args
                .first()
                .filter(|a| !a.starts_with('-') && SCRIPTS.iter().any(|s| a.ends_with(s)))
            {
                name.push(' ');
                name.push_str(&file(script));
            }
            name
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stdio_name_never_carries_arguments_but_a_script() {
        let source = |text: &str| Source::parse(text).unwrap();
        assert_eq!(
            name(
                None,
                &source("stdio:/usr/bin/python3 /srv/peer/server.py --api-key sk-123")
            ),
            "stdio:python3 server.py"
        );
        assert_eq!(name(None, &source("stdio:npx -y @scope/server sk-123")), "stdio:npx");
        assert_eq!(name(Some("files"), &source("stdio:server --key k")), "files");
        assert_eq!(
            name(None, &source("https://user:pw@peer.example/mcp?key=k")),
            toolhost_client::text::shown_url("https://user:pw@peer.example/mcp?key=k")
        );
    }
}
