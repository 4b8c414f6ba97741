//! N-ACT (draft-rosenberg-aiproto-nact-00 §6–7): discovery and invocation.
//!
//! Discovery follows `paging.next` to the end (bounded) and maps each signature exactly onto
//! core's typed parameters, so local validation speaks as toolhost's own. A call is pinned to
//! the version number whose signature was discovered (N-ACT §7), so the model's call always
//! meets the signature it was shown. [`NactClient`] is a lower-level client over any reqwest
//! client, without guard, cache or retries.

use serde_json::{Map, Value};
use toolhost_core::catalog::{DEFAULT_INT_MAX, Spelling};
use toolhost_core::{EnumValue, InputType};
use toolhost_wire::nact::{AllowedValue, InputParameter, Invocation, InvocationResult, NamedValue, Page, Signature};
use toolhost_wire::problem::Problem;
use url::Url;

use crate::problem::Read as ReadProblem;

use crate::discover::{Ctx, Found};
use crate::error::{self, ToolFailure};
use crate::http::{Freshness, Reply};
use crate::model::{Address, Kind, Output, Parameter, Protocol, Source, Tool};
use crate::text;

/// The most pages a listing follows before giving up, so a server that never ends its
/// listing cannot keep a client busy forever.
pub const MAX_PAGES: usize = 1000;

/// `{root}/{path}`, with `root`'s own path kept, and its query too (a server reached as
/// `https://host/nact?tenant=a` wants `tenant=a` on every request); a query in `path` is added
/// after it.
pub(crate) fn join(root: &Url, path: &str) -> Result<Url, error::Error> {
    let (path, query) = path.split_once('?').map_or((path, None), |(p, q)| (p, Some(q)));
    let mut url = root.clone();
    url.set_fragment(None);
    url.set_path(&format!("{}/{path}", root.path().trim_end_matches('/')));
    if let Some(query) = query {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        url.query_pairs_mut().extend_pairs(pairs);
    }
    Ok(url)
}

/// Whether a JSON body is an N-ACT listing page.
pub(crate) fn is_page(body: &Value) -> bool {
    body.get("items").is_some_and(Value::is_array) && body.get("paging").is_some_and(Value::is_object)
}

/// The parent of a URL whose path ends in `/tools` (a trailing `/` aside), with its query: the
/// platform root when the URL is the enumeration endpoint itself, which is what N-ACT §5.2
/// step 2 hands the designer (`https://api.weather.gov/tools`). `None` for other URLs.
pub(crate) fn parent_of_listing(url: &Url) -> Option<Url> {
    let path = url.path().trim_end_matches('/');
    let parent = path.strip_suffix("/tools")?;
    let mut root = url.clone();
    root.set_fragment(None);
    root.set_path(if parent.is_empty() { "/" } else { parent });
    Some(root)
}

/// The cursor of the next page: `paging.next`, when it names one. An absent, `null` or empty
/// `next` ends the listing (N-ACT §6.4 says only what `next` holds when there is a next page).
fn next_cursor(page: &Value) -> Option<&str> {
    page["paging"]["next"].as_str().filter(|next| !next.is_empty())
}

/// Every tool at `url`, starting from an already fetched first page when there is one (its
/// listing at `{url}/tools`). Given the enumeration endpoint itself (`…/tools`), the listing is
/// there and the platform root is its parent; the root is returned with the tools.
pub(crate) async fn discover(ctx: &Ctx<'_>, url: &Url, first: Option<Value>) -> Result<(Url, Found), error::Error> {
    let (root, first) = match (first, parent_of_listing(url)) {
        (Some(body), _) => (url.clone(), Some(body)),
        (None, Some(parent)) => {
            let reply = ctx.http.get(url, ctx.freshness, ctx.bearer).await?;
            match reply.json() {
                Ok(body) if reply.status == 200 && is_page(&body) => (parent, Some(body)),
                _ => (url.clone(), None),
            }
        }
        (None, None) => (url.clone(), None),
    };
    let found = list(ctx, &root, first).await?;
    Ok((root, found))
}

