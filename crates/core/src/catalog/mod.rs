//! The tool catalog: tools, their append-only version histories, and the queries adapters run.
//!
//! A [`Catalog`] is immutable once built. [`Catalog::load`] parses YAML/JSON sources, checks every
//! rule of docs/protocols.md §1 (names, semver order, backward compatibility) and compiles each
//! version's JSON Schemas once, so that a call only runs the compiled validators.

pub mod agent;
mod compat;
pub mod federated;
mod file;
mod load;
pub mod lock;
mod parameter;
mod problem;
pub mod prompt;
pub mod resource;
mod schema;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use crate::backend::Backend;
use crate::validate::Validators;

pub use agent::{Agent, AgentTool, Finding, Named};
pub use load::{Loader, Source};
pub use parameter::{EnumValue, InputType, MediaKind, Output, OutputType, Parameter, has_wire_values, is_enum_name};

/// Every way `new` breaks callers written against `old` under the catalog's rules (N-ACT §5.4);
/// empty when `new` may follow `old` as the next version of the same tool.
pub fn breaking_changes(old: &Version, new: &Version) -> Vec<String> {
    compat::check(old, new)
}

/// What `new` changes from `old` that does not break callers (added inputs and outputs,
/// loosened constraints, reworded descriptions); with [`breaking_changes`], the whole diff.
pub fn changes(old: &Version, new: &Version) -> Vec<String> {
    compat::changes(old, new)
}
pub use problem::{Place, Problem, Severity};
/// The JSON Schemas (2020-12) built from typed parameters, for executors that check calls locally.
pub use schema::{Spelling, input_property, input_schema, output_schema};

/// The default maximum of an `int` input that declares none (N-ACT §6.1: "The default is 65535").
pub const DEFAULT_INT_MAX: i64 = 65535;

/// The namespace of the UUIDv5 tool ids derived from `toolkit.name` (docs/protocols.md §1), so that
/// every replica and every restart gives a tool the same id.
pub const TOOL_ID_NAMESPACE: Uuid = Uuid::from_u128(0x6f1c_5a0e_3b7d_5e2a_9c4f_0d8b_1e6a_7c35);

/// A loaded, validated set of tools, sorted by name.
pub struct Catalog {
    tools: Vec<Arc<Tool>>,
    by_name: HashMap<String, usize>,
    by_id: HashMap<Uuid, usize>,
    by_tag: HashMap<String, Vec<usize>>,
    toolkits: BTreeMap<String, Option<String>>,
    warnings: Vec<Problem>,
    /// The tools whose backends may be withdrawn while loaded, by position.
    watched: Vec<usize>,
    /// The agents designed over this catalog, by name (`agents/*.md`).
    agents: Vec<Arc<Agent>>,
    /// The documents the catalog files declare (`resources:`), in file order.
    resources: Arc<Vec<resource::Resource>>,
    /// The tools' search index, by position (issue #42).
    index: crate::search::Index,
    /// The resources toolkits import from their upstreams, in file order.
    federated: Arc<Vec<federated::Federated>>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// One tool: its identity, grouping and whole version history.
#[derive(Debug)]
pub struct Tool {
    /// Stable id (explicit in the catalog, or UUIDv5 of `toolkit.name`).
    pub id: Uuid,
    /// The toolkit that groups this tool.
    pub toolkit: String,
    /// The tool's name, unique on the server.
    pub name: String,
    /// A human-readable title, if the catalog gives one.
    pub title: Option<String>,
    /// An optional image URL (N-ACT `img`).
    pub img: Option<String>,
    /// Tags for filtering; the toolkit is not repeated here (see [`Tool::tags_with_toolkit`]).
    pub tags: Vec<String>,
    /// Behaviour hints.
    pub annotations: Annotations,
    /// Whether the tool may or must run as a task (MCP's tasks extension; catalog key
    /// `execution: { task: optional | required }`).
    pub task: TaskSupport,
    /// How long a call may hold its caller's connection before the server lets go of it, the
    /// call running on, where the caller can pick up the rest later (an MCP session's stream,
    /// resumed with `Last-Event-ID`: SEP-1699); `None`: until it is answered. Catalog key
    /// `execution: { release_after_ms: N }`.
    pub release_after: Option<std::time::Duration>,
    /// Whether, run as a task, a call asks its first questions before it becomes one (catalog
    /// key `execution: { ask_first: true }`; MCP 2026-07-28's input-required results).
    pub task_asks_first: bool,
    /// Listed by an MCP endpoint that discloses by search, beside `search_tools`
    /// (`always_visible: true`; issue #42.3).
    pub always_visible: bool,
    /// What a caller must send beside the input.
    pub requirements: Requirements,
    /// Scopes a caller must hold to see or call the tool (toolkit's, tool's and its tags').
    pub scopes: Vec<String>,
    /// How to phrase backend failures, by failure code.
    pub errors: BTreeMap<String, ErrorPhrase>,
    /// Every version in history order; `versions[i].number == i + 1`.
    pub versions: Vec<Version>,
    /// The file the tool was defined in.
    pub source: String,
    latest: usize,
    /// Whether a version's backend has an upstream, which may withdraw it ([`Backend::upstream`]).
    watched: bool,
    /// The tool's `toolhost_backend_duration_seconds` handle, made on its first call: the
    /// macro builds a key and looks it up in the registry on every use (issue #18).
    backend_duration: std::sync::OnceLock<metrics::Histogram>,
}

impl Tool {
    /// The tool's OTC name, `{toolkit}_{name}` (docs/protocols.md §1): what OTC clients call
    /// and pin it by.
    pub fn otc_name(&self) -> String {
        format!("{}_{}", self.toolkit, self.name)
    }

