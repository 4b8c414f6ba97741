//! Steps that ask instead of sending a request: `elicit` (the user: a form, or a URL to visit),
//! `sample` (the client's model) and `roots` (the client's roots). Their templates may read the
//! inputs and earlier steps, never secrets (the question reaches the client).
//!
//! The rule that keeps a resumed call from acting twice (docs/asking.md): an asking step may
//! not follow, directly or not, a step that changes something (one not idempotent), and every
//! such step waits for every asking step. A call asked over MCP 2026-07-28 ends at its first
//! unanswered question and is run again from the start with the answers, so only steps that
//! are safe to repeat (idempotent ones) can run before an answer.

use serde_json::Value;

use super::{Builder, Step};
use crate::config::{SampleDef, StepDef};
use crate::failure::Phrases;
use crate::jq;
use crate::reference::Names;
use crate::template::Template;

/// Tokens a `sample` step asks for when it does not say.
const DEFAULT_MAX_TOKENS: u32 = 1000;

/// What an asking step asks.
#[derive(Debug)]
pub(crate) enum AskStep {
    /// A form: the message and the answer's schema.
    Form {
        message: Template,
        schema: Value,
        on_decline: Option<Value>,
    },
    /// An out-of-band step at a URL.
    Url {
        message: Template,
        url: Template,
        on_decline: Option<Value>,
    },
    /// A request to the client's model.
    Sample {
        messages: Vec<(String, Template)>,
        system: Option<Template>,
        max_tokens: u32,
        temperature: Option<f64>,
    },
    /// The client's roots.
    Roots,
}

impl AskStep {
    /// Every template of the question.
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            Self::Form { message, .. } => vec![message],
            Self::Url { message, url, .. } => vec![message, url],
            Self::Sample { messages, system, .. } => messages.iter().map(|(_, t)| t).chain(system).collect(),
            Self::Roots => Vec::new(),
        }
    }
}

/// Whether the step asks rather than sends.
pub(super) fn asks(def: &StepDef) -> bool {
    def.elicit.is_some() || def.sample.is_some() || def.roots
}

