//! One step of the recipe: its request (method, path, query, headers, body, auth), when it
//! runs, what it expects, its errors, and how it pages or fans out.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, Url};
use serde_json::Value;

use super::{
    BodyTemplate, Builder, DEFAULT_CONCURRENCY, DEFAULT_MAX_ITEMS, DEFAULT_MAX_PAGES, DEFAULT_RETRIES, ForEach,
    MAX_CONCURRENCY, MAX_ITEMS, MAX_PAGES, MAX_RETRIES, Next, Paginate, Shared, Step, climbs,
};
use crate::config::{AuthDef, PaginateDef, StepDef};
use crate::failure::{Key, Phrases};
use crate::jq;
use crate::reference::{self, Names, Reference};
use crate::style::{Segment, Style};
use crate::template::{Template, ValueTemplate};

impl Builder<'_> {
    pub(super) fn step(
        &mut self,
        def: &StepDef,
        earlier: &[String],
        built: &[Option<Step>],
        shared: &Shared<'_>,
    ) -> Option<Step> {
        if super::ask::asks(def) {
            return self.ask_step(def, earlier, built);
        }
        let before = self.problems.len();
        let at = |field: &str| format!("step `{}`, `{field}`", def.name);
        if def.on_decline.is_some() {
            self.problem(
                &at("on_decline"),
                "`on_decline` is the answer of an `elicit` step the user declines".to_owned(),
            );
        }
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
                ("multipart", def.multipart.is_some()),
                ("styles", !def.styles.is_empty()),
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
        for (key, written) in &def.query {
            let place = at(&format!("query.{key}"));
            // `{value: "{{input.tags}}", style: pipeDelimited, explode: false}`: OpenAPI's
            // serialization of an array or object (issue #38.3).
            let (value, style) = match query_style(written) {
                Ok(styled) => styled,
                Err(e) => {
                    self.problem(&place, e);
                    continue;
                }
            };
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
                    "a query value is text, a number, a boolean, or a list of those, or `{value, style, explode}` for an input's array or object".to_owned(),
                );
                continue;
            }
            query.push((key.clone(), template, style));
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
        let mut cookies: Vec<(String, Template)> = Vec::new();
        for (key, value) in &def.cookies {
            let place = at(&format!("cookies.{key}"));
            let token = !key.is_empty()
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                self.problem(&place, format!("`{key}` is not a valid cookie name (RFC 6265 §4.1.1)"));
                continue;
            }
            if let Some(template) = self.template(&place, value, &names) {
                cookies.push((key.clone(), template));
            }
        }
        if def.tool.is_some() && !cookies.is_empty() {
            self.problem(
                &at("cookies"),
                "a `tool` step calls another tool of the catalog with `input`; it sends no request of its own"
                    .to_owned(),
            );
        }

        let mut styles = Vec::new();
        for (input, written) in &def.styles {
            let place = at(&format!("styles.{input}"));
            let name = written.name.as_deref().unwrap_or(input);
            match Segment::parse(written.style.as_deref(), written.explode, name) {
                Ok(_) if !self.signature.inputs.iter().any(|p| &p.name == input) => {
                    self.problem(&place, format!("`{input}` is not an input of the tool"));
                }
                Ok(segment) => styles.push((input.clone(), segment)),
                Err(e) => self.problem(&place, e),
            }
        }
        let bodies = [def.body.is_some(), def.form.is_some(), def.multipart.is_some()];
        let body = if bodies.iter().filter(|b| **b).count() > 1 {
            self.problem(
                &at("body"),
                "a step sends one of `body` (JSON), `form` or `multipart`, not more".to_owned(),
            );
            None
        } else if let Some(body) = &def.body {
            ValueTemplate::parse(body, &names, &mut programs)
                .map_err(|e| self.problem(&at("body"), e))
                .ok()
                .filter(|t| self.token_allowed(&at("body"), t.references()))
                .map(BodyTemplate::Json)
        } else if let Some(form) = &def.form {
            let mut fields = Vec::new();
            for (key, written) in form {
                let place = at(&format!("form.{key}"));
                let (value, style) = match query_style(written) {
                    Ok(styled) => styled,
                    Err(e) => {
                        self.problem(&place, e);
                        continue;
                    }
                };
                match ValueTemplate::parse(value, &names, &mut programs) {
                    Ok(t) if !self.token_allowed(&place, t.references()) => {}
                    Ok(t) if t.is_scalar() || style.is_some() => fields.push((key.clone(), t, style)),
                    Ok(_) => self.problem(
                        &place,
                        "a form value is text, a number or a boolean, or `{value, style, explode}` for an input's array or object".to_owned(),
                    ),
                    Err(e) => self.problem(&place, e),
                }
            }
            Some(BodyTemplate::Form(fields))
        } else if let Some(multipart) = &def.multipart {
            let mut fields = Vec::new();
            for (key, written) in multipart {
                let place = at(&format!("multipart.{key}"));
                // `{file: "{{input.doc}}"}`: a file, given as text or `{data, mimeType, filename}`.
                let (value, file) = match written {
                    Value::Object(members) if members.len() == 1 && members.contains_key("file") => {
                        (&members["file"], true)
                    }
                    other => (other, false),
                };
                match ValueTemplate::parse(value, &names, &mut programs) {
                    Ok(t) if !self.token_allowed(&place, t.references()) => {}
                    Ok(t) => fields.push((key.clone(), t, file)),
                    Err(e) => self.problem(&place, e),
                }
            }
            Some(BodyTemplate::Multipart(fields))
        } else {
            match (&def.tool, &def.input) {
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
            }
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
        let poll = def
            .poll
            .as_ref()
            .and_then(|p| self.poll(&def.name, p, def.tool.is_some()));
        if def.poll.is_some() && (def.paginate.is_some() || def.for_each.is_some()) {
            self.problem(
                &at("poll"),
                "a step that polls an operation neither follows pages nor runs `for_each`".to_owned(),
            );
        }
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

        let mut deps: Vec<usize> = self.after(def, earlier);
        if self.problems.len() > before {
            return None;
        }
        let (method, base, path) = (method?, base?, path?);
        let mut references: Vec<&Reference> = path.references().collect();
        references.extend(query.iter().flat_map(|(_, t, _)| t.references()));
        references.extend(
            headers
                .iter()
                .map(|(_, t)| t)
                .chain(cookies.iter().map(|(_, t)| t))
                .flat_map(Template::references),
        );
        references.extend(body.iter().flat_map(BodyTemplate::references));
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
        let visible = super::visible(&mut deps, built);
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
            styles,
            cookies,
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
            poll,
            ask: None,
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
}

/// A query or form value written as `{value: ..., style: ..., explode: ...}`: the value and its
/// style; any other value as it is, without one.
fn query_style(written: &Value) -> Result<(&Value, Option<Style>), String> {
    let Value::Object(members) = written else {
        return Ok((written, None));
    };
    if !["value", "style", "explode"].iter().any(|k| members.contains_key(*k)) {
        return Ok((written, None));
    }
    if let Some(other) = members
        .keys()
        .find(|k| !["value", "style", "explode"].contains(&k.as_str()))
    {
        return Err(format!(
            "`{other}` is not a key of a styled query value; write `{{value: \"{{{{input.NAME}}}}\", style: form, explode: false}}`"
        ));
    }
    let value = members
        .get("value")
        .ok_or("a styled query value needs `value`, e.g. `value: \"{{input.tags}}\"`")?;
    let style = match members.get("style") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err("`style` is a word: form, spaceDelimited, pipeDelimited or deepObject".to_owned()),
    };
    let explode = match members.get("explode") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err("`explode` is true or false".to_owned()),
    };
    Ok((value, Some(Style::parse(style, explode)?)))
}