    /// The handle the engine records this tool's backend durations with.
    pub(crate) fn backend_duration(&self) -> &metrics::Histogram {
        self.backend_duration
            .get_or_init(|| metrics::histogram!("toolhost_backend_duration_seconds", "tool" => self.name.clone()))
    }

    /// The newest version that is not retired.
    pub fn latest(&self) -> &Version {
        &self.versions[self.latest]
    }

    /// `listed`'s output schema, with only the outputs every served version returns in
    /// `required`: what a protocol that lists one version (MCP, WoA) advertises, so that the
    /// result of a call pinned to an older version still validates against it (WoA §5.2;
    /// issue #22.7).
    pub fn output_schema_for_any_version(&self, listed: &Version) -> Value {
        let mut schema = listed.output_schema().as_object().cloned().unwrap_or_default();
        let always: Vec<Value> = listed
            .outputs
            .iter()
            .filter(|o| {
                self.served_versions()
                    .all(|v| v.outputs.iter().any(|x| x.name == o.name && x.required))
            })
            .map(|o| Value::from(o.name.clone()))
            .collect();
        schema.insert("required".into(), Value::Array(always));
        Value::Object(schema)
    }

    /// The versions that are served (not retired), newest first.
    pub fn served_versions(&self) -> impl Iterator<Item = &Version> {
        self.versions.iter().rev().filter(|v| !v.retired)
    }

    /// Resolves a version selector to a served version.
    pub fn resolve(&self, selector: &VersionSelector) -> Option<&Version> {
        let version = match selector {
            VersionSelector::Latest => return Some(self.latest()),
            VersionSelector::Number(n) => self.versions.get(usize::try_from(*n).ok()?.checked_sub(1)?)?,
            VersionSelector::Semver(s) => self.versions.iter().find(|v| &v.semver == s)?,
        };
        (!version.retired).then_some(version)
    }

    /// Whether every served version's backend is withdrawn (see [`Backend::withdrawn`]): the
    /// tool is then left out of every listing, and its calls fail with the backend's reason.
    pub fn withdrawn(&self) -> bool {
        self.watched && self.served_versions().all(|v| v.backend.withdrawn().is_some())
    }

    /// Whether `access` may see the tool and it is not withdrawn: what every listing shows.
    pub fn listed_for(&self, access: &Access) -> bool {
        access.allows(self) && !self.withdrawn()
    }

