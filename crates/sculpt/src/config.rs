//! The `backend: { kind: http, ... }` block as written in a catalog: plain serde types.
//!
//! Unknown keys are refused (a typo is an error at load, not a silently different request).
//! Errors name the key's path, with steps named rather than numbered.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The whole block, less `kind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BackendDef {
    /// Scheme, host, port and optional path prefix of every step's `path`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Per-step timeout; each step also stops at the version's deadline.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Retries of idempotent steps on connect errors, 429, 502, 503 and 504.
    #[serde(default)]
    pub retries: Option<u32>,
    /// The largest response body a step accepts; a larger one fails the call.
    #[serde(default)]
    pub max_response_bytes: Option<u64>,
    /// Headers sent by every step (a step's own headers win).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Outbound authentication of every step (a step's own `auth` wins).
    #[serde(default)]
    pub auth: Option<AuthDef>,
    /// The operator's word that every upstream of the backend is part of this server's
    /// audience (it accepts the tokens this server accepts anyway), which `forward: bearer`
    /// needs: otherwise the caller's token would be passed through to another audience.
    #[serde(default)]
    pub same_audience: bool,
    pub steps: Vec<StepDef>,
    /// Output name → where its value comes from. Absent: the last step's body.
    #[serde(default)]
    pub outputs: Option<BTreeMap<String, Value>>,
}

/// One HTTP request of the recipe, or a call of another tool of the catalog (`tool`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepDef {
    pub name: String,
    /// Another tool of the catalog this step calls instead of sending a request (a federated
    /// MCP tool, say): `NAME` (its latest version) or `NAME@1.2.0`. Its outputs are the step's
    /// `body`.
    #[serde(default)]
    pub tool: Option<String>,
    /// The input of a `tool` step: an object whose strings are templates, as in `body`.
    #[serde(default)]
    pub input: Option<Value>,
    /// Asks the user instead of sending a request: `{message, schema}` (a form) or
    /// `{message, url}` (an out-of-band step). The answer is the step's `body`:
    /// `{action, content}` (docs/asking.md).
    #[serde(default)]
    pub elicit: Option<ElicitDef>,
    /// Asks the client's model instead of sending a request; its answer is the step's `body`
    /// (`{text, model, role, stopReason, content}`).
    #[serde(default)]
    pub sample: Option<SampleDef>,
    /// `roots: true` asks the client for its roots; the step's `body` is `{roots: [...]}`.
    #[serde(default)]
    pub roots: bool,
    /// An `elicit` step's answer `content` when the user declines or cancels, or the client
    /// cannot be asked; without it the tool fails saying the user declined.
    #[serde(default)]
    pub on_decline: Option<Value>,
    #[serde(default)]
    pub method: Option<String>,
    /// Overrides the backend's `base_url` for this step.
    #[serde(default)]
    pub base_url: Option<String>,
    /// A template starting with `/`; values are percent-encoded as path segments.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub query: BTreeMap<String, Value>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Cookies (name → template), sent in one `Cookie` header; an array value as `a,b`.
    #[serde(default)]
    pub cookies: BTreeMap<String, String>,
    /// A JSON body; strings in it are templates.
    #[serde(default)]
    pub body: Option<Value>,
    /// An `application/x-www-form-urlencoded` body; an array or object value as
    /// `{value, style, explode}`, as in `query`.
    #[serde(default)]
    pub form: Option<BTreeMap<String, Value>>,
    /// A `multipart/form-data` body: field → value (a text part; an array, a part per item; an
    /// object, a JSON part), or `{file: "{{input.doc}}"}` for a file given as text or as
    /// `{data: BASE64, mimeType, filename}`.
    #[serde(default)]
    pub multipart: Option<BTreeMap<String, Value>>,
    /// How an input's value is written where the path or a header holds it (`{{input.id}}`):
    /// input name → OpenAPI's `style` (`simple`, `label`, `matrix`; a header only `simple`),
    /// `explode`, and `name` (the parameter's, which `matrix` writes; the input's by default).
    #[serde(default)]
    pub styles: BTreeMap<String, StyleDef>,
    /// A jq condition; the step runs only when it yields something other than `false`/`null`.
    #[serde(default)]
    pub when: Option<String>,
    /// Steps that must finish first, beyond those the templates refer to.
    #[serde(default)]
    pub after: Vec<String>,
    /// Whether the step may be retried; GET, HEAD and OPTIONS are by default.
    #[serde(default)]
    pub idempotent: Option<bool>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default)]
    pub auth: Option<AuthDef>,
    /// Status (`"404"`), class (`"4xx"`, `"5xx"`), `timeout`, `unreachable` or `missing` → how
    /// to phrase that failure.
    #[serde(default)]
    pub errors: BTreeMap<String, Value>,
    /// Statuses outside 2xx that count as an answer rather than a failure.
    #[serde(default)]
    pub accept: Vec<u16>,
    /// Fields the answer must have (`body.results[0]`); without one the step fails with the
    /// `missing` phrase of `errors`.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Fields the upstream requires in the request (`body.owner`, `query.q`, `headers.X-Id`,
    /// `form.note`, or `body` for the whole body), as an import read them from its
    /// description: one the step does not send is a load warning (the tool cannot work).
    #[serde(default)]
    pub requires: Vec<String>,
    /// Follow the upstream's pages, gathering their items into one list.
    #[serde(default)]
    pub paginate: Option<PaginateDef>,
    /// Poll an asynchronous operation the step started until it is done (docs/tasks.md).
    #[serde(default)]
    pub poll: Option<PollDef>,
    /// Run the step once per element of an earlier step's list (`tickets.body.items`), the
    /// element being `item` in the step's templates; its result is the list of answers.
    #[serde(default)]
    pub for_each: Option<String>,
    /// The most elements `for_each` runs for (default 50, at most 500); later ones are left out.
    #[serde(default)]
    pub max_items: Option<usize>,
    /// How many `for_each` requests are in flight at once (default 4, at most 16).
    #[serde(default)]
    pub concurrency: Option<usize>,
}

