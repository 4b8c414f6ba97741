//! Design-time pinning: a lockfile records each selected tool's server, protocol, exact version
//! and a hash of its signature; [`verify`] re-fetches and reports drift.
//!
//! N-ACT's lock rule (§5.4): a version, once served, never changes. So a changed signature under
//! the same version is an error (the server broke the rule), while a newer version is only news.
//!
//! The signature hash is `sha256:` and the hex SHA-256 of the tool's definition exactly as the
//! server sent it (N-ACT's without `currentVersion`, which changes whenever a version is added),
//! serialized as canonical JSON: object keys sorted by code point, no insignificant whitespace,
//! strings escaped as serde_json escapes them, numbers as serde_json prints them. It depends on
//! nothing of this program's own model, so it is stable across toolhost versions and platforms.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::client::Client;
use crate::model::{Protocol, Source, Tool};
use crate::text;

/// The lockfile format version this program writes and reads.
pub const FORMAT: u32 = 1;

/// A lockfile: `toolhost.lock`, JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    /// Always [`FORMAT`].
    pub lockfile: u32,
    /// The pinned tools, sorted by server, then name.
    pub tools: Vec<Locked>,
    /// The agents whose tools were locked through their URL, each with its procedure's hash
    /// (issue #41.2): a procedure is the agent's system prompt, and changes what calls it makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<LockedAgent>,
}

/// One pinned agent procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedAgent {
    /// The agent's design URL (`…/agents/{name}`).
    pub url: Source,
    /// The agent's name.
    pub name: String,
    /// `sha256:…` of the procedure's text ([`crate::Agent::procedure_hash`]).
    pub procedure: String,
}

/// One pinned tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// Where the protocol lives ([`crate::Server::endpoint`]): reached again without probing.
    pub server: Source,
    /// The protocol.
    pub protocol: Protocol,
    /// The tool's name on that server.
    pub name: String,
    /// The exact version (semver), when the server names versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// N-ACT's version number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_number: Option<u32>,
    /// `sha256:…` of the signature (module docs).
    pub signature: String,
}

impl Lockfile {
    /// A lockfile pinning `tools` at the versions they were discovered at.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Self {
        let mut tools: Vec<Locked> = tools
            .into_iter()
            .map(|t| Locked {
                // A lockfile is committed: it never holds a credential from the URL.
                server: crate::text::without_credentials(&t.endpoint),
                protocol: t.protocol,
                name: t.name.clone(),
                version: t.version.clone(),
                version_number: t.version_number,
                signature: signature_hash(t.protocol, &t.definition),
            })
            .collect();
        tools.sort_by(|a, b| {
            (a.server.to_string(), a.protocol, &a.name).cmp(&(b.server.to_string(), b.protocol, &b.name))
        });
        Self {
            lockfile: FORMAT,
            tools,
            agents: Vec::new(),
        }
    }

    /// This lockfile with the procedure of each agent among `agents` pinned too.
    pub fn with_agents<'a>(mut self, agents: impl IntoIterator<Item = &'a crate::Agent>) -> Self {
        self.agents.extend(agents.into_iter().map(|a| LockedAgent {
            url: crate::text::without_credentials(&Source::Url(a.url.clone())),
            name: a.name.clone(),
            procedure: a.procedure_hash(),
        }));
        self.agents.sort_by_key(|a| a.url.to_string());
        self.agents.dedup();
        self
    }

    /// Parses a lockfile.
    pub fn parse(text: &str) -> Result<Self, String> {
        let lockfile: Self = serde_json::from_str(text).map_err(|e| format!("not a toolhost lockfile: {e}"))?;
        if lockfile.lockfile != FORMAT {
            return Err(format!(
                "lockfile format {} is not {FORMAT}, which this toolhost reads; regenerate it with `toolhost lock`",
                lockfile.lockfile
            ));
        }
        Ok(lockfile)
    }

    /// The lockfile as pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The signature hash of a definition (module docs).
