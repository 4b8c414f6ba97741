//! Loading: parse catalog sources, check every rule, compile schemas and backends once.
//!
//! The loader collects every problem it finds instead of stopping at the first, so `toolhost
//! check` can print them all at once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use super::file::{EnumValueDef, FileDef, InputDef, OutputDef, ToolDef, VersionDef};
use super::problem::{Place, Problem, Severity};
use super::{
    Annotations, Authorization, Catalog, DEFAULT_INT_MAX, EnumValue, ErrorPhrase, InputType, Output, OutputType,
    Parameter, Requirements, TOOL_ID_NAMESPACE, Tool, Version, compat, schema,
};
use crate::backend::{BackendFactory, Signature};
use crate::validate::{self, Validators};

/// Longest name of a tool, toolkit or parameter (docs/protocols.md §1; also keeps OTC ids short).
const MAX_NAME: usize = 64;
/// N-ACT §6.1: descriptions MUST be less than 2000 characters.
const MAX_DESCRIPTION: usize = 1999;
/// N-ACT §6.1: enum names at most 255 characters.
pub(super) const MAX_ENUM_NAME: usize = 255;
/// The backend timeout of a version that names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// One catalog file's name and text.
#[derive(Debug, Clone)]
pub struct Source {
    /// The name used in messages: the file's path as found under the directory given, or a
    /// bundled name.
    pub name: String,
    /// The file's contents, YAML or JSON.
    pub text: String,
}

impl Source {
    /// Whether this is an agent file (Markdown with front matter) rather than a catalog file.
    pub fn is_agent(&self) -> bool {
        self.name.ends_with(".md")
    }

    /// Reads every `*.md` file directly in `dir` (a catalog's `agents/` folder, or the one
    /// `--agents` names) but `README.md`, sorted by name: the agents. A missing folder has none.
    pub fn read_agents(dir: &Path) -> Result<Vec<Source>, Vec<Problem>> {
        let problem = |file: &Path, message: String| Problem {
            severity: Severity::Error,
            place: Place {
                file: file.display().to_string(),
                ..Place::default()
            },
            message,
        };
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(vec![problem(dir, format!("failed to read the agents folder: {e}"))]),
        };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().and_then(|e| e.to_str()) == Some("md"))
            // A folder's README says what its agents are for; it is not one of them.
            .filter(|p| !p.file_name().is_some_and(|n| n.eq_ignore_ascii_case("README.md")))
            .collect();
        paths.sort();
        let mut sources = Vec::with_capacity(paths.len());
        let mut problems = Vec::new();
        for path in paths {
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            if size > super::agent::MAX_AGENT_BYTES as u64 {
                problems.push(problem(
                    &path,
                    format!(
                        "the agent file has {size} bytes; at most {} are read",
                        super::agent::MAX_AGENT_BYTES
                    ),
                ));
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => sources.push(Source {
                    name: path.display().to_string(),
                    text,
                }),
                Err(e) => problems.push(problem(&path, format!("failed to read the file: {e}"))),
            }
        }
        if problems.is_empty() {
            Ok(sources)
        } else {
            Err(problems)
        }
    }

    /// Reads every `*.yaml`, `*.yml` and `*.json` file directly in `dir`, sorted by name; or,
    /// when `dir` is a file, that one file.
    pub fn read_dir(dir: &Path) -> Result<Vec<Source>, Vec<Problem>> {
        if dir.is_file() {
            return match std::fs::read_to_string(dir) {
                Ok(text) => Ok(vec![Source {
                    name: dir.display().to_string(),
                    text,
                }]),
                Err(e) => Err(vec![Problem {
                    severity: Severity::Error,
                    place: Place {
                        file: dir.display().to_string(),
                        ..Place::default()
                    },
                    message: format!("failed to read the catalog file: {e}"),
                }]),
            };
        }
        let place = |message: String| {
            vec![Problem {
                severity: Severity::Error,
                place: Place {
                    file: dir.display().to_string(),
                    ..Place::default()
                },
                message,
            }]
        };
        let entries = std::fs::read_dir(dir).map_err(|e| {
            place(format!(
                "failed to read the catalog: {e}; pass an existing directory or catalog file"
            ))
        })?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")))
            .collect();
        paths.sort();
        if paths.is_empty() {
            return Err(place(
                "no catalog files (*.yaml, *.yml, *.json) in this directory".to_owned(),
            ));
        }
        let mut sources = Vec::with_capacity(paths.len());
        let mut problems = Vec::new();
        match Self::read_agents(&dir.join("agents")) {
            Ok(agents) => sources.extend(agents),
            Err(found) => problems.extend(found),
        }
        for path in paths {
            match std::fs::read_to_string(&path) {
                Ok(text) => sources.push(Source {
                    name: path.display().to_string(),
                    text,
                }),
                Err(e) => problems.push(Problem {
                    severity: Severity::Error,
                    place: Place {
                        file: path.display().to_string(),
                        ..Place::default()
                    },
                    message: format!("failed to read the file: {e}"),
                }),
            }
        }
        if problems.is_empty() {
            Ok(sources)
        } else {
            Err(problems)
        }
    }
}

