//! Loading: parse catalog sources, check every rule, compile schemas and backends once.
//!
//! The loader collects every problem it finds instead of stopping at the first, so `toolhost
//! check` can print them all at once.

mod checks;
mod parameters;
mod source;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use super::file::{ToolDef, VersionDef};
use super::problem::{Place, Severity};
use super::schema::Spelling;
use super::{
    Annotations, Authorization, Catalog, ErrorPhrase, InputType, Output, OutputType, Parameter, Problem, Requirements,
    TOOL_ID_NAMESPACE, Tool, Version, compat, schema,
};
use crate::backend::{BackendFactory, Signature};
use crate::validate::{self, Validators};
use checks::{Context, MAX_NAME, at, check_description, check_name, check_unique};
pub use source::Source;
use source::parse_each;

/// The backend timeout of a version that names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Builds catalogs: knows the backend kinds and checks every rule.
pub struct Loader {
    backends: HashMap<String, Arc<dyn BackendFactory>>,
    tag_scopes: BTreeMap<String, Vec<String>>,
    default_timeout: Duration,
    /// Every tool that is not read-only needs confirmation (`require_confirmation`).
    confirm_actions: bool,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut kinds: Vec<&String> = self.backends.keys().collect();
        kinds.sort();
        f.debug_struct("Loader").field("backends", &kinds).finish()
    }
}

impl Default for Loader {
    /// A loader that knows the built-in `native` and `static` backends.
    fn default() -> Self {
        Self::empty()
            .with_backend("native", Arc::new(crate::native::Functions::builtin()))
            .with_backend("static", Arc::new(crate::fixed::Fixed))
    }
}

impl Loader {
    /// A loader with no backend kinds at all.
    pub fn empty() -> Self {
        Self {
            backends: HashMap::new(),
            tag_scopes: BTreeMap::new(),
            default_timeout: DEFAULT_TIMEOUT,
            confirm_actions: false,
        }
    }

    /// Requires a human's confirmation for every tool that is not read-only (server config
    /// `require_confirmation`), beside the tools whose catalog asks for it (issue #40).
    pub fn with_confirmation_for_actions(mut self, on: bool) -> Self {
        self.confirm_actions = on;
        self
    }

    /// Registers (or replaces) the factory for a backend kind.
    pub fn with_backend(mut self, kind: &str, factory: Arc<dyn BackendFactory>) -> Self {
        self.backends.insert(kind.to_owned(), factory);
        self
    }

    /// Requires scopes of every tool carrying a tag (server config `tag_scopes`).
    pub fn with_tag_scopes(mut self, tag_scopes: BTreeMap<String, Vec<String>>) -> Self {
        self.tag_scopes = tag_scopes;
        self
    }

    /// Sets the backend timeout of versions that declare none.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Loads a catalog from sources, or returns every error found (warnings included).
    pub fn load(&self, sources: &[Source]) -> Result<Catalog, Vec<Problem>> {
        self.load_sources(sources.iter().map(Cow::Borrowed).collect())
    }

    /// Loads a catalog from sources it takes, as [`Loader::load`] does, letting go of each
    /// file's text once it is parsed: what a server loading a large catalog calls, so that the
    /// catalog's text is not held whole beside the catalog built from it (issue #42.1).
    pub fn load_owned(&self, sources: Vec<Source>) -> Result<Catalog, Vec<Problem>> {
        self.load_sources(sources.into_iter().map(Cow::Owned).collect())
    }

