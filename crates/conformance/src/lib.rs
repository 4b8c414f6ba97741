//! toolhost-conformance: black-box checks of an N-ACT, OTC 1.0 or Web of Agents server
//! against the normative statements of its spec (`toolhost verify --conformance URL`).
//!
//! Each check ([`Check`]) is one statement of docs/conformance.md that can be observed from
//! outside: its spec, section, keyword and text. A run ([`run`]) reports, per check, PASS,
//! FAIL with the evidence (the request, the status, an excerpt of the answer, what is wrong)
//! or SKIP with the reason.
//!
//! It is safe to point at someone else's server:
//! - a tool is invoked for real only when the user names it ([`Options::invoke`]) or the server
//!   marks it read-only (`annotations.readOnlyHint` or `readOnly: true` in its definition);
//!   every other tool gets only requests no conformant server runs (a version it does not
//!   have, an unknown tool, another agent's id, each with input every schema it could reach
//!   refuses): input a schema refuses alone goes only to tools that may run, since a server
//!   may run a tool whatever its input (WoA §4.2, §5.1; N-ACT §5.3);
//! - it sends at most [`Options::max_requests`] requests (every redirect hop counted) within
//!   [`Options::time_limit`] (a request in flight included), one at a time, and honours
//!   `Retry-After`;
//! - its HTTP is the client's ([`toolhost_client::Raw`]): the SSRF guard, the caller's
//!   credentials (to the origin they named only) and bounded bodies; it follows redirects
//!   itself, and never sends a POST on to another origin;
//! - what the server sends is reported safely ([`safe`]): the caller's credentials, should the
//!   server echo them, are redacted, and every string is escaped so no terminal, JSON or XML
//!   reader can be subverted by it.
//!
//! The crate depends on toolhost-client, never on toolhost-server: it checks servers from the
//! spec's side of the wire.

mod checks;
pub mod expected;
mod fixture;
mod inputs;
mod nact;
mod otc;
mod probe;
mod render;
mod report;
pub mod safe;
mod schema;
mod woa;

use std::time::{Duration, Instant};

use serde_json::Value;
use url::Url;

pub use checks::{Check, Keyword, Revision, Spec};
pub use render::{json as render_json, junit as render_junit, text as render_text};
pub use report::{Evidence, Finding, Outcome, Report, Verdict};

use probe::{Failure, Probe};
use report::Recorder;
use safe::Redactor;

/// A tool the user allows the checker to invoke for real, with its input or none (then one is
/// made from its schema: the smallest value each required input accepts).
#[derive(Debug, Clone, PartialEq)]
pub struct Invoke {
    /// The tool's name (N-ACT `name`, OTC `name` or tool part of `id`, WoA agent `id`).
    pub tool: String,
    /// The input, as a JSON object of arguments.
    pub input: Option<Value>,
}

impl Invoke {
    /// `NAME` or `NAME=JSON` (a JSON object of arguments).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (tool, input) = match text.split_once('=') {
            Some((tool, json)) => {
                let input: Value = serde_json::from_str(json)
                    .map_err(|e| format!("--invoke {tool}=JSON: the input is not JSON ({e})"))?;
                if !input.is_object() {
                    return Err(format!(
                        "--invoke {tool}=JSON: the input must be a JSON object of arguments"
                    ));
                }
                (tool, Some(input))
            }
            None => (text, None),
        };
        if tool.trim().is_empty() {
            return Err("--invoke takes a tool name, or NAME=JSON".to_owned());
        }
        Ok(Self {
            tool: tool.trim().to_owned(),
            input,
        })
    }
}

