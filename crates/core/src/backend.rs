//! The [`Backend`] trait that runs one version of a tool, and the types that cross it.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::catalog::{Tool, Version};

/// A boxed, sendable future, as backends return them (the trait must stay object safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Something that runs a tool version: a native function, an HTTP recipe, an upstream server.
///
/// A backend receives input that already passed the version's input schema, and returns the
/// output object keyed by output name. The engine checks that object against the declared
/// outputs, so a backend that answers with the wrong shape is caught before any caller sees it.
pub trait Backend: Send + Sync + fmt::Debug {
    /// Runs the tool once.
    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Map<String, Value>, ToolFailure>>;

    /// The network services this backend calls, as URLs of which the scheme, host and port
    /// matter (`https://api.example.com`), for readiness checks. None by default.
    fn dependencies(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether a call cut short (by the version's timeout) may already have changed something
    /// elsewhere, e.g. a request that is not idempotent was sent. Then the timeout is reported as
    /// an unknown outcome, never as retryable (issue #12). No by default (pure functions).
    fn may_act(&self) -> bool {
        false
    }

    /// The other tools of the catalog this backend calls (a sculpted `tool` step), each with the
    /// version it asks for, so that loading checks they exist. None by default.
    fn calls(&self) -> Vec<(String, crate::catalog::VersionSelector)> {
        Vec::new()
    }

    /// The tool server this backend serves from, as operators name it (a masked URL, a
    /// command), and whether it answered when last asked: what `/readyz` reports per upstream.
    /// `None` for backends that are not another tool server (the default). Only a backend with
    /// an upstream can be [`Backend::withdrawn`]: its server may change or drop the tool.
    fn upstream(&self) -> Option<(String, bool)> {
        None
    }

    /// Why the version cannot be served as declared right now, if it cannot: `changed` (the
    /// service behind it changed the tool since it was pinned), `missing` (it no longer offers
    /// it). A tool whose every served version is withdrawn is left out of listings; its calls
    /// fail with the backend's own error. `None` (served) by default.
    fn withdrawn(&self) -> Option<&'static str> {
        None
    }

    /// What this backend refuses in an input that passed the version's schema, found before
    /// anything is sent: one error per parameter (a JSON-text input whose text does not parse,
    /// issue #38.5). The engine answers them as invalid input. None by default.
    fn check_input(&self, input: &Map<String, Value>) -> Vec<crate::validate::ParameterError> {
        let _ = input;
        Vec::new()
    }

    /// What makes the version unable to work although it loads (a path hole no input fills, a
    /// field the upstream requires that no input or constant provides), found once at load:
    /// the loader reports each as a warning, so `check` says what `serve` would fail at.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What a backend is given for one call.
#[derive(Debug, Clone, Copy)]
pub struct BackendCall<'a> {
    /// The validated input, keyed by parameter name.
    pub input: &'a Map<String, Value>,
    /// Secrets, user and request identity that came with the call.
    pub context: &'a CallContext,
    /// The tool being called.
    pub tool: &'a Tool,
    /// The resolved version of that tool.
    pub version: &'a Version,
    /// The engine running the call, so a backend can call another tool of the catalog (a
    /// sculpted step that calls a federated tool): `Engine::invoke` with this call's context,
    /// one level deeper ([`CallContext::nesting`]).
    pub engine: &'a crate::Engine,
}

/// Per-call context that travels beside the input: secrets, the end user, the request id.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Secrets by id (OTC `context.secrets`); never logged, never echoed.
    pub secrets: HashMap<String, Secret>,
    /// Authorization tokens by provider id (OTC `context.authorization`); never logged.
    pub authorization: HashMap<String, Secret>,
    /// The end user the call is made for (OTC `context.user_id`).
    pub user_id: Option<String>,
    /// The id of the request that carried the call, for logs and for backends to propagate
    /// (`x-request-id`).
    pub request_id: Option<String>,
    /// The W3C trace context of the call (`traceparent`), for backends to propagate.
    pub traceparent: Option<String>,
    /// Which tools the caller may see and call; a tool outside it is not found.
    pub access: crate::catalog::Access,
    /// The authenticated caller's own bearer token (a verified JWT; never an API key of this
    /// server), for tools that act on the caller's behalf (`auth: {forward: bearer}`).
    pub caller_token: Option<Secret>,
    /// The authenticated caller's subject (a JWT's `sub`, or an API key's name), for templates
    /// (`{{caller.sub}}`).
    pub caller_subject: Option<String>,
    /// The authenticated caller's verified JWT claims (`{{caller.email}}`).
    pub caller_claims: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    /// How many tool calls this one is inside (a tool whose backend calls another tool): 0 for
    /// a caller's call. The engine refuses to go deeper than [`MAX_NESTING`], so tools that call
    /// each other in a loop fail instead of running forever.
    pub nesting: u8,
    /// Where the backend reports how the call is going while it runs (a sculpted tool's steps),
    /// when the caller's protocol can carry it (MCP's progress and log messages); none by
    /// default. A call a tool makes inside its own has none: only the caller's call reports.
    pub progress: Option<Arc<dyn Progress>>,
    /// Where the call's questions go (the user, the client's model, its roots), when the
    /// caller's protocol can carry them (MCP); none by default, and then a tool that must ask
    /// fails saying so. A tool a tool calls asks through its caller's.
    pub ask: Option<Arc<dyn crate::ask::Ask>>,
    /// Who calls, for confirmations bound to them: `jwt:<iss>:<sub>`, `key:<name>` or
    /// `anonymous` (issue #40).
    pub principal: Option<String>,
    /// The protocol the call came over (`nact`, `otc`, `woa`, `mcp`), which a confirmation is
    /// bound to.
    pub protocol: Option<&'static str>,
    /// OTC's `call_id`, which a confirmation is bound to when the call sent one.
    pub call_id: Option<String>,
    /// The confirmation the call presents, if any.
    pub confirmation: Option<crate::confirm::Presented>,
}