    fn load_sources(&self, sources: Vec<Cow<'_, Source>>) -> Result<Catalog, Vec<Problem>> {
        let mut ctx = Context {
            problems: Vec::new(),
            names: HashMap::new(),
            ids: HashMap::new(),
            otc_names: HashMap::new(),
        };
        let mut tools = Vec::new();
        let mut toolkits: BTreeMap<String, Option<String>> = BTreeMap::new();
        let mut resources = Vec::new();
        let mut resource_uris = std::collections::BTreeSet::new();
        let mut federated = Vec::new();
        // Agent files (`agents/*.md`) are read after the tools, against them.
        let (agents, sources): (Vec<Cow<'_, Source>>, Vec<Cow<'_, Source>>) =
            sources.into_iter().partition(|s| s.is_agent());
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        parse_each(sources, |i, file, problems| {
            ctx.problems.extend(problems);
            let Some(file) = file else {
                return;
            };
            let source = &names[i];
            super::resource::load(
                source,
                file.resources,
                &mut resource_uris,
                &mut resources,
                &mut ctx.problems,
            );
            for mut toolkit in file.toolkits {
                let place = Place {
                    file: source.clone(),
                    field: Some(format!("toolkit `{}`", toolkit.name)),
                    ..Place::default()
                };
                check_name(&toolkit.name, "toolkit name", &place, &mut ctx.problems);
                if toolkit.tags.iter().any(|t| t.trim().is_empty()) {
                    ctx.error(&at(&place, "tags"), "a tag is empty; remove it".to_owned());
                }
                let description = toolkits.entry(toolkit.name.clone()).or_default();
                if let Some(text) = toolkit.description.take() {
                    check_description(&text, &place, &mut ctx.problems);
                    description.get_or_insert(text);
                }
                super::federated::load(source, &mut toolkit, &self.backends, &mut federated, &mut ctx.problems);
                for mut def in toolkit.tools {
                    inherit_backends(&mut def);
                    if let Some(defaults) = &toolkit.backend {
                        apply_backend_defaults(defaults, &mut def);
                    }
                    if let Some(tool) = self.tool(source, &toolkit.name, &toolkit.tags, &toolkit.scopes, def, &mut ctx)
                    {
                        tools.push(Arc::new(tool));
                    }
                }
            }
        });
        check_calls(&tools, &mut ctx);
        if ctx.problems.iter().any(|p| p.severity == Severity::Error) {
            ctx.problems.sort_by_key(|p| std::cmp::Reverse(p.severity));
            return Err(ctx.problems);
        }
        let mut catalog = Catalog::from_tools(tools, toolkits, Vec::new());
        catalog.resources = Arc::new(resources);
        catalog.federated = Arc::new(federated);
        let agents: Vec<&Source> = agents.iter().map(|s| &**s).collect();
        catalog.agents = super::agent::load(&agents, &catalog, &mut ctx.problems);
        if ctx.problems.iter().any(|p| p.severity == Severity::Error) {
            ctx.problems.sort_by_key(|p| std::cmp::Reverse(p.severity));
            return Err(ctx.problems);
        }
        catalog.warnings = ctx.problems;
        Ok(catalog)
    }