    /// The toolkit followed by the tool's own tags: what N-ACT lists and `tag` filters on.
    pub fn tags_with_toolkit(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.toolkit.as_str()).chain(self.tags.iter().map(String::as_str))
    }
}

/// How an MCP endpoint shows its tools (issue #42.3): config `mcp_disclosure`, an agent's
/// `disclosure:`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Disclosure {
    /// `tools/list` lists every tool the caller may see.
    #[default]
    All,
    /// `tools/list` lists a `search_tools` tool and the tools marked `always_visible`; the
    /// others are found by searching.
    Search,
}

/// Behaviour hints (MCP tool annotations); `None` means the catalog does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    pub destructive: Option<bool>,
    /// Calling twice with the same input has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the Internet) rather than a closed domain.
    pub open_world: Option<bool>,
}

/// Whether a tool runs as a task: started, then polled for its state and result, instead of
/// answered within the request (MCP's tasks extension, SEP-2663; docs/tasks.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Always answered within the request (the default).
    #[default]
    Never,
    /// A task when the client supports tasks, else answered within the request.
    Optional,
    /// Only as a task: a client that does not support tasks is refused.
    Required,
}

impl TaskSupport {
    /// Whether a call of the tool may become a task.
    pub fn allowed(self) -> bool {
        !matches!(self, Self::Never)
    }
}

/// What a caller must send beside the input (OTC `requirements`): secrets, authorization
/// tokens and the end user's id. Secrets the server holds itself are not requirements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Ids of the secrets the call must carry.
    pub secrets: Vec<String>,
    /// Authorization providers whose token the call must carry.
    pub authorization: Vec<Authorization>,
    /// Whether the call must say which user it is for.
    pub user_id: bool,
}

impl Requirements {
    /// Whether the tool needs nothing beside its input.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty() && self.authorization.is_empty() && !self.user_id
    }
}

/// One authorization requirement: a provider and the OAuth 2.0 scopes the token needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    /// The provider's id, e.g. `google`.
    pub id: String,
    /// Scopes the token must grant.
    pub scopes: Vec<String>,
}

/// How the catalog phrases one kind of backend failure: each field given overrides the
/// backend's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorPhrase {
    /// The message for the user and the model.
    pub message: Option<String>,
    /// Whether the failure is worth retrying.
    pub retryable: Option<bool>,
    /// How long to wait before retrying.
    pub retry_after: Option<Duration>,
    /// Text for the model's prompt.
    pub prompt: Option<String>,
}

/// What a caller may see and call: everything, or the tools whose scopes it holds. A tool the
/// caller may not see is, to that caller, a tool that does not exist (STYLE.md habit 4).
#[derive(Debug, Clone, Default)]
pub enum Access {
    /// No access control: every tool.
    #[default]
    All,
    /// The caller holds these scopes.
    Scopes(Arc<BTreeSet<String>>),
}

impl Access {
    /// Whether the caller may see and call `tool`.
    pub fn allows(&self, tool: &Tool) -> bool {
        match self {
            Self::All => true,
            Self::Scopes(held) => tool.scopes.iter().all(|s| held.contains(s)),
        }
    }
}

/// Which version of a tool a call wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionSelector {
    /// The newest served version.
    Latest,
    /// N-ACT's integer: the 1-based position in the tool's history.
    Number(u32),
    /// An exact semantic version.
    Semver(semver::Version),
}

impl VersionSelector {
    /// A version pin as every protocol takes it (OTC's `@x` / `@x.y.z`, MCP's `_meta`, WoA's
    /// `version`): `x` is exactly `x.0.0`, `x.y.z` exactly that version; digits only, no leading
    /// zeros, no pre-release. The error says what a version looks like.
    pub fn pin(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split('.').collect();
        let digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        let leading_zero = |p: &&str| p.len() > 1 && p.starts_with('0');
        if !matches!(parts.len(), 1 | 3) || !parts.iter().all(digits) {
            return Err(format!(
                "`{text}` is not a version; write a major version such as `1` (meaning 1.0.0) or a full one such as `1.2.0`"
            ));
        }
        if parts.iter().any(leading_zero) {
            return Err(format!(
                "`{text}` is not a version: numbers in a version have no leading zeros; write e.g. `1.0.0`"
            ));
        }
        let full = if parts.len() == 1 {
            format!("{text}.0.0")
        } else {
            text.to_owned()
        };
        semver::Version::parse(&full)
            .map(Self::Semver)
            .map_err(|_| format!("`{text}` is not a version: a number is too large; write e.g. `1.0.0`"))
    }
}