/// Every tool at `root`, following `paging.next` from the first page (fetched when not given).
async fn list(ctx: &Ctx<'_>, root: &Url, first: Option<Value>) -> Result<Found, error::Error> {
    let endpoint = Source::Url(root.clone());
    let tools_url = join(root, "tools")?;
    let mut found = Found::default();
    let mut page = match first {
        Some(body) => body,
        None => json(
            ctx.http.get(&tools_url, ctx.freshness, ctx.bearer).await?,
            Protocol::Nact,
        )?,
    };
    let mut seen_cursors = std::collections::HashSet::new();
    for _ in 0..ctx.limits.max_pages {
        if !is_page(&page) {
            return Err(protocol_error(&tools_url, "a listing page needs `items` and `paging`"));
        }
        for item in page["items"].as_array().into_iter().flatten() {
            if found.tools.len() >= ctx.limits.max_tools {
                found
                    .skipped
                    .push(format!("stopped after {} tools (the limit)", ctx.limits.max_tools));
                return Ok(found);
            }
            match tool(root, &endpoint, item.clone()) {
                Ok(t) => found.tools.push(t),
                Err(why) => found.skipped.push(why),
            }
        }
        let Some(next) = next_cursor(&page).map(str::to_owned) else {
            return Ok(found);
        };
        if !seen_cursors.insert(next.clone()) {
            return Err(protocol_error(&tools_url, "the listing returned the same cursor twice"));
        }
        let mut url = tools_url.clone();
        url.query_pairs_mut().append_pair("pageCursor", &next);
        page = json(ctx.http.get(&url, ctx.freshness, ctx.bearer).await?, Protocol::Nact)?;
    }
    Err(protocol_error(
        &tools_url,
        &format!("the listing did not end within {} pages", ctx.limits.max_pages),
    ))
}

/// The signature of version `number` as the server sends it; `None` when it is not served.
pub(crate) async fn signature(ctx: &Ctx<'_>, root: &Url, id: &str, number: u32) -> Result<Option<Value>, error::Error> {
    let url = join(root, &format!("tools/{}/versions/{number}", urlencode(id)))?;
    let reply = ctx.http.get(&url, Freshness::Revalidate, ctx.bearer).await?;
    if reply.status == 404 {
        return Ok(None);
    }
    json(reply, Protocol::Nact).map(Some)
}

/// The first page of a tool's served versions (newest first, up to 100), as the server sends
/// them.
pub(crate) async fn versions(ctx: &Ctx<'_>, root: &Url, id: &str) -> Result<Vec<Value>, error::Error> {
    let url = join(root, &format!("tools/{}/versions?pageLimit=100", urlencode(id)))?;
    let page = json(
        ctx.http.get(&url, Freshness::Revalidate, ctx.bearer).await?,
        Protocol::Nact,
    )?;
    if !is_page(&page) {
        return Err(protocol_error(&url, "a listing page needs `items` and `paging`"));
    }
    Ok(page["items"].as_array().cloned().unwrap_or_default())
}

/// A signature as received → a tool; `Err` says why it was skipped.
pub(crate) fn tool(root: &Url, endpoint: &Source, raw: Value) -> Result<Tool, String> {
    let s: Signature = serde_json::from_value(liberal(raw.clone()))
        .map_err(|e| format!("skipped a signature that is not N-ACT ({e})"))?;
    if !text::is_plain_name(&s.name) {
        return Err(format!(
            "skipped a tool whose name is not plain text: `{}`",
            text::one_line(&s.name, 80)
        ));
    }
    let mut inputs = Vec::with_capacity(s.input_parameters.len());
    for p in &s.input_parameters {
        if !text::is_plain_name(&p.name) {
            return Err(format!("skipped `{}`: a parameter name is not plain text", s.name));
        }
        inputs.push(parameter(p));
    }
    let input_schema = input_schema(&inputs);
    let core_outputs: Vec<toolhost_core::Output> = s
        .output_parameters
        .iter()
        .map(|o| toolhost_core::Output {
            id: o.id.clone(),
            name: o.name.clone(),
            description: o.description.clone(),
            required: o.required,
            kind: output_type(&o.kind, o.allowed_values.as_deref()),
        })
        .collect();
    Ok(Tool {
        name: s.name.clone(),
        title: None,
        description: text::clean(&s.description, text::MAX_DESCRIPTION),
        version: s.semver.clone(),
        version_number: Some(s.version),
        versions: s.semver.iter().cloned().collect(),
        inputs,
        input_schema,
        outputs: s
            .output_parameters
            .iter()
            .map(|o| Output {
                name: o.name.clone(),
                description: text::clean(&o.description, text::MAX_DESCRIPTION),
                kind: o.kind.clone(),
                required: o.required,
            })
            .collect(),
        output_schema: Some(toolhost_core::catalog::output_schema(&core_outputs, Spelling::Names)),
        protocol: Protocol::Nact,
        endpoint: endpoint.clone(),
        definition: raw,
        history: Vec::new(),
        compiled: Default::default(),
        address: Address::Nact {
            root: root.clone(),
            id: s.tool_id,
            number: s.version,
        },
    })
}