/// How a call reports its course while it runs, protocol-free: the MCP adapter turns each
/// report into `notifications/progress` (when the client sent a `progressToken`) and
/// `notifications/message` (at the level the client set). Reports are cheap and never block.
pub trait Progress: Send + Sync + fmt::Debug {
    /// Step `done` of `total` (counted from 1) has finished: `name`, with how it went.
    fn step(&self, done: usize, total: usize, name: &str, outcome: &StepOutcome);

    /// What the service behind the tool said of the call while it ran (a federated upstream's
    /// progress or log message), already scrubbed of secrets, to pass on to the caller. Nothing
    /// by default.
    fn relay(&self, note: Note) {
        let _ = note;
    }
}

/// What a tool's upstream says of a call while it runs, protocol-free (MCP's
/// `notifications/progress` and `notifications/message` of a federated server).
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// How far the call is: `progress` of `total` (when known), with a message.
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A log message at `level`, from `logger` (when named), with any JSON `data`.
    Log {
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
}

/// How severe a log message is: RFC 5424's levels, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// How one step of a call went, as reported to the caller: only what the caller may see (a
/// failure's message is the scrubbed one the caller's error carries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    /// The step ran and answered.
    Done,
    /// The step's `when` said no.
    Skipped,
    /// The step failed with this message.
    Failed(String),
}

impl CallContext {
    /// The context of a caller who may see everything and brings nothing (authentication off).
    pub fn default_all() -> Self {
        Self {
            access: crate::catalog::Access::All,
            ..Self::default()
        }
    }

    /// Whether the context meets no requirement at all (no user, secrets or tokens): such a
    /// caller is listed exactly the tools without requirements.
    pub fn meets_none(&self) -> bool {
        self.user_id.as_deref().is_none_or(str::is_empty) && self.secrets.is_empty() && self.authorization.is_empty()
    }
}

