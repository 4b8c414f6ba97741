//! Federated resources (issue #39.5): documents a federated upstream serves, imported into a
//! toolkit's `resources:` by `toolhost import tools`, each pinned like the toolkit's tools, and
//! read from the upstream through the toolkit's backend when a client reads them.
//!
//! ```yaml
//! toolkits:
//!   - name: Notes
//!     backend: { kind: upstream, source: "stdio:python3 server.py", protocol: mcp }
//!     tools: [...]
//!     resources:
//!       - resource: "note://readme"            # or resource_template: "note://items/{id}"
//!         name: readme
//!         mime_type: text/plain
//!         pin: "sha256:…"
//! ```
//!
//! Served namespaced by the toolkit: `toolhost://upstream/{toolkit}/{upstream URI}` (a template
//! likewise), so two upstreams' `file:///readme` never meet, and a URI the upstream serves but
//! the catalog did not import is not readable through toolhost (no open proxy).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::problem::{Place, Problem, Severity};
use super::resource::{self, Address};
use crate::backend::{BackendFactory, ResourceReader};

/// Where federated resources are served: `toolhost://upstream/{toolkit}/{upstream URI}`.
pub const PREFIX: &str = "toolhost://upstream/";
/// The most federated resources (and templates) one toolkit declares.
pub const MAX_PER_TOOLKIT: usize = 1000;

/// A federated resource as a toolkit writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FederatedDef {
    /// The upstream's URI.
    #[serde(default)]
    resource: Option<String>,
    /// The upstream's URI template (RFC 6570 level 1).
    #[serde(default)]
    resource_template: Option<String>,
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    mime_type: Option<String>,
    /// The hash of what the upstream's listing said of it when imported.
    pin: String,
}

/// One federated resource or template.
#[derive(Clone)]
pub struct Federated {
    /// Where toolhost serves it (under [`PREFIX`]).
    pub address: Address,
    /// The upstream's own URI or template.
    pub upstream: Address,
    /// The toolkit it was imported into.
    pub toolkit: String,
    /// The toolkit's scopes, which a caller needs to see and read it, as for its tools.
    pub scopes: Vec<String>,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// The hash of what the upstream's listing said of it when imported.
    pub pin: String,
    /// Reads it from the upstream.
    pub reader: Arc<dyn ResourceReader>,
}

impl std::fmt::Debug for Federated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Federated")
            .field("address", &self.address)
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

impl Federated {
    /// The upstream's URI that `uri` (one of toolhost's) stands for, when this resource is
    /// served there.
    pub fn upstream_uri(&self, uri: &str) -> Option<String> {
        let own = uri
            .strip_prefix(PREFIX)?
            .strip_prefix(&self.toolkit)?
            .strip_prefix('/')?;
        match &self.upstream {
            Address::Uri(fixed) => (fixed == own).then(|| own.to_owned()),
            Address::Template(template) => resource::match_template(template, own).map(|_| own.to_owned()),
        }
    }

    /// Whether a caller with `access` may see and read it.
    pub fn allows(&self, access: &super::Access) -> bool {
        match access {
            super::Access::All => true,
            super::Access::Scopes(held) => self.scopes.iter().all(|s| held.contains(s)),
        }
    }

    /// Whether the upstream withdrew it (changed or removed since the pin).
    pub fn is_served(&self) -> bool {
        self.reader.withdrawn().is_none()
    }
}

/// Builds the federated resources of one toolkit with the factory of its `backend` kind,
/// appending them to `out` and problems to `problems`.
pub(super) fn load(
    file: &str,
    def: &mut super::file::ToolkitDef,
    factories: &std::collections::HashMap<String, Arc<dyn BackendFactory>>,
    out: &mut Vec<Federated>,
    problems: &mut Vec<Problem>,
) {
    let (toolkit, scopes, backend) = (def.name.as_str(), def.scopes.as_slice(), def.backend.as_ref());
    let defs = std::mem::take(&mut def.resources);
    if defs.is_empty() {
        return;
    }
    let place = |field: String| Place {
        file: file.to_owned(),
        field: Some(field),
        ..Place::default()
    };
    let mut error = |field: String, message: String| {
        problems.push(Problem {
            severity: Severity::Error,
            place: place(field),
            message,
        });
    };
    if defs.len() > MAX_PER_TOOLKIT {
        error(
            format!("toolkit `{toolkit}` resources"),
            format!("{} resources; at most {MAX_PER_TOOLKIT} per toolkit", defs.len()),
        );
        return;
    }
    let Some(kind) = backend.and_then(|b| b.get("kind")).and_then(Value::as_str) else {
        error(
            format!("toolkit `{toolkit}` resources"),
            "federated resources are read through the toolkit's `backend` (with its `kind`, e.g. `upstream`); give the toolkit one".to_owned(),
        );
        return;
    };
    let Some(factory) = factories.get(kind) else {
        error(
            format!("toolkit `{toolkit}` backend"),
            format!("unknown backend kind `{kind}`"),
        );
        return;
    };
    let mut seen = std::collections::BTreeSet::new();
    for (i, def) in defs.into_iter().enumerate() {
        let field = format!("toolkit `{toolkit}` resources[{i}] `{}`", def.name);
        let upstream = match (def.resource, def.resource_template) {
            (Some(uri), None) => Address::Uri(uri),
            (None, Some(template)) if !resource::template_variables(&template).is_empty() => {
                Address::Template(template)
            }
            (None, Some(template)) => {
                error(
                    field,
                    format!("`{template}` is not a URI template with `{{variable}}`s (RFC 6570 level 1)"),
                );
                continue;
            }
            _ => {
                error(
                    field,
                    "give exactly one of `resource` (the upstream's URI) and `resource_template`".to_owned(),
                );
                continue;
            }
        };
        let (key, written) = match &upstream {
            Address::Uri(u) => ("resource", u.clone()),
            Address::Template(t) => ("resource_template", t.clone()),
        };
        if !written.contains(':') || written.chars().any(char::is_control) {
            error(field, format!("`{written}` is not a URI with a scheme"));
            continue;
        }
        if !seen.insert(written.clone()) {
            error(field, format!("`{written}` is imported twice; keep one"));
            continue;
        }
        let mut config: Map<String, Value> = backend
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "kind")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        config.insert(key.to_owned(), Value::String(written.clone()));
        config.insert("pin".to_owned(), Value::String(def.pin.clone()));
        let reader = match factory.resource(&config) {
            Ok(reader) => reader,
            Err(messages) => {
                for message in messages {
                    error(field.clone(), message);
                }
                continue;
            }
        };
        let served = format!("{PREFIX}{toolkit}/{written}");
        out.push(Federated {
            address: match upstream {
                Address::Uri(_) => Address::Uri(served),
                Address::Template(_) => Address::Template(served),
            },
            upstream,
            toolkit: toolkit.to_owned(),
            scopes: scopes.to_vec(),
            name: def.name,
            title: def.title,
            description: def.description,
            mime_type: def.mime_type,
            pin: def.pin,
            reader,
        });
    }
}