pub fn signature_hash(protocol: Protocol, definition: &Value) -> String {
    let mut value = definition.clone();
    if protocol == Protocol::Nact
        && let Value::Object(map) = &mut value
    {
        map.remove("currentVersion");
    }
    let mut text = String::new();
    canonical(&value, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    let hex = toolhost_core::hex(&digest);
    format!("sha256:{hex}")
}

/// Canonical JSON: sorted keys, no whitespace. Written out by hand rather than trusting
/// `serde_json::Map`'s order, which a dependency's `preserve_order` feature would change.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// What [`verify`] found for one pinned tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The pinned version is served with the same signature.
    Unchanged,
    /// The pinned version is unchanged (where the protocol lets us see it) and a newer one is
    /// available. Information, not an error.
    Newer {
        /// The newest version.
        available: String,
        /// Whether the pinned version's signature could be checked too (N-ACT, OTC).
        checked: bool,
    },
    /// The pinned version's signature changed: the server broke N-ACT's lock rule. An error.
    Drift {
        /// The hash served now.
        served: String,
    },
    /// The tool or its pinned version is no longer served. An error.
    Gone {
        /// What is missing.
        why: String,
    },
    /// An agent's procedure (its system prompt) is not the one pinned. An error: review it,
    /// then lock again.
    ProcedureChanged {
        /// The hash served now.
        served: String,
    },
    /// The server could not be reached or read. An error.
    Unreachable {
        /// Why.
        error: String,
    },
}

impl Finding {
    /// Whether the finding fails verification.
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Unchanged | Self::Newer { .. })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unchanged => f.write_str("unchanged"),
            Self::Newer {
                available,
                checked: true,
            } => {
                write!(f, "unchanged; version {available} is available")
            }
            Self::Newer {
                available,
                checked: false,
            } => write!(
                f,
                "version {available} is available (this protocol lists only the current version, so the pinned one was not re-checked)"
            ),
            Self::Drift { served } => write!(
                f,
                "the signature changed under the same version (now {served}): the server broke N-ACT's lock rule; do not call it until it is fixed, or re-lock after review"
            ),
            Self::ProcedureChanged { served } => write!(
                f,
                "the agent's procedure changed (now {served}): read the new one at its URL, then lock again with `toolhost lock`"
            ),
            Self::Gone { why } => f.write_str(why),
            Self::Unreachable { error } => write!(f, "could not check: {error}"),
        }
    }
}

/// Re-fetches every pinned tool (always asking the server, never trusting a fresh cache) and
/// reports on each, in lockfile order. `progress` is told after each server.
pub async fn verify(client: &Client, lockfile: &Lockfile, progress: impl Fn(&Source)) -> Vec<(Locked, Finding)> {
    let mut groups: Vec<((Source, Protocol), Vec<&Locked>)> = Vec::new();
    for locked in &lockfile.tools {
        let key = (locked.server.clone(), locked.protocol);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(locked),
            None => groups.push((key, vec![locked])),
        }
    }
    let mut findings = Vec::new();
    for ((server, protocol), group) in groups {
        if let Source::Command { .. } = &server
            && !client.options().allow_stdio
        {
            progress(&server);
            let error = format!(
                "not started: `{}` is a command from the lockfile, and commands from a lockfile run only with --allow-stdio",
                text::one_line(&server.to_string(), 200)
            );
            for locked in group {
                findings.push((locked.clone(), Finding::Unreachable { error: error.clone() }));
            }
            continue;
        }
        let discovered = client.rediscover(&server, Some(protocol)).await;
        progress(&server);
        for locked in group {
            let finding = match &discovered {
                Err(e) => Finding::Unreachable { error: e.to_string() },
                Ok(found) => match found.tool(&locked.name) {
                    None => Finding::Gone {
                        why: format!("{server} no longer lists `{}`", locked.name),
                    },
                    Some(current) => check(client, locked, current).await,
                },
            };
            findings.push((locked.clone(), finding));
        }
    }
    findings
}

/// Re-reads every pinned agent's design and reports on its procedure, in lockfile order.
pub async fn verify_agents(client: &Client, lockfile: &Lockfile) -> Vec<(LockedAgent, Finding)> {
    let mut findings = Vec::with_capacity(lockfile.agents.len());
    for locked in &lockfile.agents {
        let finding = match &locked.url {
            Source::Url(url) => match client.agent(url).await {
                Err(e) => Finding::Unreachable { error: e.to_string() },
                Ok(None) => Finding::Gone {
                    why: format!("{url} no longer serves the agent `{}`", locked.name),
                },
                Ok(Some(agent)) if agent.procedure_hash() == locked.procedure => Finding::Unchanged,
                Ok(Some(agent)) => Finding::ProcedureChanged {
                    served: agent.procedure_hash(),
                },
            },
            Source::Command { .. } => Finding::Gone {
                why: "an agent is pinned by its URL, not a command".to_owned(),
            },
        };
        findings.push((locked.clone(), finding));
    }
    findings
}

