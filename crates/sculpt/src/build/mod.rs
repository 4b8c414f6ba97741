//! Load time: the parsed `backend:` block becomes a [`Recipe`]. Every reference, template, URL,
//! header and jq program is checked and compiled here, and each problem names its step and
//! field ("step `geocode`, `query.name`: refers to input `cty`, but the inputs are: city"); the
//! loader adds file, tool and version.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderName;
use reqwest::{Method, Url};
use serde_json::Value;
use toolhost_core::{Secret, Signature};

use crate::auth::{Auth, OAuth2};
use crate::config::{AuthDef, BackendDef};
use crate::failure::{Phrase, Phrases};
use crate::jq;
use crate::reference::{self, Names, Reference, StepField};
use crate::style::{Segment, Style};
use crate::template::{Template, ValueTemplate};

mod ask;
mod outputs;
mod poll;
mod step;

pub(crate) use ask::AskStep;
pub(crate) use poll::Poll;

/// Retries allowed at most, so a catalog cannot turn one call into a flood.
const MAX_RETRIES: u32 = 10;
/// Retries of idempotent steps when the catalog says nothing.
const DEFAULT_RETRIES: u32 = 2;
/// Names a step may not have, since references start with them.
const RESERVED: &[&str] = &["input", "secret", "steps"];

/// A compiled `http` backend: its steps and how outputs are made.
#[derive(Debug)]
pub(crate) struct Recipe {
    pub steps: Vec<Step>,
    pub outputs: Outputs,
    pub max_response_bytes: u64,
    /// The inputs whose text a request decodes as JSON (`{jq: ".input.NAME | fromjson"}`),
    /// checked before anything is sent.
    pub json_inputs: Vec<String>,
    /// What makes the tool unable to work although it loads ([`crate::lint`]).
    pub warnings: Vec<String>,
}

/// One compiled step.
#[derive(Debug)]
pub(crate) struct Step {
    pub name: String,
    /// The catalog tool a `tool` step calls, and which version; `body` is its input.
    pub tool: Option<(String, toolhost_core::VersionSelector)>,
    pub method: Method,
    /// Scheme, authority and path prefix, without a trailing `/`.
    pub base: String,
    pub path: Template,
    /// `base` and `path` parsed once, when the path has no holes: the same URL on every call.
    pub url: Option<Url>,
    /// Each query parameter, and its OpenAPI style when one is written (else arrays are sent
    /// as repeated parameters and other values as text).
    pub query: Vec<(String, ValueTemplate, Option<Style>)>,
    /// Headers; an array or object value is written in OpenAPI's `simple` style (`a,b`), or
    /// as `styles` says.
    pub headers: Vec<(HeaderName, Template)>,
    /// Input name → how its value is written in the path or a header (`styles:`); the
    /// `simple` style unexploded for an input not named.
    pub styles: Vec<(String, Segment)>,
    /// Cookies, sent together in one `Cookie` header, each left out when its hole has no value.
    pub cookies: Vec<(String, Template)>,
    pub body: Option<BodyTemplate>,
    pub when: Option<jq::Program>,
    /// The `{jq: ...}` values of the request, run before it is built (see `ValueTemplate::Jq`).
    pub programs: Vec<jq::Program>,
    /// The step's place in the recipe (its slot in a call's results).
    pub index: usize,
    /// Steps that must finish first (indexes of earlier steps).
    pub deps: Vec<usize>,
    /// Everything this step depends on, directly or not: what its `when` sees.
    pub visible: Vec<usize>,
    pub idempotent: bool,
    pub retries: u32,
    pub timeout: Option<Duration>,
    pub auth: Option<Arc<Auth>>,
    pub errors: Phrases,
    pub accept: Vec<u16>,
    /// Fields the answer must have, as written and parsed.
    pub expect: Vec<(String, StepField)>,
    /// `GET /v1/search`: the request as written, holes shown as `{…}`, for messages and logs.
    pub shape: String,
    pub paginate: Option<Paginate>,
    pub for_each: Option<ForEach>,
    /// The operation the step starts, polled until done.
    pub poll: Option<Poll>,
    /// What the step asks instead of sending a request (`elicit`, `sample`, `roots`).
    pub ask: Option<AskStep>,
}

/// How a step follows pages.
#[derive(Debug)]
pub(crate) struct Paginate {
    /// Where a page's items are; the page's body when `None`.
    pub items: Option<StepField>,
    pub next: Next,
    pub max_pages: u32,
}