/// Values replicas share because each costs a request to make (OAuth 2.0 tokens), kept in the
/// store the replicas share (`--state`). Its failures are nobody's problem but its own: a value
/// it cannot give is made again locally.
pub trait SharedValues: Send + Sync + fmt::Debug {
    /// The value of `key`, if a replica stored one that has not expired.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>>;
    /// Stores `value` under `key` for `ttl`.
    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> BoxFuture<'a, ()>;
    /// Claims the making of `key`'s value for `lease`: false when another replica is making it.
    fn claim<'a>(&'a self, key: &'a str, lease: Duration) -> BoxFuture<'a, bool>;
}

/// How deep tools may call one another (see [`CallContext::nesting`]).
pub const MAX_NESTING: u8 = 4;

/// A secret value whose `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<Arc<str>>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The failure code of [`ToolFailure::outcome_unknown`].
pub const OUTCOME_UNKNOWN_CODE: &str = "outcome_unknown";

/// Failure codes that say an upstream's answer could not be used (see
/// [`ToolFailure::is_unusable_answer`]); the `http` backend's codes of the same names.
pub const UNUSABLE_ANSWER_CODES: &[&str] = &[
    "upstream_unexpected",
    "response_too_large",
    "upstream_redirect",
    "mapping_failed",
    INVALID_OUTPUT_CODE,
];

/// The failure code of a backend result that does not match the version's declared outputs.
pub const INVALID_OUTPUT_CODE: &str = "invalid_output";

/// What the model is told after a failure whose outcome is unknown.
pub const OUTCOME_UNKNOWN_PROMPT: &str = "The tool may already have carried out this request before the failure: \
do not call it again until you have checked whether it took effect (for example by looking the item up).";

/// A tool that ran and failed: what to tell the caller and the model, and whether to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    /// A short message for the user and the model; says what went wrong and what to do.
    pub message: String,
    /// More detail for a developer; never carries secrets.
    pub developer_message: Option<String>,
    /// Whether the same call may succeed if tried again.
    pub retryable: bool,
    /// How long to wait before retrying, when known.
    pub retry_after: Option<Duration>,
    /// Text to add to the model's prompt (OTC `additional_prompt_content`, N-ACT problem `prompt`).
    pub prompt: Option<String>,
    /// A short machine-readable kind (e.g. `not_found`), which the catalog's `errors:` can
    /// rephrase for the model.
    pub code: Option<String>,
    /// The tool may have acted before it failed (a non-idempotent request reached the upstream
    /// and the answer was lost): not retryable, and the caller must check before trying again
    /// (issue #12: N-ACT and WoA answer 409, OTC `can_retry: false`).
    pub outcome_unknown: bool,
}