impl Builder<'_> {
    /// Builds an asking step; `earlier` are the names of the steps before it, `built` them.
    pub(super) fn ask_step(&mut self, def: &StepDef, earlier: &[String], built: &[Option<Step>]) -> Option<Step> {
        let before = self.problems.len();
        let at = |field: &str| format!("step `{}`, `{field}`", def.name);
        let kinds = [def.elicit.is_some(), def.sample.is_some(), def.roots];
        if kinds.iter().filter(|k| **k).count() > 1 {
            self.problem(
                &at("elicit"),
                "a step asks one thing: `elicit`, `sample` or `roots`".to_owned(),
            );
        }
        let request_parts = [
            ("tool", def.tool.is_some()),
            ("input", def.input.is_some()),
            ("method", def.method.is_some()),
            ("base_url", def.base_url.is_some()),
            ("path", def.path.is_some()),
            ("query", !def.query.is_empty()),
            ("headers", !def.headers.is_empty()),
            ("cookies", !def.cookies.is_empty()),
            ("body", def.body.is_some()),
            ("form", def.form.is_some()),
            ("multipart", def.multipart.is_some()),
            ("styles", !def.styles.is_empty()),
            ("poll", def.poll.is_some()),
            ("auth", def.auth.is_some()),
            ("errors", !def.errors.is_empty()),
            ("accept", !def.accept.is_empty()),
            ("expect", !def.expect.is_empty()),
            ("paginate", def.paginate.is_some()),
            ("for_each", def.for_each.is_some()),
            ("retries", def.retries.is_some()),
            ("timeout_ms", def.timeout_ms.is_some()),
            ("idempotent", def.idempotent.is_some()),
        ];
        for (key, _) in request_parts.iter().filter(|(_, set)| *set) {
            self.problem(
                &at(key),
                "a step that asks (`elicit`, `sample`, `roots`) sends no request; only `when` and `after` go with it"
                    .to_owned(),
            );
        }
        if def.on_decline.is_some() && def.elicit.is_none() {
            self.problem(
                &at("on_decline"),
                "`on_decline` is the answer of an `elicit` step the user declines".to_owned(),
            );
        }
        // What the question reaches is the client: inputs and earlier steps, no secrets.
        let names = self.names(earlier, false);
        let ask = if let Some(elicit) = &def.elicit {
            let message = self.template(&at("elicit.message"), &elicit.message, &names);
            match (&elicit.schema, &elicit.url) {
                (Some(schema), None) => {
                    self.form_schema(&at("elicit.schema"), schema);
                    Some(AskStep::Form {
                        message: message?,
                        schema: schema.clone(),
                        on_decline: def.on_decline.clone(),
                    })
                }
                (None, Some(url)) => {
                    let url = self.template(&at("elicit.url"), url, &names);
                    Some(AskStep::Url {
                        message: message?,
                        url: url?,
                        on_decline: def.on_decline.clone(),
                    })
                }
                _ => {
                    self.problem(
                        &at("elicit"),
                        "give the form's `schema`, or the `url` the user visits (one of them)".to_owned(),
                    );
                    None
                }
            }
        } else if let Some(sample) = &def.sample {
            self.sample(&at("sample"), sample, &names)
        } else {
            Some(AskStep::Roots)
        };
        let when = def.when.as_deref().and_then(|code| {
            jq::compile(code)
                .map_err(|e| self.problem(&at("when"), format!("the jq program does not compile: {e}")))
                .ok()
        });
        let mut deps: Vec<usize> = self.after(def, earlier);
        let ask = ask?;
        deps.extend(
            ask.templates()
                .iter()
                .flat_map(|t| t.references())
                .filter_map(|r| r.step()),
        );
        let visible = super::visible(&mut deps, built);
        if let Some(acting) = visible
            .iter()
            .find_map(|&d| built[d].as_ref().filter(|s| !s.idempotent))
        {
            let place = format!("step `{}`", def.name);
            self.problem(
                &place,
                format!(
                    "it asks after `{}`, which changes something (it is not idempotent); a call that asks may be resumed from the start with the answer, so ask before every step that changes something",
                    acting.name
                ),
            );
        }
        if self.problems.len() > before {
            return None;
        }
        let shape = match &ask {
            AskStep::Form { .. } | AskStep::Url { .. } => "elicit",
            AskStep::Sample { .. } => "sample",
            AskStep::Roots => "roots",
        };
        Some(Step {
            name: def.name.clone(),
            tool: None,
            method: reqwest::Method::GET,
            base: String::new(),
            path: Template::hole_free(),
            url: None,
            query: Vec::new(),
            headers: Vec::new(),
            cookies: Vec::new(),
            body: None,
            when,
            programs: Vec::new(),
            index: earlier.len(),
            deps,
            visible,
            idempotent: true,
            retries: 0,
            timeout: None,
            auth: None,
            errors: Phrases(Vec::new()),
            accept: Vec::new(),
            expect: Vec::new(),
            shape: shape.to_owned(),
            paginate: None,
            for_each: None,
            poll: None,
            styles: Vec::new(),
            ask: Some(ask),
        })
    }

    /// A form's schema as elicitation allows it: an object of flat properties.
    fn form_schema(&mut self, place: &str, schema: &Value) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if schema.get("type").and_then(Value::as_str) != Some("object") || properties.is_none() {
            self.problem(
                place,
                "a form's schema is `{type: object, properties: {...}}`, each property a text, number, boolean or enum"
                    .to_owned(),
            );
            return;
        }
        for (name, property) in properties.into_iter().flatten() {
            let flat = match property.get("type").and_then(Value::as_str) {
                Some("string" | "number" | "integer" | "boolean") => true,
                // A multi-select: an array of enum values (SEP-1330).
                Some("array") => property
                    .get("items")
                    .is_some_and(|i| i.get("enum").is_some() || i.get("anyOf").is_some()),
                _ => false,
            };
            if !flat {
                self.problem(
                    place,
                    format!("property `{name}` is not a text, number, integer, boolean, enum or list of enum values; a form has flat fields only"),
                );
            }
        }
    }

    fn sample(&mut self, place: &str, def: &SampleDef, names: &Names<'_>) -> Option<AskStep> {
        let before = self.problems.len();
        let mut messages = Vec::new();
        if let Some(prompt) = &def.prompt {
            if !def.messages.is_empty() {
                self.problem(
                    place,
                    "write `prompt` (one user message) or `messages`, not both".to_owned(),
                );
            }
            messages.extend(
                self.template(&format!("{place}.prompt"), prompt, names)
                    .map(|t| ("user".to_owned(), t)),
            );
        }
        for (i, message) in def.messages.iter().enumerate() {
            if !matches!(message.role.as_str(), "user" | "assistant") {
                self.problem(
                    &format!("{place}.messages[{i}].role"),
                    format!("`{}` is neither `user` nor `assistant`", message.role),
                );
            }
            let text = self.template(&format!("{place}.messages[{i}].text"), &message.text, names);
            messages.extend(text.map(|t| (message.role.clone(), t)));
        }
        if def.prompt.is_none() && def.messages.is_empty() {
            self.problem(
                place,
                "say what to ask the model: `prompt: \"...\"` or `messages: [{role: user, text: ...}]`".to_owned(),
            );
        }
        let system = match &def.system {
            Some(text) => Some(self.template(&format!("{place}.system"), text, names)?),
            None => None,
        };
        let max_tokens = def.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        if max_tokens == 0 {
            self.problem(
                &format!("{place}.max_tokens"),
                "the model needs at least one token".to_owned(),
            );
        }
        if def.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            self.problem(&format!("{place}.temperature"), "from 0 to 2".to_owned());
        }
        (self.problems.len() == before).then_some(AskStep::Sample {
            messages,
            system,
            max_tokens,
            temperature: def.temperature,
        })
    }
}