/// The way to the next page.
#[derive(Debug)]
pub(crate) enum Next {
    /// The `Link` header's `rel="next"`.
    Link,
    /// A field holding the next page's URL.
    Url(StepField),
    /// A field holding the cursor, and the query parameter it is sent in.
    Cursor(StepField, String),
    /// A page-number query parameter and the first page's number.
    Page(String, u64),
}

/// A step run once per element of an earlier step's list.
#[derive(Debug)]
pub(crate) struct ForEach {
    pub list: Reference,
    pub max_items: usize,
    pub concurrency: usize,
}

const DEFAULT_MAX_ITEMS: usize = 50;
const MAX_ITEMS: usize = 500;
const DEFAULT_CONCURRENCY: usize = 4;
const MAX_CONCURRENCY: usize = 16;
const DEFAULT_MAX_PAGES: u32 = 10;
const MAX_PAGES: u32 = 100;

/// A request body template.
#[derive(Debug)]
pub(crate) enum BodyTemplate {
    Json(ValueTemplate),
    /// `application/x-www-form-urlencoded` fields, an array or object in its OpenAPI style.
    Form(Vec<(String, ValueTemplate, Option<Style>)>),
    /// `multipart/form-data` fields, and whether each is a file ([`crate::multipart`]).
    Multipart(Vec<(String, ValueTemplate, bool)>),
}

impl BodyTemplate {
    /// Every reference in the body.
    pub fn references(&self) -> Vec<&Reference> {
        match self {
            Self::Json(t) => t.references(),
            Self::Form(fields) => fields.iter().flat_map(|(_, t, _)| t.references()).collect(),
            Self::Multipart(fields) => fields.iter().flat_map(|(_, t, _)| t.references()).collect(),
        }
    }
}