/// A signature with what a server may leave out filled in, so that one written loosely from the
/// draft is read (issue #31.12: be liberal in what the client reads): `tags` none,
/// `currentVersion` the `version`, descriptions empty, a parameter's `id` its name, an output's
/// `type` `json`. `toolId`, `name`, `version` and the parameters' names stay required.
fn liberal(mut raw: Value) -> Value {
    let Value::Object(signature) = &mut raw else {
        return raw;
    };
    signature.entry("tags").or_insert_with(|| Value::Array(Vec::new()));
    signature
        .entry("description")
        .or_insert_with(|| Value::String(String::new()));
    if let Some(version) = signature.get("version").cloned() {
        signature.entry("currentVersion").or_insert(version);
    }
    for (list, default_type) in [("input_parameters", None), ("output_parameters", Some("json"))] {
        let parameters = signature.entry(list).or_insert_with(|| Value::Array(Vec::new()));
        for parameter in parameters.as_array_mut().into_iter().flatten() {
            let Value::Object(parameter) = parameter else { continue };
            if let Some(name) = parameter.get("name").cloned() {
                parameter.entry("id").or_insert(name);
            }
            parameter
                .entry("description")
                .or_insert_with(|| Value::String(String::new()));
            if let Some(kind) = default_type {
                parameter
                    .entry("type")
                    .or_insert_with(|| Value::String(kind.to_owned()));
            }
        }
    }
    raw
}

/// An N-ACT input parameter as core's typed parameter (docs/protocols.md §3); an unknown type keeps
/// a schema that accepts anything, so a newer server's types do not block calls.
fn parameter(p: &InputParameter) -> Parameter {
    let number = |v: &Option<Value>| v.as_ref().and_then(Value::as_f64);
    let kind = match p.kind.as_str() {
        // A decimal number written as text (toolhost's mapping of a number onto N-ACT's types):
        // a number in the model, sent as a JSON number, which the server takes too.
        "string" if p.format.as_deref() == Some("decimal") => Some(InputType::Number {
            min: number(&p.min),
            max: number(&p.max),
        }),
        "string" => Some(InputType::String {
            max_length: p.max_length,
            pattern: p.pattern.clone(),
        }),
        "int" => Some(InputType::Int {
            min: p.min.as_ref().and_then(Value::as_i64),
            max: p.max.as_ref().and_then(Value::as_i64).unwrap_or(DEFAULT_INT_MAX),
        }),
        "number" => Some(InputType::Number {
            min: number(&p.min),
            max: number(&p.max),
        }),
        "boolean" => Some(InputType::Boolean),
        "enum" => Some(InputType::Enum {
            values: enum_values(p.allowed_values.as_deref().unwrap_or_default()),
        }),
        _ => None,
    };
    let description = text::clean(&p.description, text::MAX_DESCRIPTION);
    match kind {
        Some(kind) => {
            let core = toolhost_core::Parameter {
                id: p.id.clone(),
                name: p.name.clone(),
                description: description.clone(),
                required: p.required,
                kind: kind.clone(),
                header: None,
                default: None,
                examples: Vec::new(),
            };
            Parameter {
                name: p.name.clone(),
                description,
                required: p.required,
                schema: toolhost_core::catalog::input_property(&core, Spelling::Names),
                kind: Kind::Typed(kind),
            }
        }
        None => Parameter {
            name: p.name.clone(),
            description: description.clone(),
            required: p.required,
            kind: Kind::Schema,
            schema: serde_json::json!({ "description": description, "x-nact-type": p.kind }),
        },
    }
}