impl ToolFailure {
    /// A failure that will fail again if retried unchanged.
    pub fn permanent(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            developer_message: None,
            retryable: false,
            retry_after: None,
            prompt: None,
            code: None,
            outcome_unknown: false,
        }
    }

    /// This failure, when it came after the tool may already have acted (an earlier step that
    /// changes something ran): not retryable, and the model must check first. The message and
    /// developer message are kept; the code becomes `outcome_unknown` (issue #12).
    #[must_use]
    pub fn into_outcome_unknown(self) -> Self {
        if self.outcome_unknown {
            return self;
        }
        Self {
            message: format!(
                "{} (the tool may already have carried out part of this request)",
                self.message
            ),
            developer_message: self.developer_message,
            ..Self::outcome_unknown(String::new())
        }
    }

    /// Whether the failure means that an upstream's answer could not be used (a missing field,
    /// an oversized body, a redirect away, a mapping that failed on it), which a gateway reports
    /// as 502 rather than as a failure of the tool's own.
    pub fn is_unusable_answer(&self) -> bool {
        matches!(self.code.as_deref(), Some(code) if UNUSABLE_ANSWER_CODES.contains(&code))
    }

    /// A failure after which nobody knows whether the tool acted: a request that changes
    /// something reached the upstream, and then the connection broke or the time ran out.
    /// Never retryable; the prompt tells the model to check first (issue #12).
    pub fn outcome_unknown(message: impl Into<String>) -> Self {
        Self {
            outcome_unknown: true,
            prompt: Some(OUTCOME_UNKNOWN_PROMPT.to_owned()),
            code: Some(OUTCOME_UNKNOWN_CODE.to_owned()),
            ..Self::permanent(message)
        }
    }

    /// A failure that may pass if retried later.
    pub fn temporary(message: impl Into<String>, retry_after: Option<Duration>) -> Self {
        Self {
            retryable: true,
            retry_after,
            ..Self::permanent(message)
        }
    }

    /// Adds text for the model's prompt.
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// Sets the failure's code, which catalogs can rephrase.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Applies the catalog's phrasing for this failure's code, if it has one.
    pub fn rephrase(mut self, phrases: &std::collections::BTreeMap<String, crate::catalog::ErrorPhrase>) -> Self {
        let Some(phrase) = self.code.as_ref().and_then(|c| phrases.get(c)) else {
            return self;
        };
        if let Some(message) = &phrase.message {
            self.message.clone_from(message);
        }
        // A catalog may reword an unknown outcome, never make it retryable (issue #12).
        if let Some(retryable) = phrase.retryable
            && !self.outcome_unknown
        {
            self.retryable = retryable;
        }
        if phrase.retry_after.is_some() {
            self.retry_after = phrase.retry_after;
        }
        if phrase.prompt.is_some() {
            self.prompt.clone_from(&phrase.prompt);
        }
        self
    }

    /// Adds detail for developers.
    pub fn with_developer_message(mut self, message: impl Into<String>) -> Self {
        self.developer_message = Some(message.into());
        self
    }
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Builds a backend from the `backend:` block of a catalog version.
///
/// One factory serves one `kind`. The loader passes the block's other keys as `config` and the
/// version's signature, so a factory can check at load that everything the backend refers to
/// (inputs, outputs, secrets) exists. A factory that rejects the block returns messages that
/// say which key is wrong and what to write; the loader adds file, tool and version.
pub trait BackendFactory: Send + Sync {
    /// Builds the backend for one tool version, or says what is wrong with its config.
    fn build(&self, config: &Map<String, Value>, signature: &Signature<'_>) -> Result<Arc<dyn Backend>, Vec<String>>;

    /// Builds the reader of a toolkit's federated resource (`resources:` of a toolkit, see
    /// `catalog::federated`) from the toolkit's `backend` block and the resource's `resource`
    /// (or `resource_template`) and `pin`; a kind that serves no resources says so.
    fn resource(&self, config: &Map<String, Value>) -> Result<Arc<dyn ResourceReader>, Vec<String>> {
        let _ = config;
        Err(vec![
            "this backend kind serves no resources; a toolkit's `resources:` come from an `upstream` backend (toolhost import tools)".to_owned(),
        ])
    }
}

/// What a federated resource read gives: each contents with its media type, if given.
pub type ReadContents = Vec<(Option<String>, crate::catalog::resource::Content)>;

/// Reads one federated resource (or every URI of one template) from where it lives.
pub trait ResourceReader: Send + Sync + fmt::Debug {
    /// The contents at `uri` (an URI of the upstream's, which the catalog imported), each with
    /// its media type when the upstream gave one: bounded, scrubbed of the server's secrets.
    fn read<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<ReadContents, ToolFailure>>;

    /// Why the resource is not served now (its upstream changed or removed it since its pin),
    /// as a word for logs and listings; `None` while it is served.
    fn withdrawn(&self) -> Option<&'static str> {
        None
    }
}

/// The signature of the version a backend is built for.
#[derive(Debug, Clone, Copy)]
pub struct Signature<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The version's inputs.
    pub inputs: &'a [crate::catalog::Parameter],
    /// The version's outputs.
    pub outputs: &'a [crate::catalog::Output],
    /// What a call carries beside its input (secrets, tokens, user id).
    pub requirements: &'a crate::catalog::Requirements,
}