/// What to check and how far to go.
#[derive(Debug, Clone)]
pub struct Options {
    /// The server: N-ACT's platform root, OTC's base URL, or a WoA origin (or its document URL).
    pub url: Url,
    /// The protocol; probed when `None` (N-ACT or OTC at `{url}/tools`, then the WoA document).
    pub protocol: Option<Spec>,
    /// The requirement set (`--spec-version`); the latest revision of the protocol when `None`.
    pub revision: Option<Revision>,
    /// Check ids the user expects to fail ([`expected::parse`]).
    pub expected: Vec<String>,
    /// Tools that may be invoked for real (besides those the server marks read-only).
    pub invoke: Vec<Invoke>,
    /// The server loads the fixture catalog (`--fixture`): its tools may be invoked by name,
    /// even where the protocol cannot mark them read-only (OTC).
    pub fixture: bool,
    /// The most requests the run sends.
    pub max_requests: usize,
    /// The longest the run takes (a check not reached by then is skipped).
    pub time_limit: Duration,
    /// How many tools get per-tool requests (reads of their versions, refused invocations);
    /// every tool of the listing gets the checks that need no request.
    pub max_tools: usize,
    /// The client's options: SSRF guard, credentials, per-request timeout, body limit.
    pub client: toolhost_client::Options,
}

impl Options {
    /// Defaults for `url`: probe the protocol, 500 requests, 2 minutes, 10 tools in depth.
    pub fn new(url: Url, client: toolhost_client::Options) -> Self {
        Self {
            url,
            protocol: None,
            revision: None,
            expected: Vec::new(),
            invoke: Vec::new(),
            fixture: false,
            max_requests: 500,
            time_limit: Duration::from_secs(120),
            max_tools: 10,
            client,
        }
    }
}

/// Why a run could not start.
#[derive(Debug)]
pub enum Error {
    /// The client could not be set up (a bad header, say).
    Client(toolhost_client::Error),
    /// No N-ACT, OTC or WoA answer at the URL; what each probe found.
    Undetected {
        /// The URL.
        url: String,
        /// What each probe saw.
        tried: String,
    },
    /// `--spec-version` names a revision of another protocol than the server's.
    Revision {
        /// The revision asked for.
        revision: Revision,
        /// The server's protocol.
        spec: Spec,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Client(e) => write!(f, "{e}"),
            Error::Undetected { url, tried } => write!(
                f,
                "no N-ACT, OTC or WoA server answers at {url} ({tried}); give --protocol nact, otc or woa to check it anyway"
            ),
            Error::Revision { revision, spec } => write!(
                f,
                "--spec-version {revision} is a requirement set of {}, but the server speaks {spec}; give one of {spec}'s, or --protocol",
                revision.spec()
            ),
        }
    }
}

impl std::error::Error for Error {}

/// What the protocol modules share during a run.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub probe: Probe,
    pub rec: Recorder,
    pub invoke: Vec<Invoke>,
    pub fixture: bool,
    pub max_tools: usize,
    pub notes: Vec<String>,
    /// The tools invoked for real.
    pub invoked: std::collections::HashSet<String>,
    /// Set by [`Ctx::needs_credentials`]: the run stopped at the server's door.
    pub locked_out: Option<String>,
}

impl Ctx {
    /// A request `check` needed got no answer: a skip when the run's bound stopped it, else a
    /// failure.
    pub fn no_answer(&mut self, check: &Check, failure: &Failure) {
        if failure.bound {
            self.rec.skip(check, failure.message.clone());
        } else {
            self.rec.fail(check, failure.evidence("no answer"));
        }
    }

    /// Whether the tool known by `names` may be invoked for real, under which of them, and with
    /// what input: named by the user (with their input, if any), or marked read-only by the
    /// server's `definition`, or a tool of the fixture catalog with `--fixture`. A fixture tool
    /// gets the fixture's input unless the user gave one.
    pub fn invocable(&self, names: &[&str], definition: &Value) -> Option<(String, Option<Value>)> {
        let fixture = fixture::tool(names);
        if let Some(named) = self.invoke.iter().find(|i| names.contains(&i.tool.as_str())) {
            let input = named.input.clone().or_else(|| fixture.map(|(_, input)| input));
            return Some((named.tool.clone(), input));
        }
        let first = names.first()?;
        if let Some((_, input)) = fixture.filter(|_| self.fixture || read_only(definition)) {
            return Some(((*first).to_owned(), Some(input)));
        }
        read_only(definition).then(|| ((*first).to_owned(), None))
    }