impl fmt::Display for VersionSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Latest => f.write_str("latest"),
            Self::Number(n) => write!(f, "{n}"),
            Self::Semver(v) => write!(f, "{v}"),
        }
    }
}

/// One version of a tool: its signature, compiled schemas and backend.
#[derive(Clone)]
pub struct Version {
    /// N-ACT version number: 1-based position in the tool's history.
    pub number: u32,
    /// The semantic version.
    pub semver: semver::Version,
    /// A retired version keeps its number but is not served.
    pub retired: bool,
    /// The description of the tool at this version.
    pub description: String,
    /// Inputs the call gives, in declaration order: what every agent-facing schema shows.
    pub inputs: Vec<Parameter>,
    /// Inputs the human types on the confirmation page (`source: human`, CHEQ's Flow B, issue
    /// #40.4): in no agent-facing schema, refused in a call, sent to the backend like any input.
    pub human_inputs: Vec<Parameter>,
    /// Outputs in declaration order.
    pub outputs: Vec<Output>,
    /// JSON Schema keywords over the input object as a whole (`$defs`, `allOf`, `if`/`then`/
    /// `else`, …), as the catalog's `input_rules` writes them; empty when none.
    pub input_rules: serde_json::Map<String, Value>,
    /// [`Version::input_schema`], built on first use.
    input_schema: OnceLock<Arc<Value>>,
    /// [`Version::human_schema`], built on first use.
    human_schema: OnceLock<Arc<Value>>,
    /// [`Version::output_schema`], built on first use.
    output_schema: OnceLock<Arc<Value>>,
    /// How long the backend may run.
    pub timeout: Duration,
    /// What runs this version.
    pub backend: Arc<dyn Backend>,
    /// Whether a human must confirm each call first, and who may (issue #40).
    pub confirmation: Option<Arc<crate::confirm::Confirmation>>,
    pub(crate) validators: Validators,
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Version")
            .field("number", &self.number)
            .field("semver", &self.semver)
            .field("retired", &self.retired)
            .finish_non_exhaustive()
    }
}

impl Version {
    /// The JSON Schema 2020-12 of the input object, values as the API spells them (no
    /// `$schema` key; adapters add it). Built from the typed inputs on first use and kept: a
    /// large catalog whose clients list one protocol, or call few tools, never holds most of
    /// them (issue #42.1).
    pub fn input_schema(&self) -> &Arc<Value> {
        self.input_schema
            .get_or_init(|| Arc::new(input_schema(&self.inputs, &self.input_rules, Spelling::Wire)))
    }

    /// The JSON Schema 2020-12 of the object of [`Version::human_inputs`], built on first use
    /// as [`Version::input_schema`] is.
    pub fn human_schema(&self) -> &Arc<Value> {
        self.human_schema.get_or_init(|| {
            Arc::new(input_schema(
                &self.human_inputs,
                &serde_json::Map::new(),
                Spelling::Wire,
            ))
        })
    }

    /// The JSON Schema 2020-12 of the output object, built on first use as
    /// [`Version::input_schema`] is.
    pub fn output_schema(&self) -> &Arc<Value> {
        self.output_schema
            .get_or_init(|| Arc::new(output_schema(&self.outputs, Spelling::Wire)))
    }

    /// The input parameter with this name.
    pub fn input(&self, name: &str) -> Option<&Parameter> {
        self.inputs.iter().find(|p| p.name == name)
    }