    fn tool(
        &self,
        file: &str,
        toolkit: &str,
        toolkit_tags: &[String],
        toolkit_scopes: &[String],
        def: ToolDef,
        ctx: &mut Context,
    ) -> Option<Tool> {
        let place = Place {
            file: file.to_owned(),
            tool: Some(def.name.clone()),
            ..Place::default()
        };
        let errors_before = ctx.errors();
        check_name(&def.name, "tool name", &place, &mut ctx.problems);
        if !def
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            ctx.warn(&place, format!("`{}` is not snake_case; N-ACT §6.1 recommends snake_case tool names such as `lookup_weather_by_city`", def.name));
        }
        let otc_name = format!("{toolkit}_{}", def.name);
        if otc_name.len() > MAX_NAME {
            ctx.error(&place, format!("the OTC name `{otc_name}` is {} characters; toolkit and tool name together may have at most {}, so shorten one of them", otc_name.len(), MAX_NAME - 1));
        }
        // Two tools one name to a model (issue #31.6): `Units.convert_length` and
        // `Units_convert.length` are both `Units_convert_length` on OTC.
        let full = format!("{toolkit}.{}", def.name);
        // The same toolkit and name twice is reported once, as a duplicate name (below).
        if let Some(other) = ctx.otc_names.insert(otc_name.clone(), full.clone())
            && other != full
        {
            ctx.error(&place, format!("its OTC name `{otc_name}` ({{toolkit}}_{{name}}) is also that of tool `{other}`, so a model would see one tool for two; rename the tool or its toolkit"));
        }
        check_description(&def.description, &at(&place, "description"), &mut ctx.problems);
        if let Some(first) = ctx.names.insert(def.name.clone(), file.to_owned()) {
            ctx.error(&place, format!("the name is already used by a tool in {first}; tool names must be unique on the server (N-ACT §6.1)"));
        }
        let id = match &def.id {
            Some(text) => match Uuid::try_parse(text) {
                Ok(id) if !id.is_nil() => Some(id),
                Ok(_) => {
                    ctx.error(
                        &at(&place, "id"),
                        "the nil UUID is not an id; write a real UUID, or leave `id` out to derive one".to_owned(),
                    );
                    None
                }
                Err(_) => {
                    ctx.error(&at(&place, "id"), format!("`{text}` is not a UUID; write one like 0479a45d-ad0a-49d4-94db-75edf00d2ca4, or leave `id` out to derive one"));
                    None
                }
            },
            None => Some(Uuid::new_v5(
                &TOOL_ID_NAMESPACE,
                format!("{toolkit}.{}", def.name).as_bytes(),
            )),
        };
        if let Some(id) = id
            && let Some(other) = ctx.ids.insert(id, def.name.clone())
        {
            ctx.error(
                &at(&place, "id"),
                format!("the id {id} is already the id of tool `{other}`; every tool needs its own"),
            );
        }
        if def.timeout_ms == Some(0) {
            ctx.error(
                &at(&place, "timeout_ms"),
                "a timeout of 0 ms lets no call finish; give a positive number of milliseconds".to_owned(),
            );
        }
        let mut tags: Vec<String> = toolkit_tags.to_vec();
        for tag in &def.tags {
            if tag.trim().is_empty() {
                ctx.error(&at(&place, "tags"), "a tag is empty; remove it".to_owned());
            } else if !tags.contains(tag) && tag != toolkit {
                tags.push(tag.clone());
            }
        }
        let mut secret_ids = HashSet::new();
        for id in &def.requirements.secrets {
            if id.trim().is_empty() || !secret_ids.insert(id) {
                ctx.error(
                    &at(&place, "requirements.secrets"),
                    format!("secret id `{id}` is empty or listed twice; list each secret once"),
                );
            }
        }
        let mut providers = HashSet::new();
        for a in &def.requirements.authorization {
            if a.id.trim().is_empty() || !providers.insert(&a.id) {
                ctx.error(
                    &at(&place, "requirements.authorization"),
                    format!(
                        "provider id `{}` is empty or listed twice; list each provider once",
                        a.id
                    ),
                );
            }
        }
        for (code, phrase) in &def.errors {
            if phrase.message.as_deref().is_some_and(|m| m.trim().is_empty()) {
                ctx.error(
                    &at(&place, &format!("errors.{code}")),
                    "`message` is empty; say what went wrong, or leave it out to keep the backend's".to_owned(),
                );
            }
        }
        if def.versions.is_empty() {
            ctx.error(&place, "the tool has no versions; add one under `versions:`".to_owned());
        }
        if def.execution.ask_first && !def.execution.task.allowed() {
            ctx.error(
                &at(&place, "execution.ask_first"),
                "`ask_first` says what happens before a call becomes a task, and this tool never runs as one; add `task: optional` or `task: required`, or remove `ask_first`".to_owned(),
            );
        }
        let tool_timeout = def.timeout_ms.map(Duration::from_millis);
        let requirements = Requirements {
            secrets: def.requirements.secrets,
            authorization: def
                .requirements
                .authorization
                .into_iter()
                .map(|a| Authorization {
                    id: a.id,
                    scopes: a.scopes,
                })
                .collect(),
            user_id: def.requirements.user_id,
        };
        let mut versions: Vec<Version> = Vec::with_capacity(def.versions.len());
        let mut complete = true;
        let mut last_backend: Option<super::file::BackendDef> = None;
        // `confirmation` and `approvers` hold from where they are written on (issue #40).
        let mut confirmation = (def.confirmation.clone(), def.approvers.clone());
        for (i, mut vdef) in def.versions.into_iter().enumerate() {
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let vplace = Place {
                version: Some(vdef.version.clone()),
                ..place.clone()
            };
            // A version without `backend` keeps the previous version's (issue #13).
            match (&vdef.backend, &last_backend) {
                (Some(backend), _) => last_backend = Some(backend.clone()),
                (None, Some(previous)) => vdef.backend = Some(previous.clone()),
                (None, None) => {
                    ctx.error(
                        &at(&vplace, "backend"),
                        "the first version needs a `backend`; later versions keep the previous one when they give none"
                            .to_owned(),
                    );
                    complete = false;
                    continue;
                }
            }
            let approvers_here = vdef.approvers.is_some() || (i == 0 && def.approvers.is_some());
            if vdef.confirmation.is_some() {
                confirmation.0 = vdef.confirmation.take();
            }
            if vdef.approvers.is_some() {
                confirmation.1 = vdef.approvers.take();
            }
            let place_of_policy = if i == 0 { &place } else { &vplace };
            let policy = self.confirmation(
                &confirmation,
                approvers_here,
                def.annotations.read_only,
                place_of_policy,
                ctx,
            );
            let parts = ToolParts {
                tool: &def.name,
                description: &def.description,
                timeout: tool_timeout,
                requirements: &requirements,
                confirmation: policy,
            };
            match self.version(number, &parts, vdef, &vplace, ctx) {
                Some(version) => {
                    if let Some(previous) = versions.last() {
                        if version.semver <= previous.semver {
                            ctx.error(&vplace, format!("comes after version {} in the list but is not greater; versions are append-only, so list them oldest first with strictly increasing semver", previous.semver));
                        } else if complete {
                            for message in compat::check(previous, &version) {
                                ctx.error(&vplace, message);
                            }
                        }
                    }
                    versions.push(version);
                }
                None => complete = false,
            }
        }
        let id = id.filter(|_| ctx.errors() == errors_before && complete)?;
        let Some(latest) = versions.iter().rposition(|v| !v.retired) else {
            ctx.warn(&place, "every version is retired, so the tool is not served".to_owned());
            return None;
        };
        // Every scope the tool needs: its toolkit's, its own, and those of its tags.
        let mut scopes: Vec<String> = toolkit_scopes.iter().chain(&def.scopes).cloned().collect();
        for tag in std::iter::once(toolkit).chain(tags.iter().map(String::as_str)) {
            scopes.extend(self.tag_scopes.get(tag).into_iter().flatten().cloned());
        }
        scopes.sort();
        scopes.dedup();
        Some(Tool {
            id,
            toolkit: toolkit.to_owned(),
            name: def.name,
            title: def.title,
            img: def.img,
            tags,
            requirements,
            scopes,
            always_visible: def.always_visible,
            errors: def
                .errors
                .into_iter()
                .map(|(code, p)| {
                    let phrase = ErrorPhrase {
                        message: p.message,
                        retryable: p.retryable,
                        retry_after: p.retry_after_ms.map(Duration::from_millis),
                        prompt: p.prompt,
                    };
                    (code, phrase)
                })
                .collect(),
            annotations: Annotations {
                read_only: def.annotations.read_only,
                destructive: def.annotations.destructive,
                idempotent: def.annotations.idempotent,
                open_world: def.annotations.open_world,
            },
            task: def.execution.task,
            release_after: def.execution.release_after_ms.map(Duration::from_millis),
            task_asks_first: def.execution.ask_first,
            watched: versions.iter().any(|v| v.backend.upstream().is_some()),
            versions,
            source: file.to_owned(),
            latest,
            backend_duration: std::sync::OnceLock::new(),
        })
    }

    fn version(
        &self,
        number: u32,
        parts: &ToolParts<'_>,
        def: VersionDef,
        place: &Place,
        ctx: &mut Context,
    ) -> Option<Version> {
        let errors_before = ctx.errors();
        let semver = match semver::Version::parse(&def.version) {
            Ok(v) if v.pre.is_empty() && v.build.is_empty() => Some(v),
            Ok(_) => {
                ctx.error(
                    place,
                    "pre-release and build suffixes are not allowed; write a plain x.y.z version".to_owned(),
                );
                None
            }
            Err(e) => {
                ctx.error(
                    place,
                    format!(
                        "`{}` is not a semantic version ({e}); write x.y.z, e.g. 1.0.0",
                        def.version
                    ),
                );
                None
            }
        };
        let description = match def.description {
            Some(d) => {
                check_description(&d, &at(place, "description"), &mut ctx.problems);
                d
            }
            None => parts.description.to_owned(),
        };
        let input_rules = parameters::input_rules(def.input_rules, place, ctx);
        let defs = input_rules.get("$defs");
        let (agent_defs, human_defs) = parameters::by_source(def.inputs, parts.confirmation.is_some(), place, ctx);
        let inputs: Vec<Parameter> = agent_defs
            .into_iter()
            .filter_map(|d| parameters::input(d, defs, place, ctx))
            .collect();
        let human_inputs: Vec<Parameter> = human_defs
            .into_iter()
            .filter_map(|d| parameters::input(d, defs, place, ctx))
            .collect();
        check_unique(
            inputs.iter().chain(&human_inputs).map(|p| (&p.name, &p.id)),
            "input",
            place,
            ctx,
        );
        // N-ACT §6.1: one or more outputs; a version that returns nothing says so, and every
        // protocol can carry that (issue #22.2).
        match (def.outputs.is_empty(), def.returns_nothing) {
            (true, false) => ctx.error(
                &at(place, "outputs"),
                "a version declares at least one output (N-ACT §6.1); for a tool that returns nothing, write `returns_nothing: true`".to_owned(),
            ),
            (false, true) => ctx.error(
                &at(place, "returns_nothing"),
                "`returns_nothing: true` and outputs contradict each other; keep one".to_owned(),
            ),
            _ => {}
        }
        let outputs: Vec<Output> = def
            .outputs
            .into_iter()
            .filter_map(|d| parameters::output(d, place, ctx))
            .collect();
        check_unique(outputs.iter().map(|o| (&o.name, &o.id)), "output", place, ctx);
        let backend_def = def.backend?;
        // The backend sends what the human typed like any input, so its steps may name it.
        let sent: Vec<Parameter> = inputs.iter().chain(&human_inputs).cloned().collect();
        let backend = match self.backends.get(&backend_def.kind) {
            Some(factory) => match factory.build(
                &backend_def.config,
                &Signature {
                    tool: parts.tool,
                    inputs: &sent,
                    outputs: &outputs,
                    requirements: parts.requirements,
                },
            ) {
                Ok(b) => {
                    for m in b.warnings() {
                        ctx.warn(&at(place, "backend"), m);
                    }
                    Some(b)
                }
                Err(messages) => {
                    for m in messages {
                        ctx.error(&at(place, "backend"), m);
                    }
                    None
                }
            },
            None => {
                let mut kinds: Vec<&str> = self.backends.keys().map(String::as_str).collect();
                kinds.sort_unstable();
                ctx.error(
                    &at(place, "backend"),
                    format!(
                        "unknown backend kind `{}`; the kinds are: {}",
                        backend_def.kind,
                        kinds.join(", ")
                    ),
                );
                None
            }
        };
        if def.timeout_ms == Some(0) {
            ctx.error(
                &at(place, "timeout_ms"),
                "a timeout of 0 ms lets no call finish; give a positive number of milliseconds".to_owned(),
            );
        }
        let timeout = def
            .timeout_ms
            .map(Duration::from_millis)
            .or(parts.timeout)
            .unwrap_or(self.default_timeout);
        if ctx.errors() > errors_before {
            return None;
        }
        let (semver, backend) = (semver?, backend?);
        // The validators a call needs are compiled on its first call (`Validators`). Every part
        // of the schemas the catalog writes was compiled where it was read (a pattern, a json
        // input or output, the rules); what may still fail is how they combine (`$ref`s into
        // `$defs`), so only a schema with such parts is compiled here, to be refused now rather
        // than on a call. A schema of typed parts always compiles.
        let authored = !input_rules.is_empty() || inputs.iter().any(|p| matches!(p.kind, InputType::Json { .. }));
        let authored_output = outputs
            .iter()
            .any(|o| matches!(o.kind, OutputType::Json { schema: Some(_) }));
        // Built here only to be compiled, then let go: kept, they would hold every version's
        // schemas whether or not anything asks for them (`Version::input_schema`).
        let authored_human = human_inputs.iter().any(|p| matches!(p.kind, InputType::Json { .. }));
        let no_rules = serde_json::Map::new();
        let compiled = [
            (authored, &inputs, &input_rules),
            (authored_human, &human_inputs, &no_rules),
        ]
        .into_iter()
        .filter(|(authored, _, _)| *authored)
        .try_for_each(|(_, params, rules)| {
            validate::compile(&schema::input_schema(params, rules, Spelling::Wire)).map(drop)
        })
        .and_then(|()| {
            if authored_output {
                validate::compile(&schema::output_schema(&outputs, Spelling::Wire)).map(drop)
            } else {
                Ok(())
            }
        });
        if let Err(e) = compiled {
            ctx.error(place, format!("failed to compile the schema: {e}"));
            return None;
        }
        Some(Version {
            number,
            semver,
            retired: def.retired,
            description,
            inputs,
            human_inputs,
            outputs,
            input_rules,
            input_schema: std::sync::OnceLock::new(),
            human_schema: std::sync::OnceLock::new(),
            output_schema: std::sync::OnceLock::new(),
            timeout,
            backend,
            confirmation: parts.confirmation.clone(),
            validators: Validators::default(),
        })
    }

    /// A version's confirmation policy from the `confirmation` and `approvers` in force, or the
    /// server-wide one for a tool that is not read-only ([`Loader::with_confirmation_for_actions`]).
    fn confirmation(
        &self,
        (confirmation, approvers): &(Option<String>, Option<Vec<String>>),
        approvers_here: bool,
        read_only: Option<bool>,
        place: &Place,
        ctx: &mut Context,
    ) -> Option<Arc<crate::confirm::Confirmation>> {
        let required = match confirmation.as_deref() {
            Some("required") => true,
            Some("none") | None => false,
            Some(other) => {
                ctx.error(
                    &at(place, "confirmation"),
                    format!("`{other}` is not a confirmation policy; write `required` (a human confirms each call) or `none`"),
                );
                return None;
            }
        };
        if let Some(list) = approvers.as_ref().filter(|_| approvers_here) {
            if list.iter().any(|a| a.trim().is_empty()) {
                ctx.error(
                    &at(place, "approvers"),
                    "an approver is `caller` or a scope name, not empty".to_owned(),
                );
            }
            if !required && !self.confirm_actions {
                ctx.warn(
                    &at(place, "approvers"),
                    "`approvers` has no effect without `confirmation: required`".to_owned(),
                );
            }
        }
        let required = required || (self.confirm_actions && read_only != Some(true));
        required.then(|| Arc::new(crate::confirm::Confirmation::new(approvers.clone().unwrap_or_default())))
    }
}