    /// Whether the user named the tool known by `names` with an input of their own (then the
    /// checker runs it with that input only, choosing none that would run it otherwise).
    pub fn user_input(&self, names: &[&str]) -> bool {
        self.invoke
            .iter()
            .any(|i| names.contains(&i.tool.as_str()) && i.input.is_some())
    }

    /// Why nothing can be checked when `answer` refuses the checker for want of credentials
    /// (401 or 403): not a failure to conform, but a run that needs them (and so measured
    /// nothing: [`Report::locked_out`]).
    pub fn needs_credentials(&mut self, answer: &probe::Exchange) -> Option<String> {
        if !matches!(answer.status, 401 | 403) {
            return None;
        }
        let reason = if self.probe.has_credentials() {
            format!(
                "{} answered HTTP {}: the server refuses the credentials given",
                answer.request, answer.status
            )
        } else {
            format!(
                "{} answered HTTP {}: the server needs credentials (--api-key KEY or --bearer TOKEN)",
                answer.request, answer.status
            )
        };
        self.locked_out = Some(reason.clone());
        Some(reason)
    }

    /// Notes that `name` was invoked for real (`how`).
    pub fn invoked(&mut self, name: &str, how: &str) {
        self.notes.push(format!("invoked {name} ({how})"));
        self.invoked.insert(name.to_owned());
    }
}

/// Whether a definition marks the tool read-only: MCP's `annotations.readOnlyHint` (which
/// toolhost's client honours in any protocol) or a top-level `readOnly: true`.
fn read_only(definition: &Value) -> bool {
    definition.pointer("/annotations/readOnlyHint").and_then(Value::as_bool) == Some(true)
        || definition.get("readOnly").and_then(Value::as_bool) == Some(true)
}