impl Step {
    /// How the input `reference` is written in the path or a header, when `styles` says.
    pub fn style_of(&self, reference: &Reference) -> Option<&Segment> {
        let Reference::Input(name) = reference else {
            return None;
        };
        self.styles.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

/// How the output object is made.
#[derive(Debug)]
pub(crate) enum Outputs {
    /// No `outputs:`: the last step's body (an object), trimmed by the engine to the outputs.
    LastBody,
    /// One rule per mapped output; jq rules index `programs`, which run together.
    Map {
        rules: Vec<OutputRule>,
        programs: Vec<jq::Program>,
    },
}

/// Where one output's value comes from.
#[derive(Debug)]
pub(crate) struct OutputRule {
    pub name: String,
    pub required: bool,
    pub source: OutputSource,
}

/// An output's source.
#[derive(Debug)]
pub(crate) enum OutputSource {
    /// A path (`geocode.body.results[0].name`) or a text template, with a default.
    Template { template: Template, default: Option<Value> },
    /// The jq program at this index of `Outputs::Map::programs`.
    Jq(usize),
    /// A constant.
    Constant(Value),
}

/// The server's secrets, as the factory knows them.
#[derive(Debug)]
pub(crate) struct SecretNames<'a> {
    pub server: &'a HashMap<String, Secret>,
    pub check: bool,
}

/// Builds the recipe, or returns every problem found.
pub(crate) fn recipe(
    def: BackendDef,
    signature: &Signature<'_>,
    secrets: &SecretNames<'_>,
) -> Result<Recipe, Vec<String>> {
    let secret_names = reference::SecretNames {
        server: secrets.server,
        call: &signature.requirements.secrets,
        authorization: &signature.requirements.authorization,
        check: secrets.check,
    };
    let mut b = Builder {
        signature,
        secrets: &secret_names,
        problems: Vec::new(),
        same_audience: def.same_audience,
    };
    if def.steps.is_empty() {
        b.problem("`steps`", "there are no steps; add at least one request".to_owned());
    }
    let max_response_bytes = def.max_response_bytes.unwrap_or(crate::DEFAULT_MAX_RESPONSE_BYTES);
    if max_response_bytes == 0 {
        b.problem("`max_response_bytes`", "must be a positive number of bytes".to_owned());
    }
    if def.timeout_ms == Some(0) {
        b.problem("`timeout_ms`", "a timeout of 0 ms lets no request finish".to_owned());
    }
    let base_url = def.base_url.as_deref().and_then(|u| b.base_url("`base_url`", u));
    let backend_auth = def.auth.as_ref().and_then(|a| b.auth("`auth`", a, &[])).map(Arc::new);
    let mut names: Vec<String> = Vec::new();
    // Indexed like `def.steps`; `None` for a step with problems, so indexes stay aligned.
    // Sized to the steps: a step is about a kilobyte, and a `Vec` grown by pushes starts at
    // four, which for the usual one-step tool held three empty ones per tool (issue #42.1).
    let mut steps: Vec<Option<Step>> = Vec::with_capacity(def.steps.len());
    for step in &def.steps {
        let ok = b.step_name(&step.name, &names);
        let shared = Shared {
            base_url: base_url.as_deref(),
            headers: &def.headers,
            auth: backend_auth.as_ref(),
            timeout_ms: def.timeout_ms,
            retries: def.retries,
        };
        let built = b.step(step, &names, &steps, &shared);
        steps.push(built.filter(|_| ok));
        names.push(step.name.clone());
    }
    let outputs = b.outputs(def.outputs.as_ref(), &names);
    let steps: Option<Vec<Step>> = steps.into_iter().collect();
    let (Some(steps), true) = (steps, b.problems.is_empty()) else {
        if b.problems.is_empty() {
            b.problems.push("the steps have errors".to_owned());
        }
        return Err(b.problems);
    };
    let mut json_inputs: Vec<String> = steps
        .iter()
        .flat_map(|s| s.programs.iter().filter_map(jq::Program::json_text_input))
        .map(str::to_owned)
        .collect();
    json_inputs.sort();
    json_inputs.dedup();
    Ok(Recipe {
        json_inputs,
        steps,
        outputs: outputs.ok_or_else(|| vec!["the outputs have errors".to_owned()])?,
        max_response_bytes,
        warnings: Vec::new(),
    })
}

/// Why `forward: bearer` is refused without `same_audience` (issue #30.10).
const PASSTHROUGH: &str = "`forward: bearer` (like `{{caller.token}}`) sends the caller's own token, issued for this server, to the upstream, which could replay it here (token passthrough, which the MCP specification forbids). Use `exchange: {token_url, client_id, client_secret, params: {audience: ...}}` (RFC 8693 token exchange) to get a token for the upstream's own audience; or, if every upstream of this backend is part of this server's audience and accepts the same tokens anyway, say so with `same_audience: true` on the backend";

/// Backend-level settings every step inherits.
struct Shared<'a> {
    base_url: Option<&'a str>,
    headers: &'a std::collections::BTreeMap<String, String>,
    auth: Option<&'a Arc<Auth>>,
    timeout_ms: Option<u64>,
    retries: Option<u32>,
}

struct Builder<'a> {
    signature: &'a Signature<'a>,
    secrets: &'a reference::SecretNames<'a>,
    problems: Vec<String>,
    /// The backend's `same_audience`: its upstreams accept this server's tokens anyway, so
    /// `forward: bearer` may send them the caller's.
    same_audience: bool,
}

impl<'a> Builder<'a> {
    fn problem(&mut self, place: &str, message: String) {
        self.problems.push(format!("{place}: {message}"));
    }