    /// Checks what a human typed on the confirmation page against [`Version::human_schema`]:
    /// one error per parameter.
    pub fn check_human(&self, values: &serde_json::Map<String, Value>) -> Result<(), Vec<crate::ParameterError>> {
        crate::validate::check(
            self.validators.human(self.human_schema()),
            "the form",
            &self.human_inputs,
            true,
            &Value::Object(values.clone()),
        )
    }
}

impl Tool {
    /// Whether a call needs what only OTC's `context` carries (`requirements.secrets` or
    /// `requirements.authorization`), unless the operator maps it to the caller (`[[auth.callers]]`).
    pub fn needs_call_context(&self) -> bool {
        !self.requirements.secrets.is_empty() || !self.requirements.authorization.is_empty()
    }

    /// Whether a call must bring anything beside its input (secrets, tokens, a user id).
    pub fn has_requirements(&self) -> bool {
        self.needs_call_context() || self.requirements.user_id
    }
}

/// Filters and position for a listing page.
#[derive(Debug, Clone, Default)]
pub struct ListQuery<'a> {
    /// Every one of these tags must be on the tool (the toolkit counts as a tag).
    pub tags: &'a [String],
    /// Start after the tool with this name (keyset pagination).
    pub after: Option<&'a str>,
    /// At most this many tools.
    pub limit: usize,
    /// Only tools this caller may see.
    pub access: Access,
}

/// One page of a listing.
#[derive(Debug)]
pub struct Page<'a> {
    /// The tools on this page, in name order.
    pub tools: Vec<&'a Arc<Tool>>,
    /// Whether more tools match after the last one on this page.
    pub more: bool,
}

impl Catalog {
    /// Every served tool, sorted by name.
    pub fn tools(&self) -> &[Arc<Tool>] {
        &self.tools
    }

    /// The network services the catalog's backends call (see [`Backend::dependencies`]), each
    /// once, sorted; retired versions included, since they are still served.
    pub fn dependencies(&self) -> Vec<String> {
        let mut urls: Vec<String> = self
            .tools
            .iter()
            .flat_map(|t| t.versions.iter())
            .flat_map(|v| v.backend.dependencies())
            .collect();
        urls.sort();
        urls.dedup();
        urls
    }

    /// Every toolkit with its description, if the catalog gives one.
    pub fn toolkits(&self) -> &BTreeMap<String, Option<String>> {
        &self.toolkits
    }

    /// Whether any tool is withdrawn now: listings pre-rendered for the whole catalog are then
    /// filtered. Asks only the tools whose backends may be withdrawn.
    pub fn any_withdrawn(&self) -> bool {
        self.watched.iter().any(|&i| self.tools[i].withdrawn())
    }

    /// Every served version whose backend is withdrawn now, with the reason: what `/readyz`
    /// reports to operators.
    pub fn withdrawn(&self) -> Vec<(&Tool, &Version, &'static str)> {
        self.watched
            .iter()
            .map(|&i| &self.tools[i])
            .flat_map(|t| {
                t.served_versions()
                    .filter_map(move |v| Some((&**t, v, v.backend.withdrawn()?)))
            })
            .collect()
    }

    /// Every tool server the catalog's backends serve from ([`Backend::upstream`]), once each,
    /// sorted, with whether it answered when last asked.
    pub fn upstreams(&self) -> Vec<(String, bool)> {
        let mut found: BTreeMap<String, bool> = BTreeMap::new();
        for (name, up) in self
            .watched
            .iter()
            .flat_map(|&i| self.tools[i].versions.iter())
            .filter_map(|v| v.backend.upstream())
        {
            *found.entry(name).or_insert(true) &= up;
        }
        found.into_iter().collect()
    }

    /// Problems that do not stop the catalog from loading (style advice, retired tools).
    pub fn warnings(&self) -> &[Problem] {
        &self.warnings
    }

    /// Finds a tool by name or UUID, if the caller may see it.
    pub fn find_for(&self, name_or_id: &str, access: &Access) -> Option<&Arc<Tool>> {
        self.find(name_or_id).filter(|t| access.allows(t))
    }