/// One entry of a step's `styles`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StyleDef {
    #[serde(default)]
    pub style: Option<String>,
    #[serde(default)]
    pub explode: Option<bool>,
    #[serde(default)]
    pub name: Option<String>,
}

/// An `elicit` step's question.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ElicitDef {
    /// What the user is asked (a template of inputs and earlier steps).
    pub message: String,
    /// The JSON Schema of the form: an object of flat properties (text, numbers, booleans,
    /// enums), with defaults and `required` as JSON Schema writes them.
    #[serde(default)]
    pub schema: Option<Value>,
    /// Where the user goes instead of filling a form (a template).
    #[serde(default)]
    pub url: Option<String>,
}

/// A `sample` step's request to the client's model.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SampleDef {
    /// One user message (a template); or write `messages`.
    #[serde(default)]
    pub prompt: Option<String>,
    /// The conversation, each `{role: user|assistant, text}` (text a template).
    #[serde(default)]
    pub messages: Vec<MessageDef>,
    /// The most tokens the model may answer with (default 1000).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// The system prompt (a template).
    #[serde(default)]
    pub system: Option<String>,
    #[serde(default)]
    pub temperature: Option<f64>,
}

/// One message of a `sample` step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageDef {
    pub role: String,
    pub text: String,
}

/// How a step follows pages: where a page's items are, and one way to the next page.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaginateDef {
    /// Where a page's items are (`body.results`); the page's body when absent.
    #[serde(default)]
    pub items: Option<String>,
    /// The next page is the `Link` header's `rel="next"` (RFC 8288).
    #[serde(default)]
    pub next_link: bool,
    /// The next page's URL is this field of the answer (`body.next`).
    #[serde(default)]
    pub next_url: Option<String>,
    /// The next cursor is this field (`body.next_cursor`), sent as query parameter `cursor_param`.
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub cursor_param: Option<String>,
    /// Pages are numbered in this query parameter, from `start` (default 1), until one is empty.
    #[serde(default)]
    pub page_param: Option<String>,
    #[serde(default)]
    pub start: Option<u64>,
    /// The most pages read (default 10, at most 100).
    #[serde(default)]
    pub max_pages: Option<u32>,
}