async fn check(client: &Client, locked: &Locked, current: &Tool) -> Finding {
    let same_version = current.version == locked.version && current.version_number == locked.version_number;
    if same_version {
        let served = signature_hash(current.protocol, &current.definition);
        return if served == locked.signature {
            Finding::Unchanged
        } else {
            Finding::Drift { served }
        };
    }
    let available = current.version.clone().unwrap_or_else(|| "(unnamed)".to_owned());
    // The pinned version's own signature, where the protocol serves older versions.
    let pinned = match (current.protocol, locked.version_number) {
        (Protocol::Nact, Some(number)) => match client.nact_signature(current, number).await {
            Ok(Some(definition)) => Some(definition),
            Ok(None) => {
                return Finding::Gone {
                    why: format!("version {number} of `{}` is no longer served", locked.name),
                };
            }
            Err(e) => return Finding::Unreachable { error: e.to_string() },
        },
        (Protocol::Otc, _) => match current.history.iter().find(|(v, _)| Some(v) == locked.version.as_ref()) {
            Some((_, definition)) => Some(definition.clone()),
            None => {
                return Finding::Gone {
                    why: format!(
                        "version {} of `{}` is no longer listed",
                        locked.version.as_deref().unwrap_or("(unnamed)"),
                        locked.name
                    ),
                };
            }
        },
        _ => None,
    };
    if !is_newer(current.version.as_deref(), locked.version.as_deref()) {
        return Finding::Gone {
            why: format!(
                "the server now offers version {available} of `{}`, not the pinned {}",
                locked.name,
                locked.version.as_deref().unwrap_or("(unnamed)")
            ),
        };
    }
    match pinned {
        Some(definition) => {
            let served = signature_hash(current.protocol, &definition);
            if served == locked.signature {
                Finding::Newer {
                    available,
                    checked: true,
                }
            } else {
                Finding::Drift { served }
            }
        }
        None => Finding::Newer {
            available,
            checked: false,
        },
    }
}

fn is_newer(current: Option<&str>, locked: Option<&str>) -> bool {
    match (current.map(semver::Version::parse), locked.map(semver::Version::parse)) {
        (Some(Ok(c)), Some(Ok(l))) => c > l,
        (Some(_), None) => true,
        _ => current != locked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hashes_ignore_key_order_and_current_version() {
        let a = json!({"name": "t", "version": 1, "currentVersion": 1, "x": {"b": 1, "a": [1, "é"]}});
        let b = json!({"x": {"a": [1, "é"], "b": 1}, "currentVersion": 3, "version": 1, "name": "t"});
        assert_eq!(signature_hash(Protocol::Nact, &a), signature_hash(Protocol::Nact, &b));
        assert_ne!(signature_hash(Protocol::Otc, &a), signature_hash(Protocol::Otc, &b));
        let mut text = String::new();
        canonical(&json!({"b": [1, 2.5, null, true], "a": "q\"\n"}), &mut text);
        assert_eq!(text, r#"{"a":"q\"\n","b":[1,2.5,null,true]}"#);
        // Pinned (and equal to `sha256sum` of `{"name":"t"}`): a change to the hash breaks every
        // lockfile ever written.
        assert_eq!(
            signature_hash(Protocol::Otc, &json!({"name": "t"})),
            "sha256:3647a67649228b62fe3d139c47f7a3c673c31ce57da824082b6654fc0b15751f"
        );
    }

    #[test]
    fn lockfiles_round_trip() {
        let text = r#"{"lockfile": 1, "tools": [{"server": "stdio:python3 s.py", "protocol": "mcp", "name": "t", "signature": "sha256:00"}]}"#;
        let lockfile = Lockfile::parse(text).unwrap();
        assert_eq!(Lockfile::parse(&lockfile.to_json()).unwrap(), lockfile);
        assert!(
            Lockfile::parse(r#"{"lockfile": 2, "tools": []}"#)
                .unwrap_err()
                .contains("format 2")
        );
    }

    #[test]
    fn findings_that_fail() {
        assert!(!Finding::Unchanged.is_error());
        assert!(
            !Finding::Newer {
                available: "2.0.0".into(),
                checked: false
            }
            .is_error()
        );
        assert!(Finding::Drift { served: "x".into() }.is_error());
    }
}