    /// What templates at a place may refer to.
    fn names<'n>(&self, steps: &'n [String], secrets: bool) -> Names<'n>
    where
        'a: 'n,
    {
        Names {
            inputs: self.signature.inputs,
            steps,
            secrets: secrets.then_some(self.secrets),
            item: false,
        }
    }

    fn template(&mut self, place: &str, text: &str, names: &Names<'_>) -> Option<Template> {
        let template = Template::parse(text, names).map_err(|e| self.problem(place, e)).ok()?;
        self.token_allowed(place, template.references()).then_some(template)
    }

    /// Whether these references may be sent: the caller's token only with `same_audience`
    /// (issue #30.10); a problem is said otherwise.
    fn token_allowed<'r>(&mut self, place: &str, references: impl IntoIterator<Item = &'r Reference>) -> bool {
        let passes_token = references
            .into_iter()
            .any(|r| matches!(r, Reference::Caller { token: true }));
        if passes_token && !self.same_audience {
            self.problem(place, PASSTHROUGH.to_owned());
            return false;
        }
        true
    }

    fn step_name(&mut self, name: &str, earlier: &[String]) -> bool {
        let place = format!("step `{name}`");
        let identifier = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            self.problem(
                &place,
                "a step name is a letter followed by letters, digits or underscores".to_owned(),
            );
            return false;
        }
        if RESERVED.contains(&name) {
            self.problem(
                &place,
                "`input`, `secret` and `steps` cannot name a step, since references start with them".to_owned(),
            );
            return false;
        }
        if earlier.iter().any(|n| n == name) {
            self.problem(&place, "two steps have this name; each step needs its own".to_owned());
            return false;
        }
        true
    }

    fn base_url(&mut self, place: &str, text: &str) -> Option<String> {
        // `{{secret.NAME}}`: the server's config says where the upstream is (an imported API
        // whose description names no usable server, issue #32.6). Read once, here; `check`,
        // which has no config, takes it on trust.
        let from_secret;
        let written = text;
        let text = match text.trim().strip_prefix("{{").and_then(|t| t.strip_suffix("}}")) {
            None => text,
            Some(hole) => match Reference::parse(hole.trim(), &self.names(&[], true)) {
                Ok(Reference::Secret(reference::SecretSlot::Server(secret))) => {
                    from_secret = secret.expose().trim().to_owned();
                    from_secret.as_str()
                }
                // Without a config a server secret parses as a call's; one the tool asks its
                // callers for is still a call's, which `serve` refuses below.
                Ok(Reference::Secret(reference::SecretSlot::Call(name)))
                    if !self.secrets.check && !self.signature.requirements.secrets.contains(&name) =>
                {
                    return Some("http://base-url.from-a-secret.invalid".to_owned());
                }
                Ok(_) => {
                    self.problem(
                        place,
                        format!("`{text}`: a base URL is written out, or read whole from the server's `[secrets]` as one `{{{{secret.NAME}}}}` (not a secret callers send)"),
                    );
                    return None;
                }
                Err(e) => {
                    self.problem(place, e);
                    return None;
                }
            },
        };
        let checked = Url::parse(text).map_err(|e| format!("`{text}` is not a URL ({e})")).and_then(|url| {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!("`{text}` must be an http:// or https:// URL"));
            }
            if !cfg!(feature = "tls") && url.scheme() == "https" {
                return Err("this build has no TLS (feature `tls` of toolhost-sculpt), so https upstreams cannot be reached".to_owned());
            }
            if url.host().is_none() || url.query().is_some() || url.fragment().is_some() {
                return Err(format!("`{text}` must be scheme, host, port and an optional path, with no query or fragment"));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err("credentials do not belong in the URL; use `auth` with a secret".to_owned());
            }
            Ok(url.as_str().trim_end_matches('/').to_owned())
        });
        // A secret's value is never quoted.
        let checked = checked.map_err(|e| {
            if written == text {
                e
            } else {
                format!("the secret `{written}` reads does not hold a base URL: an http(s) URL of scheme, host, port and an optional path")
            }
        });
        checked.map_err(|e| self.problem(place, e)).ok()
    }

    fn auth(&mut self, place: &str, def: &AuthDef, earlier: &[String]) -> Option<Auth> {
        let names = self.names(earlier, true);
        let same_audience = self.same_audience;
        let mut t = |field: &str, text: &str| self.template(&format!("{place}.{field}"), text, &names);
        Some(match def {
            AuthDef::None => return None,
            AuthDef::Bearer(token) => Auth::Bearer(t("bearer", token)?),
            AuthDef::Forward(what) if what == "bearer" && !same_audience => {
                self.problem(place, PASSTHROUGH.to_owned());
                return None;
            }
            AuthDef::Forward(what) if what == "bearer" => {
                Auth::Bearer(Template::hole(Reference::Caller { token: true }, "caller.token"))
            }
            AuthDef::Forward(other) => {
                self.problem(
                    place,
                    format!("`forward: {other}`: only `forward: bearer` (the caller's own bearer token) is known"),
                );
                return None;
            }
            AuthDef::Basic { username, password } => {
                let username = t("basic.username", username);
                let password = t("basic.password", password);
                Auth::Basic {
                    username: username?,
                    password: password?,
                }
            }
            AuthDef::ApiKey { header, query, value } => {
                let value = t("api_key.value", value)?;
                match (header, query) {
                    (Some(header), None) => match HeaderName::from_bytes(header.as_bytes()) {
                        Ok(name) => Auth::Header { name, value },
                        Err(_) => {
                            self.problem(place, format!("`{header}` is not a valid header name"));
                            return None;
                        }
                    },
                    (None, Some(query)) if !query.is_empty() => Auth::Query {
                        name: query.clone(),
                        value,
                    },
                    _ => {
                        self.problem(
                            place,
                            "an `api_key` goes in either a `header` or a `query` parameter: name one".to_owned(),
                        );
                        return None;
                    }
                }
            }
            AuthDef::Oauth2(o) | AuthDef::Exchange(o) => {
                let exchange = matches!(def, AuthDef::Exchange(_));
                let kind = if exchange { "exchange" } else { "oauth2" };
                // Credentials are the same for every step, so they may not read step results.
                let names = self.names(&[], true);
                let id = self.template(&format!("{place}.{kind}.client_id"), &o.client_id, &names);
                let secret = self.template(&format!("{place}.{kind}.client_secret"), &o.client_secret, &names);
                let url = Url::parse(&o.token_url)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
                if url.is_none() {
                    self.problem(
                        &format!("{place}.{kind}.token_url"),
                        format!("`{}` is not an http(s) URL", o.token_url),
                    );
                }
                let basic = match o.client_auth.as_deref() {
                    None | Some("basic") => true,
                    Some("body") => false,
                    Some(other) => {
                        self.problem(
                            &format!("{place}.{kind}.client_auth"),
                            format!("`{other}` is neither `basic` nor `body`"),
                        );
                        return None;
                    }
                };
                let params = o.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let oauth = OAuth2::new(url?, id?, secret?, o.scopes.clone(), params, basic);
                Auth::OAuth2(if exchange { oauth.exchanging() } else { oauth })
            }
        })
    }

    fn phrase(&mut self, place: &str, spec: &Value, names: &Names<'_>) -> Option<Phrase> {
        let mut phrase = Phrase::default();
        match spec {
            Value::String(message) => phrase.message = Some(self.template(place, message, names)?),
            Value::Object(fields) => {
                for (key, value) in fields {
                    let field = format!("{place}.{key}");
                    match (key.as_str(), value) {
                        ("message", Value::String(s)) => phrase.message = Some(self.template(&field, s, names)?),
                        ("prompt", Value::String(s)) => phrase.prompt = Some(self.template(&field, s, names)?),
                        ("code", Value::String(s)) if !s.is_empty() => phrase.code = Some(s.clone()),
                        ("retryable", Value::Bool(b)) => phrase.retryable = Some(*b),
                        ("retry_after_ms", Value::Number(n)) if n.as_u64().is_some() => {
                            phrase.retry_after = n.as_u64().map(Duration::from_millis);
                        }
                        _ => {
                            self.problem(&field, "expected `message` and `prompt` (text), `code` (text), `retryable` (boolean) or `retry_after_ms` (milliseconds)".to_owned());
                            return None;
                        }
                    }
                }
            }
            _ => {
                self.problem(
                    place,
                    "give a message, or an object with `message`, `prompt`, `code`, `retryable`, `retry_after_ms`"
                        .to_owned(),
                );
                return None;
            }
        }
        Some(phrase)
    }
}