/// Builds catalogs: knows the backend kinds and checks every rule.
pub struct Loader {
    backends: HashMap<String, Arc<dyn BackendFactory>>,
    tag_scopes: BTreeMap<String, Vec<String>>,
    default_timeout: Duration,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut kinds: Vec<&String> = self.backends.keys().collect();
        kinds.sort();
        f.debug_struct("Loader").field("backends", &kinds).finish()
    }
}

impl Default for Loader {
    /// A loader that knows the built-in `native` backend.
    fn default() -> Self {
        Self::empty().with_backend("native", Arc::new(crate::native::Functions::builtin()))
    }
}

impl Loader {
    /// A loader with no backend kinds at all.
    pub fn empty() -> Self {
        Self {
            backends: HashMap::new(),
            tag_scopes: BTreeMap::new(),
            default_timeout: DEFAULT_TIMEOUT,
        }
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
        let mut ctx = Context {
            problems: Vec::new(),
            names: HashMap::new(),
            ids: HashMap::new(),
            otc_names: HashMap::new(),
        };
        let mut tools = Vec::new();
        let mut toolkits: BTreeMap<String, Option<String>> = BTreeMap::new();
        // Agent files (`agents/*.md`) are read after the tools, against them.
        let (agents, sources): (Vec<&Source>, Vec<&Source>) = sources.iter().partition(|s| s.is_agent());
        for (source, (file, problems)) in sources.iter().zip(parse_all(&sources)) {
            ctx.problems.extend(problems);
            let Some(file) = file else {
                continue;
            };
            for toolkit in file.toolkits {
                let place = Place {
                    file: source.name.clone(),
                    field: Some(format!("toolkit `{}`", toolkit.name)),
                    ..Place::default()
                };
                check_name(&toolkit.name, "toolkit name", &place, &mut ctx.problems);
                if toolkit.tags.iter().any(|t| t.trim().is_empty()) {
                    ctx.error(&at(&place, "tags"), "a tag is empty; remove it".to_owned());
                }
                let description = toolkits.entry(toolkit.name.clone()).or_default();
                if let Some(text) = toolkit.description {
                    check_description(&text, &place, &mut ctx.problems);
                    description.get_or_insert(text);
                }
                for mut def in toolkit.tools {
                    inherit_backends(&mut def);
                    if let Some(defaults) = &toolkit.backend {
                        apply_backend_defaults(defaults, &mut def);
                    }
                    if let Some(tool) = self.tool(
                        &source.name,
                        &toolkit.name,
                        &toolkit.tags,
                        &toolkit.scopes,
                        def,
                        &mut ctx,
                    ) {
                        tools.push(Arc::new(tool));
                    }
                }
            }
        }
        check_calls(&tools, &mut ctx);
        if ctx.problems.iter().any(|p| p.severity == Severity::Error) {
            ctx.problems.sort_by_key(|p| std::cmp::Reverse(p.severity));
            return Err(ctx.problems);
        }
        let mut catalog = Catalog::from_tools(tools, toolkits, Vec::new());
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
            let parts = ToolParts {
                tool: &def.name,
                description: &def.description,
                timeout: tool_timeout,
                requirements: &requirements,
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
        let search_text = super::search_text(&def.name, &versions[latest].description);
        Some(Tool {
            id,
            toolkit: toolkit.to_owned(),
            name: def.name,
            title: def.title,
            img: def.img,
            tags,
            requirements,
            scopes,
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
            watched: versions.iter().any(|v| v.backend.upstream().is_some()),
            versions,
            source: file.to_owned(),
            latest,
            search_text,
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
        let inputs: Vec<Parameter> = def.inputs.into_iter().filter_map(|d| input(d, place, ctx)).collect();
        check_unique(inputs.iter().map(|p| (&p.name, &p.id)), "input", place, ctx);
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
        let outputs: Vec<Output> = def.outputs.into_iter().filter_map(|d| output(d, place, ctx)).collect();
        check_unique(outputs.iter().map(|o| (&o.name, &o.id)), "output", place, ctx);
        let backend_def = def.backend?;
        let backend = match self.backends.get(&backend_def.kind) {
            Some(factory) => match factory.build(
                &backend_def.config,
                &Signature {
                    tool: parts.tool,
                    inputs: &inputs,
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
        let input_schema = schema::input_schema(&inputs);
        let output_schema = schema::output_schema(&outputs);
        let validators = match (validate::compile(&input_schema), validate::compile(&output_schema)) {
            (Ok(input), Ok(output)) => Validators {
                input: Arc::new(input),
                output: Arc::new(output),
            },
            (Err(e), _) | (_, Err(e)) => {
                ctx.error(place, format!("failed to compile the schema: {e}"));
                return None;
            }
        };
        Some(Version {
            number,
            semver,
            retired: def.retired,
            description,
            inputs,
            outputs,
            input_schema: Arc::new(input_schema),
            output_schema: Arc::new(output_schema),
            timeout,
            backend,
            validators,
        })
    }
}

/// What every version of a tool shares, as the version loader needs it.
struct ToolParts<'a> {
    tool: &'a str,
    description: &'a str,
    timeout: Option<Duration>,
    requirements: &'a Requirements,
}

struct Context {
    problems: Vec<Problem>,
    names: HashMap<String, String>,
    ids: HashMap<Uuid, String>,
    /// OTC names (`{toolkit}_{name}`) and the `Toolkit.name` that has each.
    otc_names: HashMap<String, String>,
}

impl Context {
    fn errors(&self) -> usize {
        self.problems.iter().filter(|p| p.severity == Severity::Error).count()
    }
    fn error(&mut self, place: &Place, message: String) {
        self.problems.push(Problem {
            severity: Severity::Error,
            place: place.clone(),
            message,
        });
    }
    fn warn(&mut self, place: &Place, message: String) {
        self.problems.push(Problem {
            severity: Severity::Warning,
            place: place.clone(),
            message,
        });
    }
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

fn at(place: &Place, field: &str) -> Place {
    Place {
        field: Some(field.to_owned()),
        ..place.clone()
    }
}

/// Parses every file, on as many threads as there are cores when there are several files:
/// parsing is most of loading a large catalog, and the files are independent. Results keep
/// the order of `sources`, so problems and tools come out the same either way.
fn parse_all(sources: &[&Source]) -> Vec<(Option<FileDef>, Vec<Problem>)> {
    let parse_one = |source: &&Source| {
        let mut problems = Vec::new();
        (parse(source, &mut problems), problems)
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads < 2 || sources.len() < 2 {
        return sources.iter().map(parse_one).collect();
    }
    let chunk = sources.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = sources
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(parse_one).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                // A panic in a parser is a bug; surface it where it happened.
                w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

fn parse(source: &Source, problems: &mut Vec<Problem>) -> Option<FileDef> {
    let result = if source.name.ends_with(".json") {
        serde_json::from_str::<FileDef>(&source.text).map_err(|e| format!("failed to parse: {e}"))
    } else {
        serde_saphyr::from_str::<FileDef>(&source.text).map_err(|e| {
            if too_large(&e) {
                format!(
                    "the file is larger than one catalog file may be ({} YAML nodes, about 1,000 to 5,000 tools); \
                     split it into several files, e.g. one per toolkit: a catalog is a directory ({e})",
                    serde_saphyr::Budget::default().max_nodes
                )
            } else {
                format!("failed to parse: {e}")
            }
        })
    };
    result
        .map_err(|message| {
            problems.push(Problem {
                severity: Severity::Error,
                place: Place {
                    file: source.name.clone(),
                    ..Place::default()
                },
                message,
            });
        })
        .ok()
}

/// Whether the YAML parser refused a file for its size (serde-saphyr's guard against huge or
/// hostile YAML), rather than for its depth or its aliases, which splitting would not help.
fn too_large(error: &serde_saphyr::Error) -> bool {
    use serde_saphyr::budget::BudgetBreach;
    let mut error = error;
    while let serde_saphyr::Error::WithSnippet { error: inner, .. }
    | serde_saphyr::Error::AliasError { error: inner, .. } = error
    {
        error = inner;
    }
    matches!(
        error,
        serde_saphyr::Error::Budget {
            breach: BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. },
            ..
        }
    )
}

/// `^[A-Za-z][A-Za-z0-9_]{0,63}$` (docs/protocols.md §1).
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= MAX_NAME
}

fn check_name(name: &str, what: &str, place: &Place, problems: &mut Vec<Problem>) {
    if !is_name(name) {
        problems.push(Problem {
            severity: Severity::Error,
            place: place.clone(),
            message: format!(
                "the {what} `{name}` is not allowed; use a letter followed by up to 63 letters, digits or underscores"
            ),
        });
    }
}

fn check_description(text: &str, place: &Place, problems: &mut Vec<Problem>) {
    let message = if text.trim().is_empty() {
        "the description is empty; say what this is for, since a model reads it to decide".to_owned()
    } else if text.chars().count() > MAX_DESCRIPTION {
        format!(
            "the description has {} characters; N-ACT §6.1 allows fewer than 2000",
            text.chars().count()
        )
    } else {
        return;
    };
    problems.push(Problem {
        severity: Severity::Error,
        place: place.clone(),
        message,
    });
}

fn check_unique<'a>(
    items: impl Iterator<Item = (&'a String, &'a String)>,
    what: &str,
    place: &Place,
    ctx: &mut Context,
) {
    let mut names = HashSet::new();
    let mut ids = HashSet::new();
    for (name, id) in items {
        let new_name = names.insert(name);
        if !new_name {
            ctx.error(
                place,
                format!("two {what}s are named `{name}`; names must be unique within a tool"),
            );
        }
        // A repeated name is reported once, not again as a repeated id.
        if !ids.insert(id) && new_name {
            ctx.error(
                place,
                format!("two {what}s have the id `{id}`; ids must be unique within a tool"),
            );
        }
    }
}

fn input(def: InputDef, place: &Place, ctx: &mut Context) -> Option<Parameter> {
    let place = at(place, &format!("input `{}`", def.name));
    let before = ctx.errors();
    check_name(&def.name, "input name", &place, &mut ctx.problems);
    check_description(&def.description, &place, &mut ctx.problems);
    let type_name = def.kind.as_deref().unwrap_or("string");
    let misplaced = |key: &str, given: bool, ctx: &mut Context| {
        if given {
            ctx.error(
                &place,
                format!("`{key}` does not apply to a {type_name} input; remove it or change `type`"),
            );
        }
    };
    if def.schema.is_some() && type_name != "json" {
        ctx.error(
            &place,
            format!("`schema` applies to a json input, not a {type_name} one"),
        );
    }
    // Boolean and json inputs take none of the scalar constraints.
    let takes_no_constraints = |ctx: &mut Context| {
        for (key, given) in [
            ("max_length", def.max_length.is_some()),
            ("pattern", def.pattern.is_some()),
            ("min", def.min.is_some()),
            ("max", def.max.is_some()),
            ("values", def.values.is_some()),
        ] {
            misplaced(key, given, ctx);
        }
    };
    let kind = match type_name {
        "string" => {
            misplaced("min", def.min.is_some(), ctx);
            misplaced("max", def.max.is_some(), ctx);
            misplaced("values", def.values.is_some(), ctx);
            if def.max_length == Some(0) {
                ctx.error(
                    &place,
                    "`max_length: 0` accepts only the empty string; give a positive length or remove it".to_owned(),
                );
            }
            if let Some(pattern) = &def.pattern
                && let Err(e) = validate::compile(&serde_json::json!({"type": "string", "pattern": pattern}))
            {
                ctx.error(&place, format!("`pattern` is not a valid regular expression: {e}"));
            }
            InputType::String {
                max_length: def.max_length,
                pattern: def.pattern,
            }
        }
        "int" => {
            misplaced("max_length", def.max_length.is_some(), ctx);
            misplaced("pattern", def.pattern.is_some(), ctx);
            misplaced("values", def.values.is_some(), ctx);
            let int = |n: &Option<serde_json::Number>, key: &str, ctx: &mut Context| match n {
                None => None,
                Some(n) => n.as_i64().or_else(|| {
                    ctx.error(
                        &place,
                        format!("`{key}` of an int input must be a whole number, but is {n}"),
                    );
                    None
                }),
            };
            let min = int(&def.min, "min", ctx);
            let max = int(&def.max, "max", ctx).unwrap_or(DEFAULT_INT_MAX);
            if min.is_some_and(|min| min > max) {
                ctx.error(&place, format!("`min` is greater than `max` ({max}; N-ACT's default max is {DEFAULT_INT_MAX}), so no value is allowed"));
            }
            InputType::Int { min, max }
        }
        "number" => {
            misplaced("max_length", def.max_length.is_some(), ctx);
            misplaced("pattern", def.pattern.is_some(), ctx);
            misplaced("values", def.values.is_some(), ctx);
            let (min, max) = (def.min.and_then(|n| n.as_f64()), def.max.and_then(|n| n.as_f64()));
            if let (Some(a), Some(b)) = (min, max)
                && a > b
            {
                ctx.error(&place, "`min` is greater than `max`, so no value is allowed".to_owned());
            }
            InputType::Number { min, max }
        }
        "boolean" => {
            takes_no_constraints(ctx);
            InputType::Boolean
        }
        "enum" => {
            for (key, given) in [
                ("max_length", def.max_length.is_some()),
                ("pattern", def.pattern.is_some()),
                ("min", def.min.is_some()),
                ("max", def.max.is_some()),
            ] {
                misplaced(key, given, ctx);
            }
            InputType::Enum {
                values: enum_values(def.values, &place, ctx),
            }
        }
        "json" => {
            takes_no_constraints(ctx);
            let schema = match def.schema {
                Some(schema @ serde_json::Value::Object(_)) => schema,
                _ => {
                    ctx.error(
                        &place,
                        "a json input needs `schema`, the JSON Schema of its values".to_owned(),
                    );
                    return None;
                }
            };
            if let Err(e) = validate::compile(&schema) {
                ctx.error(&place, format!("`schema` is not a valid JSON Schema: {e}"));
            }
            ctx.warn(
                &place,
                "a json input is not an N-ACT type (§6.1): this version is served over MCP, OTC and WoA, and left out of N-ACT".to_owned(),
            );
            InputType::Json { schema }
        }
        other => {
            ctx.error(&place, format!("unknown input type `{other}`; use string, int, number, boolean or enum (N-ACT's scalars), or json with a `schema` (served over MCP, OTC and WoA only)"));
            return None;
        }
    };

    if let Some(header) = &def.header {
        let token = !header.is_empty() && header.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !token || !matches!(kind, InputType::String { .. }) {
            ctx.error(
                &place,
                format!("`header: {header}` needs a string input and a header name of letters, digits and `-`"),
            );
        }
    }
    (ctx.errors() == before).then(|| Parameter {
        id: def.id.unwrap_or_else(|| def.name.clone()),
        name: def.name,
        description: def.description,
        required: def.required.unwrap_or(true),
        kind,
        header: def.header,
    })
}

fn output(def: OutputDef, place: &Place, ctx: &mut Context) -> Option<Output> {
    let place = at(place, &format!("output `{}`", def.name));
    let before = ctx.errors();
    check_name(&def.name, "output name", &place, &mut ctx.problems);
    check_description(&def.description, &place, &mut ctx.problems);
    if def.values.is_some() && def.kind != "enum" {
        ctx.error(
            &place,
            format!(
                "`values` does not apply to a {} output; remove it or change `type`",
                def.kind
            ),
        );
    }
    let kind = match def.kind.as_str() {
        "string" => OutputType::String,
        "int" => OutputType::Int,
        "number" => OutputType::Number,
        "boolean" => OutputType::Boolean,
        "json" => OutputType::Json,
        "enum" => OutputType::Enum {
            values: enum_values(def.values, &place, ctx),
        },
        other => {
            ctx.error(
                &place,
                format!("unknown output type `{other}`; use string, int, number, boolean, enum or json"),
            );
            return None;
        }
    };
    (ctx.errors() == before).then(|| Output {
        id: def.id.unwrap_or_else(|| def.name.clone()),
        name: def.name,
        description: def.description,
        required: def.required.unwrap_or(true),
        kind,
    })
}

fn enum_values(defs: Option<Vec<EnumValueDef>>, place: &Place, ctx: &mut Context) -> Vec<EnumValue> {
    let defs = defs.unwrap_or_default();
    if defs.is_empty() {
        ctx.error(
            place,
            "an enum needs `values`: a list of `{name, description}` with at least one entry".to_owned(),
        );
    }
    let mut seen = HashSet::new();
    for v in &defs {
        if !super::is_enum_name(&v.name) {
            ctx.error(place, format!("enum value `{}` must be UPPER_SNAKE_CASE of at most 255 characters (N-ACT §6.1), e.g. PREMIUM_ECONOMY", v.name));
        }
        if !seen.insert(&v.name) {
            ctx.error(place, format!("enum value `{}` is listed twice", v.name));
        }
        check_description(
            &v.description,
            &at(place, &format!("value `{}`", v.name)),
            &mut ctx.problems,
        );
    }
    let mut wires = HashSet::new();
    let mut named = HashSet::new();
    // A name listed twice is said once, above, not again as a shared wire value.
    for v in defs.iter().filter(|v| named.insert(&v.name)) {
        let wire = v
            .value
            .clone()
            .unwrap_or_else(|| serde_json::Value::String(v.name.clone()));
        if matches!(
            wire,
            serde_json::Value::Null | serde_json::Value::Array(_) | serde_json::Value::Object(_)
        ) {
            ctx.error(place, format!("the `value` of enum value `{}` must be a string, a number or a boolean: what the backend sends and receives for it", v.name));
        } else if !wires.insert(wire.to_string()) {
            ctx.error(place, format!("enum value `{}` sends {wire}, as another value does; each name needs its own `value`, or the answer could not be told apart", v.name));
        }
    }
    defs.into_iter()
        .map(|v| EnumValue {
            value: v.value.filter(|w| w.as_str() != Some(v.name.as_str())),
            name: v.name,
            description: v.description,
        })
        .collect()
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