/// What every version of a tool shares, as the version loader needs it.
struct ToolParts<'a> {
    tool: &'a str,
    description: &'a str,
    timeout: Option<Duration>,
    requirements: &'a Requirements,
    confirmation: Option<Arc<crate::confirm::Confirmation>>,
}

/// Every tool a backend calls ([`Backend::calls`]) is in the catalog, at a served version.
fn check_calls(tools: &[Arc<Tool>], ctx: &mut Context) {
    for tool in tools {
        for version in &tool.versions {
            for (called, selector) in version.backend.calls() {
                let found = tools.iter().find(|t| t.name == called);
                let problem = match found.map(|t| t.resolve(&selector)) {
                    None => format!("a step calls tool `{called}`, which this catalog does not have"),
                    Some(None) => format!("a step calls `{called}` at version {selector}, which it does not serve"),
                    Some(Some(_)) => continue,
                };
                let place = Place {
                    file: tool.source.clone(),
                    tool: Some(tool.name.clone()),
                    version: Some(version.semver.to_string()),
                    field: Some("backend".to_owned()),
                    agent: None,
                };
                ctx.error(&place, problem);
            }
        }
    }
}

/// A version may change only the parts of the backend it names (issue #13): a version's backend
/// of the same kind as the one before takes the keys it does not set from it, whole (a version's
/// `steps` replaces the earlier `steps`). A backend of another kind starts afresh. Runs before
/// the toolkit's defaults, so a key an earlier version set wins over the default.
fn inherit_backends(def: &mut super::file::ToolDef) {
    let mut previous: Option<super::file::BackendDef> = None;
    for version in &mut def.versions {
        let Some(backend) = version.backend.as_mut() else {
            continue;
        };
        if let Some(before) = previous.as_ref().filter(|b| b.kind == backend.kind) {
            for (key, value) in &before.config {
                backend.config.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        previous = Some(backend.clone());
    }
}

/// Fills every version backend of `def` from the toolkit's `backend:` defaults: keys the version
/// does not set are taken whole (a version's `headers` replaces the defaults' `headers`). With
/// `kind` in the defaults, only backends of that kind take them.
fn apply_backend_defaults(defaults: &serde_json::Map<String, serde_json::Value>, def: &mut super::file::ToolDef) {
    let kind = defaults.get("kind").and_then(serde_json::Value::as_str);
    for version in &mut def.versions {
        let Some(backend) = version.backend.as_mut() else {
            continue;
        };
        if kind.is_some_and(|k| k != backend.kind) {
            continue;
        }
        for (key, value) in defaults.iter().filter(|(k, _)| *k != "kind") {
            backend.config.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
}
