//! Load time: the parsed `backend:` block becomes a [`Recipe`]. Every reference, template, URL,
//! header and jq program is checked and compiled here, and each problem names its step and
//! field ("step `geocode`, `query.name`: refers to input `cty`, but the inputs are: city"); the
//! loader adds file, tool and version.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, Url};
use serde_json::Value;
use toolhost_core::{Secret, Signature};

use crate::auth::{Auth, OAuth2};
use crate::config::{AuthDef, BackendDef, PaginateDef, StepDef};
use crate::failure::{Key, Phrase, Phrases};
use crate::jq;
use crate::reference::{self, Names, Reference, StepField};
use crate::template::{Template, ValueTemplate};

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
    pub query: Vec<(String, ValueTemplate)>,
    pub headers: Vec<(HeaderName, Template)>,
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
    Form(Vec<(String, ValueTemplate)>),
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
    let mut steps: Vec<Option<Step>> = Vec::new();
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
    Ok(Recipe {
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

    fn step(&mut self, def: &StepDef, earlier: &[String], built: &[Option<Step>], shared: &Shared<'_>) -> Option<Step> {
        let before = self.problems.len();
        let at = |field: &str| format!("step `{}`, `{field}`", def.name);
        // The list a `for_each` step runs over is read without `item`; its templates read it.
        let for_each = def.for_each.as_deref().and_then(|text| {
            let written = text.trim().trim_start_matches("{{").trim_end_matches("}}").trim();
            let parsed = Reference::parse(written, &self.names(earlier, false))
                .map_err(|e| self.problem(&at("for_each"), e))
                .ok()?;
            if parsed.step().is_none() {
                self.problem(
                    &at("for_each"),
                    format!("`{written}` is not an earlier step's list; write e.g. `tickets.body.items`"),
                );
                return None;
            }
            Some(parsed)
        });
        let mut names = self.names(earlier, true);
        names.item = def.for_each.is_some();
        // A step's `errors:` may also quote its own answer (`{{create.body.error.message}}`):
        // what the upstream said was wrong is often the best thing to tell the model.
        let with_own: Vec<String> = earlier.iter().cloned().chain([def.name.clone()]).collect();
        let mut public = self.names(&with_own, false);
        public.item = names.item;

        // A `tool` step calls another tool of the catalog: none of a request's parts apply.
        if def.tool.is_some() {
            let http_parts = [
                ("method", def.method.is_some()),
                ("base_url", def.base_url.is_some()),
                ("path", def.path.is_some()),
                ("query", !def.query.is_empty()),
                ("headers", !def.headers.is_empty()),
                ("body", def.body.is_some()),
                ("form", def.form.is_some()),
                ("auth", def.auth.is_some()),
                ("paginate", def.paginate.is_some()),
                ("for_each", def.for_each.is_some()),
                ("accept", !def.accept.is_empty()),
            ];
            for (key, _) in http_parts.iter().filter(|(_, set)| *set) {
                self.problem(
                    &at(key),
                    "a `tool` step calls another tool of the catalog with `input`; it sends no request of its own"
                        .to_owned(),
                );
            }
        } else if def.input.is_some() {
            self.problem(
                &at("input"),
                "`input` goes with `tool`; a request sends `body`, `query` or `form`".to_owned(),
            );
        }
        let method_text = def
            .method
            .as_deref()
            .unwrap_or(if def.tool.is_some() { "POST" } else { "GET" })
            .to_ascii_uppercase();
        let method = match method_text.as_str() {
            "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS" => {
                Method::from_bytes(method_text.as_bytes()).ok()
            }
            other => {
                self.problem(
                    &at("method"),
                    format!("`{other}` is not one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"),
                );
                None
            }
        };
        let base = match def.base_url.as_deref() {
            Some(url) => self.base_url(&at("base_url"), url),
            None if def.tool.is_some() => Some(String::new()),
            None => {
                if shared.base_url.is_none() {
                    self.problem(
                        &at("base_url"),
                        "no `base_url`, here or on the backend; say where the upstream is".to_owned(),
                    );
                }
                shared.base_url.map(str::to_owned)
            }
        };
        let path = self.path(&at("path"), def.path.as_deref().unwrap_or(""), &names);

        let mut programs = Vec::new();
        let mut query = Vec::new();
        for (key, value) in &def.query {
            let place = at(&format!("query.{key}"));
            let template = match ValueTemplate::parse(value, &names, &mut programs) {
                Ok(t) if self.token_allowed(&place, t.references()) => t,
                Ok(_) => continue,
                Err(e) => {
                    self.problem(&place, e);
                    continue;
                }
            };
            let shaped = match &template {
                ValueTemplate::Array(items) => items.iter().all(ValueTemplate::is_scalar),
                ValueTemplate::Literal(Value::Array(items)) => {
                    items.iter().all(|v| !matches!(v, Value::Object(_) | Value::Array(_)))
                }
                other => other.is_scalar(),
            };
            if key.is_empty() || !shaped {
                self.problem(
                    &place,
                    "a query value is text, a number, a boolean, or a list of those".to_owned(),
                );
                continue;
            }
            query.push((key.clone(), template));
        }

        let mut headers: Vec<(HeaderName, Template)> = Vec::new();
        let merged = shared
            .headers
            .iter()
            .filter(|_| def.tool.is_none())
            .filter(|(k, _)| !def.headers.keys().any(|s| s.eq_ignore_ascii_case(k)));
        for (key, value) in merged.chain(&def.headers) {
            let place = at(&format!("headers.{key}"));
            let Ok(name) = HeaderName::from_bytes(key.as_bytes()) else {
                self.problem(&place, format!("`{key}` is not a valid header name"));
                continue;
            };
            let Some(template) = self.template(&place, value, &names) else {
                continue;
            };
            if template.references().next().is_none() && HeaderValue::from_str(value).is_err() {
                self.problem(&place, "the value has characters not allowed in a header".to_owned());
                continue;
            }
            headers.push((name, template));
        }

        let body = match (&def.body, &def.form) {
            (Some(_), Some(_)) => {
                self.problem(
                    &at("body"),
                    "a step sends either `body` (JSON) or `form`, not both".to_owned(),
                );
                None
            }
            (Some(body), None) => ValueTemplate::parse(body, &names, &mut programs)
                .map_err(|e| self.problem(&at("body"), e))
                .ok()
                .filter(|t| self.token_allowed(&at("body"), t.references()))
                .map(BodyTemplate::Json),
            (None, Some(form)) => {
                let mut fields = Vec::new();
                for (key, value) in form {
                    match ValueTemplate::parse(value, &names, &mut programs) {
                        Ok(t) if !self.token_allowed(&at(&format!("form.{key}")), t.references()) => {}
                        Ok(t) if t.is_scalar() => fields.push((key.clone(), t)),
                        Ok(_) => self.problem(
                            &at(&format!("form.{key}")),
                            "a form value is text, a number or a boolean".to_owned(),
                        ),
                        Err(e) => self.problem(&at(&format!("form.{key}")), e),
                    }
                }
                Some(BodyTemplate::Form(fields))
            }
            (None, None) => match (&def.tool, &def.input) {
                (Some(_), Some(input @ Value::Object(_))) => ValueTemplate::parse(input, &names, &mut programs)
                    .map_err(|e| self.problem(&at("input"), e))
                    .ok()
                    .filter(|t| self.token_allowed(&at("input"), t.references()))
                    .map(BodyTemplate::Json),
                (Some(_), None) => Some(BodyTemplate::Json(ValueTemplate::Literal(Value::Object(
                    serde_json::Map::new(),
                )))),
                (Some(_), Some(_)) => {
                    self.problem(
                        &at("input"),
                        "the input of a tool is an object: `{name: value, ...}`".to_owned(),
                    );
                    None
                }
                (None, _) => None,
            },
        };
        if body.is_some() && matches!(method_text.as_str(), "GET" | "HEAD") {
            self.problem(
                &at("body"),
                format!("a {method_text} request carries no body; use `query`, or another method"),
            );
        }

        let when = def.when.as_deref().and_then(|code| {
            jq::compile(code)
                .map_err(|e| self.problem(&at("when"), format!("the jq program does not compile: {e}")))
                .ok()
        });

        let auth = match &def.auth {
            Some(AuthDef::None) => None,
            Some(auth) => self.auth(&at("auth"), auth, earlier).map(Arc::new),
            None if def.tool.is_some() => None,
            None => shared.auth.cloned(),
        };

        let mut errors = Vec::new();
        for (key, spec) in &def.errors {
            let place = at(&format!("errors.{key}"));
            let Some(parsed) = Key::parse(key) else {
                self.problem(&place, "the key is a status such as \"404\" (quoted), a class \"4xx\" or \"5xx\", `timeout`, `unreachable` or `missing`".to_owned());
                continue;
            };
            if let Some(phrase) = self.phrase(&place, spec, &public) {
                errors.push((parsed, phrase));
            }
        }
        let max_items = def.max_items.unwrap_or(DEFAULT_MAX_ITEMS);
        let concurrency = def.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
        if def.for_each.is_none() && (def.max_items.is_some() || def.concurrency.is_some()) {
            self.problem(
                &at("for_each"),
                "`max_items` and `concurrency` go with `for_each`".to_owned(),
            );
        }
        if !(1..=MAX_ITEMS).contains(&max_items) {
            self.problem(&at("max_items"), format!("from 1 to {MAX_ITEMS}"));
        }
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            self.problem(&at("concurrency"), format!("from 1 to {MAX_CONCURRENCY}"));
        }
        let paginate = def.paginate.as_ref().and_then(|p| self.paginate(&at("paginate"), p));
        if paginate.is_some() && def.for_each.is_some() {
            self.problem(
                &at("paginate"),
                "a step either follows pages or runs `for_each`, not both".to_owned(),
            );
        }
        let mut expect = Vec::new();
        for path in &def.expect {
            match reference::own_field(path) {
                Ok(field) => expect.push((path.clone(), field)),
                Err(e) => self.problem(&at("expect"), e),
            }
        }
        for status in &def.accept {
            if !(100..600).contains(status) {
                self.problem(&at("accept"), format!("{status} is not an HTTP status"));
            }
        }
        let retries = def.retries.or(shared.retries).unwrap_or(DEFAULT_RETRIES);
        if retries > MAX_RETRIES {
            self.problem(&at("retries"), format!("at most {MAX_RETRIES} retries are allowed"));
        }
        let timeout_ms = def.timeout_ms.or(shared.timeout_ms);
        if def.timeout_ms == Some(0) {
            self.problem(&at("timeout_ms"), "a timeout of 0 ms lets no request finish".to_owned());
        }

        let mut deps: Vec<usize> = Vec::new();
        for after in &def.after {
            match earlier.iter().position(|n| n == after) {
                Some(i) => deps.push(i),
                None => self.problem(
                    &at("after"),
                    format!("`{after}` is not an earlier step; list steps in the order they may run"),
                ),
            }
        }
        if self.problems.len() > before {
            return None;
        }
        let (method, base, path) = (method?, base?, path?);
        let mut references: Vec<&Reference> = path.references().collect();
        references.extend(query.iter().flat_map(|(_, t)| t.references()));
        references.extend(headers.iter().flat_map(|(_, t)| t.references()));
        match &body {
            Some(BodyTemplate::Json(t)) => references.extend(t.references()),
            Some(BodyTemplate::Form(fields)) => references.extend(fields.iter().flat_map(|(_, t)| t.references())),
            None => {}
        }
        if let Some(auth) = &auth {
            references.extend(auth.templates().into_iter().flat_map(Template::references));
        }
        for (_, phrase) in &errors {
            references.extend(
                phrase
                    .message
                    .iter()
                    .chain(&phrase.prompt)
                    .flat_map(Template::references),
            );
        }
        let own = earlier.len();
        references.extend(for_each.iter());
        deps.extend(references.iter().filter_map(|r| r.step()).filter(|&d| d != own));
        deps.sort_unstable();
        deps.dedup();
        let mut visible: Vec<usize> = deps
            .iter()
            .flat_map(|&d| built[d].iter().flat_map(|s| s.visible.iter().copied()).chain([d]))
            .collect();
        visible.sort_unstable();
        visible.dedup();
        let shape = match &def.tool {
            Some(tool) => format!("tool {tool}"),
            None => format!("{method} {}", path.shape()),
        };
        // A tool step is taken to change something unless it says it does not.
        let idempotent = def
            .idempotent
            .unwrap_or(def.tool.is_none() && matches!(method_text.as_str(), "GET" | "HEAD" | "OPTIONS"));
        if paginate.is_some() && !idempotent {
            self.problem(
                &at("paginate"),
                "only an idempotent step follows pages (GET, or `idempotent: true`): each page is a request of its own"
                    .to_owned(),
            );
            return None;
        }
        let tool = match def.tool.as_deref().map(|t| t.split_once('@').unwrap_or((t, ""))) {
            None => None,
            Some(("", _)) => {
                self.problem(
                    &at("tool"),
                    "name the catalog tool to call: `NAME` or `NAME@1.2.0`".to_owned(),
                );
                return None;
            }
            Some((name, "")) => Some((name.to_owned(), toolhost_core::VersionSelector::Latest)),
            Some((name, version)) => match toolhost_core::VersionSelector::pin(version) {
                Ok(pinned) => Some((name.to_owned(), pinned)),
                Err(e) => {
                    self.problem(&at("tool"), e);
                    return None;
                }
            },
        };
        let url = path
            .references()
            .next()
            .is_none()
            .then(|| path.shape())
            .and_then(|p| Url::parse(&format!("{base}{p}")).ok());
        Some(Step {
            name: def.name.clone(),
            tool,
            idempotent,
            method,
            base,
            path,
            url,
            query,
            headers,
            body,
            when,
            programs,
            index: own,
            deps,
            visible,
            retries,
            timeout: timeout_ms.map(Duration::from_millis),
            auth,
            errors: Phrases(errors),
            accept: def.accept.clone(),
            expect,
            shape,
            paginate,
            for_each: for_each.map(|list| ForEach {
                list,
                max_items,
                concurrency,
            }),
        })
    }

    fn paginate(&mut self, place: &str, def: &PaginateDef) -> Option<Paginate> {
        let field = |b: &mut Self, text: &str| reference::own_field(text).map_err(|e| b.problem(place, e)).ok();
        let items = match &def.items {
            Some(text) => Some(field(self, text)?),
            None => None,
        };
        let ways = [
            def.next_link,
            def.next_url.is_some(),
            def.cursor.is_some(),
            def.page_param.is_some(),
        ];
        if ways.iter().filter(|w| **w).count() != 1 {
            self.problem(
                place,
                "say one way to the next page: `next_link: true`, `next_url: body.FIELD`, `cursor: body.FIELD` with `cursor_param`, or `page_param`".to_owned(),
            );
            return None;
        }
        let next = if def.next_link {
            Next::Link
        } else if let Some(text) = &def.next_url {
            Next::Url(field(self, text)?)
        } else if let Some(text) = &def.cursor {
            let Some(param) = def.cursor_param.clone() else {
                self.problem(
                    place,
                    "`cursor` needs `cursor_param`, the query parameter that sends it".to_owned(),
                );
                return None;
            };
            Next::Cursor(field(self, text)?, param)
        } else {
            Next::Page(def.page_param.clone().unwrap_or_default(), def.start.unwrap_or(1))
        };
        let max_pages = def.max_pages.unwrap_or(DEFAULT_MAX_PAGES);
        if !(1..=MAX_PAGES).contains(&max_pages) {
            self.problem(place, format!("`max_pages` is from 1 to {MAX_PAGES}"));
        }
        Some(Paginate { items, next, max_pages })
    }

    fn path(&mut self, place: &str, text: &str, names: &Names<'_>) -> Option<Template> {
        if !text.is_empty() && !text.starts_with('/') {
            self.problem(
                place,
                format!("`{text}` must start with `/` (it is appended to `base_url`)"),
            );
            return None;
        }
        let template = self.template(place, text, names)?;
        let literal = template.shape();
        if literal.contains(|c: char| c.is_whitespace() || c == '#') {
            self.problem(
                place,
                "the path has a space or `#`; percent-encode literal text, or send values through `{{...}}`".to_owned(),
            );
            return None;
        }
        if climbs(&literal) {
            self.problem(place, "the path has a `.` or `..` segment".to_owned());
            return None;
        }
        for r in template.references() {
            if let Reference::Input(name) = r
                && self.signature.inputs.iter().any(|p| &p.name == name && !p.required)
            {
                self.problem(place, format!("input `{name}` is optional, but a path needs a value on every call; make it required, or send it in `query`"));
                return None;
            }
        }
        Some(template)
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

    fn outputs(
        &mut self,
        def: Option<&std::collections::BTreeMap<String, Value>>,
        steps: &[String],
    ) -> Option<Outputs> {
        let Some(def) = def else {
            return Some(Outputs::LastBody);
        };
        let before = self.problems.len();
        let names = self.names(steps, false);
        let declared = self.signature.outputs;
        let mut rules = Vec::new();
        let mut programs = Vec::new();
        for (name, spec) in def {
            let place = format!("`outputs.{name}`");
            let Some(output) = declared.iter().find(|o| &o.name == name) else {
                let all: Vec<&str> = declared.iter().map(|o| o.name.as_str()).collect();
                self.problem(
                    &place,
                    format!(
                        "the version has no output `{name}`; its outputs are: {}",
                        if all.is_empty() {
                            "none".to_owned()
                        } else {
                            all.join(", ")
                        }
                    ),
                );
                continue;
            };
            let source = match spec {
                Value::String(text) => self
                    .output_text(&place, text, &names)
                    .map(|template| OutputSource::Template {
                        template,
                        default: None,
                    }),
                Value::Object(fields) => match (fields.get("path"), fields.get("jq"), fields.get("value")) {
                    (Some(Value::String(path)), None, None) if fields.keys().all(|k| k == "path" || k == "default") => {
                        self.output_text(&place, path, &names)
                            .map(|template| OutputSource::Template {
                                template,
                                default: fields.get("default").cloned(),
                            })
                    }
                    (None, Some(Value::String(code)), None) if fields.len() == 1 => match jq::compile(code) {
                        Ok(program) => {
                            programs.push(program);
                            Some(OutputSource::Jq(programs.len() - 1))
                        }
                        Err(e) => {
                            self.problem(
                                &format!("`outputs.{name}.jq`"),
                                format!("the jq program does not compile: {e}"),
                            );
                            None
                        }
                    },
                    (None, None, Some(value)) if fields.len() == 1 => Some(OutputSource::Constant(value.clone())),
                    _ => {
                        self.problem(&place, "write a path (`step.body.field`), a template with `{{...}}`, or one of `{path, default}`, `{jq}`, `{value}`".to_owned());
                        None
                    }
                },
                _ => {
                    self.problem(&place, "write a path (`step.body.field`), a template with `{{...}}`, or one of `{path, default}`, `{jq}`, `{value}`".to_owned());
                    None
                }
            };
            if let Some(source) = source {
                rules.push(OutputRule {
                    name: name.clone(),
                    required: output.required,
                    source,
                });
            }
        }
        for output in declared.iter().filter(|o| o.required && !def.contains_key(&o.name)) {
            self.problem(
                &format!("`outputs.{}`", output.name),
                "the output is required, but `outputs` does not say where it comes from".to_owned(),
            );
        }
        (self.problems.len() == before).then_some(Outputs::Map { rules, programs })
    }

    /// A path (`geocode.body.name`) or, with `{{...}}`, a text template.
    fn output_text(&mut self, place: &str, text: &str, names: &Names<'_>) -> Option<Template> {
        let result = if text.contains("{{") {
            Template::parse(text, names)
        } else {
            Reference::parse(text, names).map(|r| Template::hole(r, text))
        };
        result.map_err(|e| self.problem(place, e)).ok()
    }
}

/// Whether a path has a `.` or `..` segment, which would climb the upstream's path: refused in
/// a path as written (at load) and as filled with inputs (per call).
pub(crate) fn climbs(path: &str) -> bool {
    path.split(['/', '?']).any(|s| s == "." || s == "..")
}