    /// Finds a tool by name, or by its UUID in any textual form.
    pub fn find(&self, name_or_id: &str) -> Option<&Arc<Tool>> {
        if let Some(&i) = self.by_name.get(name_or_id) {
            return Some(&self.tools[i]);
        }
        let id = Uuid::try_parse(name_or_id).ok()?;
        self.by_id.get(&id).map(|&i| &self.tools[i])
    }

    /// Lists one page of tools matching `query`.
    ///
    /// Costs O(log n) to find the start plus the tools inspected to fill the page: those are
    /// only the page's own tools (tag filters walk a per-tag index). Text is [`Catalog::search`].
    pub fn list(&self, query: &ListQuery<'_>) -> Page<'_> {
        let start = match query.after {
            Some(after) => self.tools.partition_point(|t| t.name.as_str() <= after),
            None => 0,
        };
        let matches = |tool: &Tool| {
            tool.listed_for(&query.access) && query.tags.iter().all(|tag| tool.tags_with_toolkit().any(|t| t == tag))
        };
        let mut tools = Vec::with_capacity(query.limit.min(self.tools.len()));
        let mut more = false;
        // Walk the smallest candidate set: the index of the first tag, or everything.
        let mut candidates: Box<dyn Iterator<Item = usize>> = match query.tags.first() {
            Some(tag) => {
                let positions = self.by_tag.get(tag).map(Vec::as_slice).unwrap_or_default();
                let from = positions.partition_point(|&p| p < start);
                Box::new(positions[from..].iter().copied())
            }
            None => Box::new(start..self.tools.len()),
        };
        for i in candidates.by_ref() {
            let tool = &self.tools[i];
            if !matches(tool) {
                continue;
            }
            if tools.len() == query.limit {
                more = true;
                break;
            }
            tools.push(tool);
        }
        Page { tools, more }
    }

    pub(crate) fn from_tools(
        mut tools: Vec<Arc<Tool>>,
        toolkits: BTreeMap<String, Option<String>>,
        warnings: Vec<Problem>,
    ) -> Self {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut by_id = HashMap::with_capacity(tools.len());
        let mut by_tag: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            by_name.insert(tool.name.clone(), i);
            by_id.insert(tool.id, i);
            for tag in tool.tags_with_toolkit() {
                let positions = by_tag.entry(tag.to_owned()).or_default();
                if positions.last() != Some(&i) {
                    positions.push(i);
                }
            }
        }
        let watched = (0..tools.len()).filter(|&i| tools[i].watched).collect();
        let index = crate::search::Index::of_tools(&tools);
        Self {
            index,
            tools,
            by_name,
            by_id,
            by_tag,
            watched,
            toolkits,
            warnings,
            agents: Vec::new(),
            resources: Arc::default(),
            federated: Arc::default(),
        }
    }

    /// The tools that match `query` and that `keep` accepts, most relevant first, with their
    /// scores; at most `limit` (see [`crate::search`]).
    pub fn search(&self, query: &str, limit: usize, keep: impl Fn(&Tool) -> bool) -> Vec<(&Arc<Tool>, f32)> {
        self.index
            .search(query, limit, |i| keep(&self.tools[i]))
            .into_iter()
            .map(|(i, score)| (&self.tools[i], score))
            .collect()
    }

    /// The pairs of tools whose names and descriptions the search cannot tell apart, in name
    /// order (`toolhost check` warns of them).
    pub fn alike(&self) -> Vec<(&Arc<Tool>, &Arc<Tool>)> {
        crate::search::alike(&self.index, &self.tools)
            .into_iter()
            .map(|(a, b)| (&self.tools[a], &self.tools[b]))
            .collect()
    }

    /// The bytes the search index holds.
    pub fn search_index_bytes(&self) -> usize {
        self.index.heap_bytes()
    }

    /// The agents designed over this catalog, sorted by name.
    pub fn agents(&self) -> &[Arc<Agent>] {
        &self.agents
    }

    /// The resources the catalog files declare, in file order.
    pub fn resources(&self) -> &Arc<Vec<resource::Resource>> {
        &self.resources
    }

    /// The resources toolkits import from their upstreams, withdrawn ones included.
    pub fn federated(&self) -> &Arc<Vec<federated::Federated>> {
        &self.federated
    }