/// Runs the checks of the server's protocol.
pub async fn run(options: Options) -> Result<Report, Error> {
    let started = Instant::now();
    let raw = toolhost_client::Raw::new(&options.client).map_err(Error::Client)?;
    let client = &options.client;
    let redactor = Redactor::new(
        client
            .headers
            .iter()
            .chain(client.server_headers.iter().flat_map(|(_, headers)| headers))
            .map(|(_, value)| value.as_str()),
    );
    let mut probe = Probe::new(raw, redactor.clone(), options.max_requests, options.time_limit);
    if !client.headers.is_empty() || !client.server_headers.is_empty() {
        let bare = toolhost_client::Options {
            headers: Vec::new(),
            // The prefixes stay trusted by the guard; only their headers go.
            server_headers: client
                .server_headers
                .iter()
                .map(|(prefix, _)| (prefix.clone(), Vec::new()))
                .collect(),
            ..client.clone()
        };
        probe = probe.with_anonymous(toolhost_client::Raw::new(&bare).map_err(Error::Client)?);
    }
    let mut ctx = Ctx {
        probe,
        rec: Recorder::default(),
        invoke: options.invoke.clone(),
        fixture: options.fixture,
        max_tools: options.max_tools,
        notes: Vec::new(),
        invoked: Default::default(),
        locked_out: None,
    };
    let spec = match (options.protocol, options.revision) {
        (Some(spec), _) => spec,
        (None, Some(revision)) => revision.spec(),
        (None, None) => detect(&mut ctx.probe, &options.url).await?,
    };
    let revision = options.revision.unwrap_or(Revision::latest(spec));
    if revision.spec() != spec {
        return Err(Error::Revision { revision, spec });
    }
    match spec {
        Spec::Nact => nact::run(&mut ctx, &options.url).await,
        Spec::Otc => otc::run(&mut ctx, &options.url).await,
        Spec::Woa => woa::run(&mut ctx, &options.url).await,
    }
    for named in &ctx.invoke {
        if !ctx.invoked.contains(&named.tool) {
            ctx.notes.push(format!(
                "--invoke {}: the server lists no such tool, or the run ended before it",
                named.tool
            ));
        }
    }
    if ctx.probe.waited > Duration::ZERO {
        ctx.notes.push(format!(
            "waited {} s in all for Retry-After",
            ctx.probe.waited.as_secs()
        ));
    }
    if ctx.probe.bounded {
        ctx.notes.push(format!(
            "the run's bounds ({} requests, {} s) stopped it before every check was made",
            options.max_requests,
            options.time_limit.as_secs()
        ));
    }
    let other: Vec<&String> = options
        .expected
        .iter()
        .filter(|id| checks::by_id(id).is_some_and(|c| c.revision != revision))
        .collect();
    if !other.is_empty() {
        ctx.notes.push(format!(
            "the expected-failures file lists checks of other requirement sets than {revision}, ignored here: {}",
            other.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    let mut report = Report {
        url: toolhost_client::text::shown_url(options.url.as_str()),
        revision,
        findings: ctx.rec.finish(&checks::set(revision), &options.expected),
        requests: ctx.probe.sent,
        elapsed: started.elapsed(),
        notes: ctx.notes,
        locked_out: ctx.locked_out,
    };
    report.scrub(&redactor);
    Ok(report)
}

/// The protocol at `url`, probed as discovery does: a URL ending in the WoA well-known path is
/// WoA; else `{url}/tools` answering an N-ACT page or an OTC listing; else a WoA document at the
/// origin (or, so a misplaced one can be named, under the URL's path).
async fn detect(probe: &mut Probe, url: &Url) -> Result<Spec, Error> {
    if url.path().ends_with(woa::WELL_KNOWN_PATH) {
        return Ok(Spec::Woa);
    }
    let mut tried = Vec::new();
    let listing = join(url, &["tools"]);
    match probe.get(&listing, &[]).await {
        Ok(answer) if answer.status == 200 => match answer.json() {
            Some(body) if body.get("items").is_some_and(Value::is_array) => return Ok(Spec::Nact),
            Some(body) if body.get("tools").is_some_and(Value::is_array) => return Ok(Spec::Otc),
            // A bare array of definitions is an OTC server that breaks the listing's shape
            // (the client reads it so too); the checker says so.
            Some(Value::Array(tools)) if tools.iter().all(|t| t.get("id").is_some()) => return Ok(Spec::Otc),
            _ => tried.push(format!("{}: neither an N-ACT page nor an OTC listing", answer.request)),
        },
        Ok(answer) => tried.push(refused(&answer)),
        Err(failure) => tried.push(format!("{}: {}", failure.request, failure.message)),
    }
    let mut documents = vec![woa::document_at_root(url)];
    if !matches!(url.path(), "" | "/") {
        documents.push(join(url, &[".well-known", "woa.json"]));
    }
    for document in documents {
        match probe.get(&document, &[]).await {
            Ok(answer) if answer.status == 200 && answer.json().is_some_and(|b| b.get("agents").is_some()) => {
                return Ok(Spec::Woa);
            }
            Ok(answer) => tried.push(refused(&answer)),
            Err(failure) => tried.push(format!("{}: {}", failure.request, failure.message)),
        }
    }
    Err(Error::Undetected {
        url: toolhost_client::text::shown_url(url.as_str()),
        tried: tried.join("; "),
    })
}

/// A probe's answer that was not the protocol's, for [`Error::Undetected`]: a 401 or 403 says
/// what to give.
fn refused(answer: &probe::Exchange) -> String {
    let hint = if matches!(answer.status, 401 | 403) {
        " (the server wants credentials: --api-key KEY or --bearer TOKEN)"
    } else {
        ""
    };
    format!("{}: HTTP {}{hint}", answer.request, answer.status)
}

/// `base` with `segments` appended as path segments (each percent-encoded as needed).
pub(crate) fn join(base: &Url, segments: &[&str]) -> Url {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
    url
}