/// How a step polls the operation it started (`202 Accepted` with a `Location`, a job id in
/// the answer): where, how often, for how long, and what means done or failed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PollDef {
    /// A jq program over the first answer (`.steps.THIS_STEP`) that gives the URL to poll,
    /// relative to the step's URL or absolute on the same origin. Absent: the first answer's
    /// `Location` header. A `tool` step polls by calling its tool again.
    #[serde(default)]
    pub url: Option<String>,
    /// Between two polls, in milliseconds (default 1000, at least 50).
    #[serde(default)]
    pub interval_ms: Option<u64>,
    /// How long to poll at most, in milliseconds (default: until the call's deadline).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// A jq condition over the latest answer (`.steps.THIS_STEP`): the operation is done, and
    /// that answer is the step's result.
    pub done: String,
    /// A jq condition over the latest answer: the operation failed.
    #[serde(default)]
    pub failed: Option<String>,
}

/// Outbound authentication.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum AuthDef {
    /// No authentication (turns off the backend's `auth` for one step).
    None,
    /// `Authorization: Bearer <template>`.
    Bearer(String),
    /// `Authorization: Basic`.
    Basic { username: String, password: String },
    /// A key in a header or a query parameter.
    ApiKey {
        #[serde(default)]
        header: Option<String>,
        #[serde(default)]
        query: Option<String>,
        value: String,
    },
    /// OAuth 2.0 client credentials (RFC 6749 §4.4), with the token cached until shortly
    /// before it expires.
    Oauth2(OAuth2Def),
    /// `forward: bearer`: the authenticated caller's own bearer token, as it came in.
    Forward(String),
    /// OAuth 2.0 Token Exchange (RFC 8693): the caller's token swapped at `token_url` for one
    /// the upstream accepts (`params: {audience: ...}`), cached per caller until shortly before
    /// it expires.
    Exchange(OAuth2Def),
}

/// OAuth 2.0 client-credentials settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OAuth2Def {
    pub token_url: String,
    pub client_id: String,
    pub client_secret: String,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Extra form fields of the token request, e.g. `audience`.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// `basic` (default, RFC 6749 §2.3.1) or `body` (client id and secret as form fields).
    #[serde(default)]
    pub client_auth: Option<String>,
}

/// Parses the block, or says which key is wrong.
pub(crate) fn parse(config: &Map<String, Value>) -> Result<BackendDef, Vec<String>> {
    let value = Value::Object(config.clone());
    serde_path_to_error::deserialize::<_, BackendDef>(&value).map_err(|e| {
        let place = place(&e.path().to_string(), config);
        let inner = e.into_inner().to_string();
        vec![match place {
            None => format!("{inner}; an http backend needs `steps` (see docs/sculpting.md)"),
            Some(place) => format!("{place}: {inner}"),
        }]
    })
}

/// `steps[2].query.x` as "step `geocode`, `query.x`", naming the step when it has a name.
fn place(path: &str, config: &Map<String, Value>) -> Option<String> {
    if path == "." {
        return None;
    }
    let Some((index, tail)) = path.strip_prefix("steps[").and_then(|rest| rest.split_once(']')) else {
        return Some(format!("`{path}`"));
    };
    let name = index
        .parse::<usize>()
        .ok()
        .and_then(|i| config.get("steps")?.get(i)?.get("name")?.as_str());
    let step = match name {
        Some(name) => format!("step `{name}`"),
        None => format!("step {}", index.parse::<usize>().map_or(0, |i| i + 1)),
    };
    Some(match tail.strip_prefix('.') {
        Some(field) => format!("{step}, `{field}`"),
        None => step,
    })
}