    /// The federated resource served at `uri` (a fixed URI first, then the first template that
    /// matches), with the upstream's URI it stands for; `None` for a URI not imported.
    pub fn find_federated(&self, uri: &str) -> Option<(&federated::Federated, String)> {
        let fixed = self
            .federated
            .iter()
            .filter(|r| matches!(r.address, resource::Address::Uri(_)));
        let templates = self
            .federated
            .iter()
            .filter(|r| matches!(r.address, resource::Address::Template(_)));
        fixed.chain(templates).find_map(|r| r.upstream_uri(uri).map(|u| (r, u)))
    }

    /// The declared resource served at `uri` (a fixed URI first, then the first template that
    /// matches), with its content there.
    pub fn read_resource(&self, uri: &str) -> Option<(&resource::Resource, resource::Content)> {
        let fixed = self
            .resources
            .iter()
            .filter(|r| matches!(r.address, resource::Address::Uri(_)));
        let templates = self
            .resources
            .iter()
            .filter(|r| matches!(r.address, resource::Address::Template(_)));
        fixed.chain(templates).find_map(|r| r.read(uri).map(|c| (r, c)))
    }

    /// The agent with this name.
    pub fn agent(&self, name: &str) -> Option<&Arc<Agent>> {
        self.agents
            .binary_search_by(|a| a.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.agents[i])
    }

    /// A catalog of only `picked` tools (an agent's): a tool with a version index is served
    /// at that version alone (later versions are not there, earlier ones are retired), the
    /// others as they are, following their latest.
    /// A tool marked to confirm is served with every version needing confirmation.
    pub(crate) fn restricted(&self, picked: &[(Arc<Tool>, Option<usize>, bool)]) -> Self {
        let tools = picked
            .iter()
            .map(|(tool, pin, confirm)| match (pin, confirm) {
                (None, false) => Arc::clone(tool),
                (pin, confirm) => Arc::new(tool.copy(*pin, *confirm)),
            })
            .collect::<Vec<_>>();
        let toolkits = self
            .toolkits
            .iter()
            .filter(|(name, _)| tools.iter().any(|t| &t.toolkit == *name))
            .map(|(name, description)| (name.clone(), description.clone()))
            .collect();
        let mut own = Self::from_tools(tools, toolkits, Vec::new());
        // The declared documents are not tools: an agent's prompt may attach any of them.
        own.resources = Arc::clone(&self.resources);
        own.federated = Arc::clone(&self.federated);
        own
    }
}

impl Tool {
    /// This tool as an agent sees it. Pinned to version `index`: that version is its latest and
    /// only served one; the earlier ones keep their numbers, retired; later ones are not there.
    /// With `confirm`, every version needs a human's confirmation (the agent's `confirmation`).
    fn copy(&self, pin: Option<usize>, confirm: bool) -> Self {
        let index = pin.unwrap_or(self.latest);
        let last = pin.unwrap_or(self.versions.len() - 1);
        let versions = self.versions[..=last]
            .iter()
            .enumerate()
            .map(|(i, v)| Version {
                retired: v.retired || pin.is_some_and(|p| i != p),
                confirmation: match (&v.confirmation, confirm) {
                    (None, true) => Some(Arc::new(crate::confirm::Confirmation::new(Vec::new()))),
                    (policy, _) => policy.clone(),
                },
                ..v.clone()
            })
            .collect();
        Self {
            id: self.id,
            toolkit: self.toolkit.clone(),
            name: self.name.clone(),
            title: self.title.clone(),
            img: self.img.clone(),
            tags: self.tags.clone(),
            annotations: self.annotations,
            task: self.task,
            release_after: self.release_after,
            task_asks_first: self.task_asks_first,
            always_visible: self.always_visible,
            requirements: self.requirements.clone(),
            scopes: self.scopes.clone(),
            errors: self.errors.clone(),
            versions,
            source: self.source.clone(),
            latest: index,
            watched: self.watched,
            backend_duration: std::sync::OnceLock::new(),
        }
    }
}