fn enum_values(values: &[AllowedValue]) -> Vec<EnumValue> {
    values
        .iter()
        .map(|v| EnumValue {
            name: v.name.clone(),
            description: v.description.clone(),
            value: None,
        })
        .collect()
}

fn output_type(kind: &str, values: Option<&[AllowedValue]>) -> toolhost_core::OutputType {
    use toolhost_core::OutputType as T;
    match kind {
        "string" => T::String,
        "int" => T::Int,
        "number" => T::Number,
        "boolean" => T::Boolean,
        "enum" => T::Enum {
            values: enum_values(values.unwrap_or_default()),
        },
        _ => T::Json { schema: None },
    }
}

/// The input object schema: exactly core's for typed parameters (the same function builds
/// the server's), so what passes here passes there.
fn input_schema(inputs: &[Parameter]) -> Value {
    let properties: Map<String, Value> = inputs.iter().map(|p| (p.name.clone(), p.schema.clone())).collect();
    let required: Vec<&str> = inputs.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
    serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// One call of version `number` (N-ACT §7): the outputs as an object keyed by name.
/// `confirmation` is the id a human confirmed the call under, sent as the invocation member
/// `confirmation` (issue #40).
pub(crate) async fn invoke(
    ctx: &Ctx<'_>,
    tool: &Tool,
    (root, id, number): (&Url, &str, u32),
    input: &Map<String, Value>,
    confirmation: Option<&str>,
) -> Result<Value, error::Error> {
    let url = join(root, &format!("tools/{}/versions/{number}:invoke", urlencode(id)))?;
    let mut body = invocation(&tool.name, input);
    body.confirmation = confirmation.map(str::to_owned);
    let body = serde_json::to_value(&body).map_err(|e| error::Error::Setup(e.to_string()))?;
    let reply = ctx.http.post_json(&url, &body, ctx.timeout, ctx.bearer).await?;
    // CHEQ's `202` (or a `403` problem by configuration): the tool did not run and waits for
    // a human's confirmation.
    if let Some(held) = crate::confirm::Confirmation::from_reply(&tool.name, Protocol::Nact, &reply) {
        return Err(error::Error::Confirmation(Box::new(held)));
    }
    if !(200..300).contains(&reply.status) {
        return Err(problem_error(&reply, &tool.name));
    }
    let result: InvocationResult = serde_json::from_slice(&reply.body)
        .map_err(|e| protocol_error(&url, &format!("the invocation result is not N-ACT ({e})")))?;
    Ok(Value::Object(
        result
            .output_parameters
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect(),
    ))
}

/// A non-2xx answer with (or without) a problem document, as N-ACT and WoA send them
/// (docs/protocols.md): 422 with `errors` lists parameters; a problem naming the tool's failure
/// (`code`, `prompt` or `retryable`: 422 a failure retrying cannot change, 409 one after which
/// the tool may have acted, 502–504 one that may pass) is the tool failing; others, a plain
/// RFC 9457 problem among them, are HTTP errors.
pub(crate) fn problem_error(reply: &Reply, tool: &str) -> error::Error {
    let problem = ReadProblem::from_body(&reply.body);
    match problem {
        Some(p) if reply.status == 422 && !p.errors.is_empty() => error::Error::InvalidArguments {
            tool: tool.to_owned(),
            problems: p
                .errors
                .into_iter()
                .map(|(parameter, message)| toolhost_core::ParameterError {
                    parameter: text::one_line(&parameter, text::MAX_NAME),
                    message,
                })
                .collect(),
        },
        Some(p) if p.describes_a_failure() && ((502..=504).contains(&reply.status) || p.code.is_some()) => {
            error::Error::Tool(Box::new(ToolFailure {
                tool: tool.to_owned(),
                message: p.detail.unwrap_or_else(|| reply.snippet()),
                prompt: p.prompt,
                developer_message: None,
                // N-ACT §7: a 5xx is the server's word that a retry may help, unless it says not.
                retryable: p.retryable.unwrap_or(reply.status >= 500),
                retry_after: reply.retry_after(),
            }))
        }
        problem => status_error(reply, problem),
    }
}

/// An HTTP error that is not about a tool call: the problem's detail, else the body's start.
pub(crate) fn status_error(reply: &Reply, problem: Option<ReadProblem>) -> error::Error {
    let (detail, retryable) = match problem {
        Some(p) => (p.detail.unwrap_or_else(|| reply.snippet()), p.retryable),
        None => (reply.snippet(), None),
    };
    error::Error::Status {
        url: reply.url.to_string(),
        status: reply.status,
        detail,
        retry_after: reply.retry_after(),
        retryable,
    }
}

/// The N-ACT invocation body of `input`.
/// The invocation object: the tool's name (N-ACT §7: "Invoking a tool requires the name of
/// the tool"), and the arguments as name/value pairs.
fn invocation(name: &str, input: &Map<String, Value>) -> Invocation {
    Invocation {
        name: Some(name.to_owned()),
        input_parameters: input
            .iter()
            .map(|(name, value)| NamedValue {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        confirmation: None,
    }
}

/// A 2xx JSON body, or the error the answer is.
pub(crate) fn json(reply: Reply, protocol: Protocol) -> Result<Value, error::Error> {
    if !(200..300).contains(&reply.status) {
        // A listing names no tool: its errors are plain HTTP errors, never a tool's.
        return Err(status_error(&reply, ReadProblem::from_body(&reply.body)));
    }
    reply.json().map_err(|detail| error::Error::Protocol {
        url: reply.url.to_string(),
        protocol,
        detail,
    })
}

fn protocol_error(url: &Url, detail: &str) -> error::Error {
    error::Error::Protocol {
        url: url.to_string(),
        protocol: Protocol::Nact,
        detail: detail.to_owned(),
    }
}

/// Why a [`NactClient`] call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request did not complete (connection, timeout, body).
    #[error("failed to reach the server: {0}")]
    Transport(#[from] reqwest::Error),
    /// The server answered with a problem document.
    #[error("the server answered {}: {}", .0.status, .0.detail)]
    Problem(Box<Problem>),
    /// The server answered something that is not N-ACT.
    #[error("the server's answer is not valid N-ACT: {0}")]
    Protocol(String),
}

/// A low-level client for one N-ACT server, addressed by its `{platform-root}` (e.g.
/// `http://host/nact`), over any reqwest client: no SSRF guard, cache or retries (use
/// [`crate::Client`] for those).
#[derive(Debug, Clone)]
pub struct NactClient {
    http: reqwest::Client,
    root: String,
}

impl NactClient {
    /// A client for the server whose tools are at `{root}/tools`.
    pub fn new(http: reqwest::Client, root: impl Into<String>) -> Self {
        Self {
            http,
            root: root.into().trim_end_matches('/').to_owned(),
        }
    }

    /// Every tool's current signature, following pagination to the end (at most [`MAX_PAGES`]).
    pub async fn list_tools(&self) -> Result<Vec<Signature>, Error> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut request = self
                .http
                .get(format!("{}/tools", self.root))
                .query(&[("pageLimit", "500")]);
            if let Some(c) = &cursor {
                request = request.query(&[("pageCursor", c)]);
            }
            let page: Page<Signature> = decode(request.send().await?).await?;
            tools.extend(page.items);
            match page.paging.next.filter(|next| !next.is_empty()) {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                Some(_) => return Err(Error::Protocol("the server returned the same cursor twice".to_owned())),
                None => return Ok(tools),
            }
        }
        Err(Error::Protocol(format!(
            "the listing did not end within {MAX_PAGES} pages"
        )))
    }

    /// Invokes a tool (by name or UUID), pinned to `version` when given; returns the outputs
    /// keyed by name.
    pub async fn invoke(
        &self,
        tool: &str,
        version: Option<u32>,
        input: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Error> {
        let tool_segment = urlencode(tool);
        let url = match version {
            Some(n) => format!("{}/tools/{tool_segment}/versions/{n}:invoke", self.root),
            None => format!("{}/tools/{tool_segment}:invoke", self.root),
        };
        let body = invocation(tool, input);
        let result: InvocationResult = decode(self.http.post(url).json(&body).send().await?).await?;
        Ok(result
            .output_parameters
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect())
    }
}

async fn decode<T: serde::de::DeserializeOwned>(response: reqwest::Response) -> Result<T, Error> {
    let status = response.status();
    let bytes = response.bytes().await?;
    if status.is_success() {
        return serde_json::from_slice(&bytes).map_err(|e| Error::Protocol(e.to_string()));
    }
    match serde_json::from_slice::<Problem>(&bytes) {
        Ok(problem) => Err(Error::Problem(Box::new(problem))),
        Err(_) => Err(Error::Protocol(format!("HTTP {status} without a problem document"))),
    }
}

/// Percent-encodes a path segment (tool names are plain, but UUIDs or user input may not be).
pub(crate) fn urlencode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_path_segments() {
        assert_eq!(urlencode("a b/../?#é"), "a%20b%2F..%2F%3F%23%C3%A9");
        assert_eq!(urlencode("lookup_weather"), "lookup_weather");
    }

    #[test]
    fn joins_under_the_root_path() {
        let root = Url::parse("http://h/nact/").unwrap();
        assert_eq!(join(&root, "tools").unwrap().as_str(), "http://h/nact/tools");
    }

    #[test]
    fn joining_keeps_the_roots_query() {
        let root = Url::parse("http://h/nact?tenant=a%20b#frag").unwrap();
        assert_eq!(
            join(&root, "tools").unwrap().as_str(),
            "http://h/nact/tools?tenant=a%20b"
        );
        assert_eq!(
            join(&root, "tools/x%2Fy/versions?pageLimit=100").unwrap().as_str(),
            "http://h/nact/tools/x%2Fy/versions?tenant=a%20b&pageLimit=100"
        );
    }

    /// A signature that leaves out what it can is still read (issue #31.12); one without a
    /// name is not.
    #[test]
    fn loose_signatures_are_read() {
        let root = Url::parse("http://h/api").unwrap();
        let raw = json!({"toolId": "0479a45d-ad0a-49d4-94db-75edf00d2ca4", "name": "Lookup Weather", "version": "2",
                         "input_parameters": [{"name": "City"}], "output_parameters": [{"name": "Temperature in Fahrenheit"}]});
        let t = tool(&root, &Source::Url(root.clone()), raw.clone()).unwrap();
        assert_eq!(t.version_number, Some(2));
        assert_eq!(t.inputs[0].type_name(), "string");
        assert!(t.inputs[0].required);
        assert_eq!(t.outputs[0].kind, "json");
        assert_eq!(t.definition, raw, "the definition stays as sent");
        let nameless = json!({"toolId": "x", "version": 1});
        assert!(
            tool(&root, &Source::Url(root.clone()), nameless)
                .unwrap_err()
                .contains("not N-ACT")
        );
    }

    #[test]
    fn signatures_map_onto_typed_parameters() {
        let root = Url::parse("http://h/nact").unwrap();
        let raw = json!({
            "toolId": "0479a45d-ad0a-49d4-94db-75edf00d2ca4", "name": "lookup_weather",
            "description": "Weather.\u{1b}[2J", "version": 2, "currentVersion": 2, "semver": "1.1.0",
            "tags": ["Weather"],
            "input_parameters": [
                {"id": "city", "name": "city", "type": "string", "description": "A city.", "max-length": 20},
                {"id": "days", "name": "days", "type": "int", "description": "Days.", "required": false, "min": 1, "max": 16},
                {"id": "units", "name": "units", "type": "enum", "description": "Units.", "allowed-values": [{"name": "METRIC", "description": "C."}]}
            ],
            "output_parameters": [{"id": "t", "name": "t", "type": "int", "description": "Temp."}]
        });
        let t = tool(&root, &Source::Url(root.clone()), raw).unwrap();
        assert_eq!(t.description, "Weather.[2J");
        assert_eq!(t.version.as_deref(), Some("1.1.0"));
        assert_eq!(t.version_number, Some(2));
        assert_eq!(t.input_schema["properties"]["days"]["maximum"], 16);
        assert_eq!(t.input_schema["required"], json!(["city", "units"]));
        let errors = t
            .check(&json!({"city": "Boston", "days": 40, "units": "KELVIN", "x": 1}))
            .unwrap_err();
        let text: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.parameter, e.message))
            .collect();
        assert_eq!(
            text,
            [
                "days: `days` expects an integer from 1 to 16, but got 40",
                "units: `units` expects one of METRIC, but got \"KELVIN\"",
                "x: `lookup_weather` has no parameter `x`; its parameters are: city, days, units",
            ]
        );
    }
}