/// Sorts `deps` (a step's direct dependencies) and returns everything the step depends on,
/// directly or not: what its `when` sees, and what it waits for.
fn visible(deps: &mut Vec<usize>, built: &[Option<Step>]) -> Vec<usize> {
    deps.sort_unstable();
    deps.dedup();
    let mut visible: Vec<usize> = deps
        .iter()
        .flat_map(|&d| built[d].iter().flat_map(|s| s.visible.iter().copied()).chain([d]))
        .collect();
    visible.sort_unstable();
    visible.dedup();
    visible
}

impl Builder<'_> {
    /// The steps a step's `after` names, by index; a name that is not an earlier step is a
    /// problem.
    fn after(&mut self, def: &crate::config::StepDef, earlier: &[String]) -> Vec<usize> {
        let mut deps = Vec::new();
        for after in &def.after {
            match earlier.iter().position(|n| n == after) {
                Some(i) => deps.push(i),
                None => self.problem(
                    &format!("step `{}`, `after`", def.name),
                    format!("`{after}` is not an earlier step; list steps in the order they may run"),
                ),
            }
        }
        deps
    }
}

/// Whether a path has a `.` or `..` segment, which would climb the upstream's path: refused in
/// a path as written (at load) and as filled with inputs (per call).
pub(crate) fn climbs(path: &str) -> bool {
    path.split(['/', '?']).any(|s| s == "." || s == "..")
}
