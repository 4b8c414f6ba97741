//! The sculpt overlay: a small YAML file that shapes imported tools, kept apart from the
//! generated catalog so a re-import never loses it.
//!
//! ```yaml
//! toolkit: PetShop                 # the toolkit's name (else --toolkit, else the title)
//! auth: { forward: bearer }        # the toolkit's outbound `auth`, as a catalog writes it
//! headers: { X-Client: toolhost }  # headers every tool sends ("{{secret.NAME}}" allowed)
//! tools:
//!   get_pet_by_id:                 # an imported tool, by its imported name
//!     name: pet                    # rename the tool
//!     description: Look up one pet.
//!     tags: [pets]
//!     rename: { pet_id: id }       # rename inputs
//!     describe: { id: The pet's number, as the shop prints it. }  # reword inputs
//!     auth: { bearer: "{{secret.PET_TOKEN}}" }  # this tool's own `auth`
//!     headers: { X-Scope: pets }   # headers this tool sends
//!     set: { x_trace: toolhost }   # fix inputs (or non-scalar fields) to a constant or "{{secret.NAME}}"
//!     json: [owner]                # take a non-scalar field as a JSON-encoded string input
//!     keep: [id]                   # the inputs a model fills; other optional ones are left out
//!     outputs: [name, status]      # keep only these outputs
//!     errors:                      # word a refusal for the model, per status (else the API's reason)
//!       "404": "no pet has that number; list the pets to find it"
//!       "422": { message: "the shop refused: {{call.body.message}}", prompt: "Fix the owner." }
//!   delete_pet: { skip: true }     # do not import it
//! combine:
//!   pet_card:                      # a new tool chaining operations, one step each
//!     description: A pet and its owner.
//!     steps: [get_pet_by_id, get_owner]
//!     set: { get_owner.owner_id: "{{get_pet_by_id.body.owner_id}}" }
//!     outputs: { pet: get_pet_by_id.body.name, owner: get_owner.body.name }
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Draft, STEP, Structured, snake};

/// The overlay file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    #[serde(default)]
    pub toolkit: Option<String>,
    /// The toolkit's outbound `auth` (a catalog's `auth` block), replacing the imported one.
    #[serde(default)]
    pub auth: Option<Value>,
    /// Where the API is, replacing the description's `servers` (as `--base-url` does, which
    /// wins): a URL, or `{{secret.NAME}}` to read it from a server secret when serving.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Headers every tool of the toolkit sends, added to (or replacing) the imported ones.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolOverlay>,
    #[serde(default)]
    pub combine: BTreeMap<String, Combine>,
}

/// How one imported tool is sculpted.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverlay {
    #[serde(default)]
    pub skip: bool,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// Input (by its name after `rename`) → the description the model reads instead.
    #[serde(default)]
    pub describe: BTreeMap<String, String>,
    /// The tool's own outbound `auth`, replacing the toolkit's.
    #[serde(default)]
    pub auth: Option<Value>,
    /// Headers the tool sends beside the toolkit's (its own win).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub set: BTreeMap<String, Value>,
    #[serde(default)]
    pub json: Vec<String>,
    #[serde(default)]
    pub keep: Option<Vec<String>>,
    #[serde(default)]
    pub outputs: Option<Vec<String>>,
    /// Behaviour hints, replacing the imported ones: `{read_only, destructive, idempotent,
    /// open_world}`.
    #[serde(default)]
    pub annotations: Option<Value>,
    /// A status (`"404"`), a class (`4xx`, `5xx`), `timeout`, `unreachable` or `missing` → how
    /// the model is told of that failure (a message, or `{message, prompt, code, retryable,
    /// retry_after_ms}`), written as the step's `errors:` entry (issue #38.4): it replaces the
    /// API's own reason for that status.
    #[serde(default)]
    pub errors: BTreeMap<String, Value>,
}

/// A tool chaining several operations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Combine {
    pub description: String,
    pub steps: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// `operation.input` → a value or a template reading earlier steps.
    #[serde(default)]
    pub set: BTreeMap<String, Value>,
    #[serde(default)]
    pub keep: Option<Vec<String>>,
    /// Output name → a path (`op.body.field`) or `{path, type, description}`.
    pub outputs: BTreeMap<String, Value>,
}

impl Overlay {
    /// Reads an overlay file's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_saphyr::from_str(text).map_err(|e| format!("not a valid overlay: {e}"))
    }

    /// The drafts sculpted: skipped ones removed, each named one shaped, combined ones added.
    /// A name the document does not have is a note (a re-import may have dropped it); a
    /// mistake in what an entry asks is an error naming the tool.
    pub fn apply(&self, drafts: Vec<Draft>, notes: &mut Vec<String>) -> Result<Vec<Draft>, String> {
        let originals: BTreeMap<String, Draft> = drafts.iter().map(|d| (d.name.clone(), d.clone())).collect();
        for name in self.tools.keys() {
            if !originals.contains_key(name) {
                notes.push(format!(
                    "the overlay sculpts `{name}`, which this document (with these filters) does not have"
                ));
            }
        }
        let mut errors = Vec::new();
        let mut out = Vec::new();
        for mut draft in drafts {
            let Some(shape) = self.tools.get(&draft.name) else {
                out.push(draft);
                continue;
            };
            if shape.skip {
                continue;
            }
            let original = draft.name.clone();
            match shape.sculpt(&mut draft) {
                Ok(()) => out.push(draft),
                Err(e) => errors.push(format!("overlay, tool `{original}`: {e}")),
            }
        }
        for (name, combine) in &self.combine {
            match combine.build(name, &originals) {
                Ok(draft) => out.push(draft),
                Err(e) => errors.push(format!("overlay, combined tool `{name}`: {e}")),
            }
        }
        let mut seen = BTreeSet::new();
        for d in &out {
            if !seen.insert(d.name.clone()) {
                errors.push(format!("overlay: two tools are named `{}`", d.name));
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors.join("\n"))
        }
    }
}

impl Overlay {
    /// Sets the toolkit's `auth` and `headers` the overlay names on the imported `backend:`
    /// defaults.
    pub fn apply_toolkit(&self, defaults: &mut Value) {
        if let Some(auth) = &self.auth {
            defaults["auth"] = auth.clone();
        }
        for (header, value) in &self.headers {
            defaults["headers"][header] = json!(value);
        }
    }

    /// What the overlay sets explicitly, which a re-import writes over the file's own values:
    /// the toolkit's `auth` and `headers.NAME`, a tool's `TOOL.auth` and `TOOL.headers.NAME`
    /// (by the tool's name after the overlay).
    pub fn fixed(&self) -> BTreeSet<String> {
        let mut fixed = BTreeSet::new();
        if self.auth.is_some() {
            fixed.insert("auth".to_owned());
        }
        if self.base_url.is_some() {
            fixed.insert("base_url".to_owned());
        }
        fixed.extend(self.headers.keys().map(|h| format!("headers.{h}")));
        for (name, shape) in &self.tools {
            let name = shape.name.as_deref().unwrap_or(name);
            if shape.auth.is_some() {
                fixed.insert(format!("{name}.auth"));
            }
            fixed.extend(shape.headers.keys().map(|h| format!("{name}.headers.{h}")));
        }
        fixed
    }
}

/// The `{{secret.NAME}}` names the toolkit's defaults and its tools read.
pub fn secrets(defaults: &Value, tools: &[Draft]) -> BTreeSet<String> {
    let versions: Vec<Value> = tools.iter().map(|d| d.to_version("1.0.0")).collect();
    secret_names(std::iter::once(defaults).chain(&versions))
}

/// The `{{secret.NAME}}` names anywhere in `values`.
pub fn secret_names<'a>(values: impl IntoIterator<Item = &'a Value>) -> BTreeSet<String> {
    toolhost_sculpt::secrets::referenced(values)
}

/// Writes on each tool's first step the fields the API requires that the tool still leaves out
/// (`requires`), so that loading the catalog warns that the tool cannot work (issue #32.8).
pub fn require_left_out(drafts: &mut [Draft]) {
    for draft in drafts {
        let fields: Vec<String> = draft
            .structured
            .iter()
            // A path parameter left out leaves its `{name}` hole, which the loader warns of.
            .filter(|f| f.required && f.place != "path")
            .map(|f| match f.place {
                "whole_body" => "body".to_owned(),
                place => format!("{place}.{}", f.name),
            })
            .collect();
        if let (false, Some(step)) = (fields.is_empty(), draft.steps.first_mut()) {
            step["requires"] = json!(fields);
        }
    }
}

impl ToolOverlay {
    fn sculpt(&self, draft: &mut Draft) -> Result<(), String> {
        if draft.backend.is_some() && (!self.set.is_empty() || !self.json.is_empty()) {
            return Err("`set` and `json` shape HTTP requests; an upstream's tool takes its inputs as they are (`keep` leaves optional ones out)".to_owned());
        }
        if draft.backend.is_some() && !self.errors.is_empty() {
            return Err("`errors` words an HTTP API's statuses; an upstream's tool says its own failures (a catalog's tool-level `errors:` rewords them by code)".to_owned());
        }
        if let Some(name) = &self.name {
            draft.name.clone_from(name);
        }
        if let Some(description) = &self.description {
            draft.description.clone_from(description);
        }
        if let Some(tags) = &self.tags {
            draft.tags.clone_from(tags);
        }
        if let Some(annotations) = &self.annotations {
            draft.annotations = Some(annotations.clone());
        }
        for field in &self.json {
            take_as_json(draft, field)?;
        }
        for (from, to) in &self.rename {
            rename_input(draft, from, to)?;
        }
        for (input, text) in &self.describe {
            describe_input(draft, input, text)?;
        }
        word_errors(draft, &self.errors)?;
        if let Some(auth) = &self.auth {
            match &mut draft.backend {
                Some(backend) => backend["auth"] = auth.clone(),
                None => draft.auth = Some(auth.clone()),
            }
        }
        for (header, value) in &self.headers {
            match &mut draft.backend {
                Some(backend) => backend["headers"][header] = json!(value),
                None => {
                    for step in &mut draft.steps {
                        step["headers"][header] = json!(value);
                    }
                }
            }
        }
        for (name, value) in &self.set {
            set(draft, 0, name, value)?;
        }
        if let Some(keep) = &self.keep {
            keep_only(draft, keep)?;
        }
        if let Some(keep) = &self.outputs {
            let unknown: Vec<&String> = keep
                .iter()
                .filter(|k| !draft.outputs.iter().any(|o| o["name"] == json!(k)))
                .collect();
            if !unknown.is_empty() {
                return Err(format!(
                    "`outputs` names {}, which the tool does not have (it has: {})",
                    list(unknown.iter().map(|s| s.as_str())),
                    list(draft.outputs.iter().filter_map(|o| o["name"].as_str()))
                ));
            }
            draft.outputs.retain(|o| keep.iter().any(|k| o["name"] == json!(k)));
            if let Some(mapping) = draft.mapping.as_object_mut() {
                mapping.retain(|k, _| keep.contains(k));
            }
        }
        Ok(())
    }
}

impl Combine {
    fn build(&self, name: &str, originals: &BTreeMap<String, Draft>) -> Result<Draft, String> {
        if self.steps.is_empty() {
            return Err("`steps` names no operation".to_owned());
        }
        let mut draft = blank(format!("combines {}", self.steps.join(", ")), name, &self.description);
        draft.tags.clone_from(&self.tags);
        let mut typed: BTreeMap<String, (Value, String)> = BTreeMap::new();
        for op in &self.steps {
            if originals.get(op).is_some_and(|d| d.backend.is_some()) {
                return Err(format!(
                    "step `{op}` is an upstream server's tool; only HTTP operations are combined"
                ));
            }
            let Some(original) = originals.get(op) else {
                return Err(format!(
                    "step `{op}` is not an imported operation (they are: {})",
                    list(originals.keys().map(String::as_str))
                ));
            };
            let mut step = original.steps.first().cloned().unwrap_or_default();
            step["name"] = json!(op);
            if let Some(auth) = &original.auth {
                step["auth"] = auth.clone();
            }
            draft.steps.push(step);
            for input in &original.inputs {
                match draft.inputs.iter().find(|i| i["name"] == input["name"]) {
                    Some(same) if same["type"] != input["type"] => {
                        return Err(format!(
                            "input `{}` of `{op}` has another type than an earlier step's input of that name; rename one with `set`",
                            input["name"].as_str().unwrap_or_default()
                        ));
                    }
                    Some(_) => {}
                    None => draft.inputs.push(input.clone()),
                }
            }
            for output in &original.outputs {
                let source = original.mapping[output["name"].as_str().unwrap_or_default()]
                    .as_str()
                    .map(|p| p.replacen(&format!("{STEP}."), &format!("{op}."), 1));
                if let Some(path) = source {
                    typed.insert(
                        path,
                        (
                            output["type"].clone(),
                            output["description"].as_str().unwrap_or_default().to_owned(),
                        ),
                    );
                }
            }
        }
        for (target, value) in &self.set {
            let Some((op, input)) = target.split_once('.') else {
                return Err(format!("`set` key `{target}` is `operation.input`"));
            };
            let Some(index) = self.steps.iter().position(|s| s == op) else {
                return Err(format!(
                    "`set` key `{target}` names `{op}`, which is not one of the steps"
                ));
            };
            set(&mut draft, index, input, value)?;
        }
        // An input no step reads any more (all of them set) is not the tool's.
        let steps = &draft.steps;
        draft
            .inputs
            .retain(|i| reads(steps, i["name"].as_str().unwrap_or_default()));
        if let Some(keep) = &self.keep {
            keep_only(&mut draft, keep)?;
        }
        let mut mapping = Map::new();
        for (output, spec) in &self.outputs {
            let (path, kind, description) = match spec {
                Value::String(path) => (path.clone(), None, None),
                Value::Object(fields) => (
                    fields
                        .get("path")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    fields.get("type").cloned(),
                    fields.get("description").and_then(Value::as_str).map(str::to_owned),
                ),
                _ => return Err(format!("output `{output}` is a path or `{{path, type, description}}`")),
            };
            let known = typed.get(&path);
            draft.outputs.push(json!({
                "name": output,
                "type": kind.or_else(|| known.map(|k| k.0.clone())).unwrap_or(json!("json")),
                "required": false,
                "description": description.or_else(|| known.map(|k| k.1.clone())).unwrap_or_else(|| format!("From {path}.")),
            }));
            mapping.insert(output.clone(), json!(path));
        }
        draft.mapping = Value::Object(mapping);
        Ok(draft)
    }
}

/// A tool with nothing in it yet.
fn blank(source: String, name: &str, description: &str) -> Draft {
    Draft {
        source,
        name: name.to_owned(),
        description: description.to_owned(),
        tags: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        steps: Vec::new(),
        mapping: json!({}),
        structured: Vec::new(),
        auth: None,
        backend: None,
        annotations: None,
        version: None,
    }
}

/// Whether any of `steps` still reads input `name` (a hole of it anywhere in a string).
fn reads(steps: &[Value], name: &str) -> bool {
    fn any(value: &Value, hole: &str) -> bool {
        match value {
            Value::String(s) => s.contains(hole),
            Value::Array(items) => items.iter().any(|v| any(v, hole)),
            Value::Object(members) => members.values().any(|v| any(v, hole)),
            _ => false,
        }
    }
    let hole = hole(name);
    steps.iter().any(|s| any(s, &hole))
}

/// The hole of an input, as templates write it.
fn hole(name: &str) -> String {
    format!("{{{{input.{name}}}}}")
}

/// Replaces, in every string below `value`, a string that is exactly `from` by `to` (keeping
/// its JSON type) and `from` within text by `to` as text. Members and elements whose value was
/// exactly `from` are removed when `to` is `None`.
fn substitute(value: &mut Value, from: &str, to: Option<&Value>) {
    match value {
        Value::Object(members) => {
            let mut remove = Vec::new();
            for (key, member) in members.iter_mut() {
                if member.as_str() == Some(from) {
                    match to {
                        Some(to) => *member = to.clone(),
                        None => remove.push(key.clone()),
                    }
                } else {
                    substitute(member, from, to);
                }
            }
            for key in remove {
                members.remove(&key);
            }
        }
        Value::Array(items) => {
            items.retain(|i| to.is_some() || i.as_str() != Some(from));
            for item in items {
                if item.as_str() == Some(from) {
                    if let Some(to) = to {
                        *item = to.clone();
                    }
                } else {
                    substitute(item, from, to);
                }
            }
        }
        Value::String(text) if text.contains(from) => {
            if let Some(to) = to {
                let to = match to {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                *text = text.replace(from, &to);
            }
        }
        _ => {}
    }
}

/// Fixes input (or non-scalar field) `name` of the draft's step `index` to `value`.
fn set(draft: &mut Draft, index: usize, name: &str, value: &Value) -> Result<(), String> {
    if let Some(position) = draft.inputs.iter().position(|i| i["name"] == json!(name)) {
        if let Some(step) = draft.steps.get_mut(index) {
            substitute(step, &hole(name), Some(value));
        }
        if !reads(&draft.steps, name) {
            draft.inputs.remove(position);
        }
        return Ok(());
    }
    if let Some(position) = draft.structured.iter().position(|f| f.name == name) {
        let field = draft.structured.remove(position);
        place(draft, index, &field, value.clone());
        return Ok(());
    }
    Err(format!(
        "`set` names `{name}`, which is neither an input ({}) nor a field left out ({})",
        list(draft.inputs.iter().filter_map(|i| i["name"].as_str())),
        list(draft.structured.iter().map(|f| f.name.as_str()))
    ))
}

/// Puts `value` where `field` goes in step `index`.
fn place(draft: &mut Draft, index: usize, field: &Structured, value: Value) {
    let Some(step) = draft.steps.get_mut(index) else { return };
    if field.place == "whole_body" {
        step["body"] = value;
        return;
    }
    if !step[field.place].is_object() {
        step[field.place] = json!({});
    }
    step[field.place][&field.name] = value;
}

/// Takes a non-scalar field as a string input holding its JSON, decoded by jq when sent: one
/// left out, or one the import took whole as a `json` input (which N-ACT cannot express, while
/// a string it can).
fn take_as_json(draft: &mut Draft, name: &str) -> Result<(), String> {
    let whole = draft
        .inputs
        .iter()
        .position(|i| i["name"] == json!(snake(name)) && i["type"] == "json");
    if let Some(position) = whole {
        let input = draft.inputs.remove(position);
        let input_name = input["name"].as_str().unwrap_or_default().to_owned();
        let text = input["description"].as_str().unwrap_or_default();
        let required = input["required"] != json!(false);
        draft
            .inputs
            .push(json_text(&input_name, text, &input["schema"], required));
        let decoded = json!({"jq": format!(".input.{input_name} | fromjson")});
        for step in &mut draft.steps {
            substitute(step, &hole(&input_name), Some(&decoded));
        }
        return Ok(());
    }
    let Some(position) = draft.structured.iter().position(|f| f.name == name) else {
        return Err(format!(
            "`json` names `{name}`, which is not a field left out ({})",
            list(draft.structured.iter().map(|f| f.name.as_str()))
        ));
    };
    let field = draft.structured.remove(position);
    let input = snake(&field.name);
    if draft.inputs.iter().any(|i| i["name"] == json!(input)) {
        return Err(format!("an input `{input}` exists already; rename it first"));
    }
    draft
        .inputs
        .push(json_text(&input, &field.description, &field.schema, field.required));
    place(draft, 0, &field, json!({"jq": format!(".input.{input} | fromjson")}));
    Ok(())
}

/// A string input `name` holding a value of `schema` as JSON text, described as such.
fn json_text(name: &str, description: &str, schema: &Value, required: bool) -> Value {
    let shape = toolhost_client::describe_schema(schema);
    let mut description = description.trim().trim_end_matches('.').to_owned();
    if description.is_empty() {
        description = format!("The {name}");
    }
    let mut spec = json!({
        "name": name,
        "type": "string",
        "description": format!("{description}, as JSON text: {shape}."),
    });
    if !required {
        spec["required"] = json!(false);
    }
    spec
}

/// Writes the overlay's `errors:` wording on the tool's request step, beside (and over) any
/// the import wrote. The texts are checked as templates when the catalog loads.
fn word_errors(draft: &mut Draft, errors: &BTreeMap<String, Value>) -> Result<(), String> {
    for (key, wording) in errors {
        let status = key.parse::<u16>().is_ok_and(|s| (400..600).contains(&s));
        if !status && !matches!(key.as_str(), "4xx" | "5xx" | "timeout" | "unreachable" | "missing") {
            return Err(format!(
                "`errors.{key}`: a key is a status from 400 to 599 (quoted: \"404\"), `4xx`, `5xx`, `timeout`, `unreachable` or `missing`"
            ));
        }
        let worded = match wording {
            Value::String(text) => !text.trim().is_empty(),
            Value::Object(fields) => fields.get("message").or_else(|| fields.get("prompt")).is_some(),
            _ => false,
        };
        if !worded {
            return Err(format!(
                "`errors.{key}` is a message, or `{{message, prompt, code, retryable, retry_after_ms}}` with a message or a prompt"
            ));
        }
    }
    let Some(step) = draft.steps.first_mut() else {
        return Ok(());
    };
    for (key, wording) in errors {
        if !step["errors"].is_object() {
            step["errors"] = json!({});
        }
        step["errors"][key] = wording.clone();
    }
    Ok(())
}

/// Rewords input `name`'s description.
fn describe_input(draft: &mut Draft, name: &str, text: &str) -> Result<(), String> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > super::MAX_DESCRIPTION {
        return Err(format!(
            "`describe.{name}` is empty or longer than {} characters",
            super::MAX_DESCRIPTION
        ));
    }
    let Some(input) = draft.inputs.iter_mut().find(|i| i["name"] == json!(name)) else {
        return Err(format!(
            "`describe` names input `{name}`, which the tool does not have (it has: {})",
            list(draft.inputs.iter().filter_map(|i| i["name"].as_str()))
        ));
    };
    input["description"] = json!(text);
    Ok(())
}

fn rename_input(draft: &mut Draft, from: &str, to: &str) -> Result<(), String> {
    let Some(input) = draft.inputs.iter_mut().find(|i| i["name"] == json!(from)) else {
        return Err(format!(
            "`rename` names input `{from}`, which the tool does not have (it has: {})",
            list(draft.inputs.iter().filter_map(|i| i["name"].as_str()))
        ));
    };
    input["name"] = json!(to);
    for step in &mut draft.steps {
        substitute(step, &hole(from), Some(&json!(hole(to))));
    }
    Ok(())
}

/// Keeps the inputs in `keep`; other optional inputs are left out of the requests, and a
/// required one not kept is an error (fix it with `set`).
fn keep_only(draft: &mut Draft, keep: &[String]) -> Result<(), String> {
    let unknown: Vec<&str> = keep
        .iter()
        .filter(|k| !draft.inputs.iter().any(|i| i["name"] == json!(k)))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "`keep` names {}, which the tool does not have (it has: {})",
            list(unknown.into_iter()),
            list(draft.inputs.iter().filter_map(|i| i["name"].as_str()))
        ));
    }
    let mut dropped = Vec::new();
    for input in &draft.inputs {
        let name = input["name"].as_str().unwrap_or_default().to_owned();
        if keep.contains(&name) {
            continue;
        }
        if input["required"] != json!(false) {
            return Err(format!(
                "input `{name}` is required by the API, so it is kept or fixed with `set`"
            ));
        }
        dropped.push(name);
    }
    for name in &dropped {
        for step in &mut draft.steps {
            substitute(step, &hole(name), None);
        }
    }
    draft.inputs.retain(|i| keep.iter().any(|k| i["name"] == json!(k)));
    Ok(())
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> Draft {
        let mut draft = blank("GET /pets/{id}".to_owned(), "pet", "A pet.");
        draft.inputs = vec![json!({"name": "id", "type": "int", "description": "The id."})];
        draft.steps = vec![json!({"name": STEP, "method": "GET", "path": "/pets/{{input.id}}"})];
        draft
    }

    #[test]
    fn describe_rewords_an_input_and_names_the_ones_there_are() {
        let overlay = Overlay::parse("tools:\n  pet:\n    describe: { id: The collar number. }\n").unwrap();
        let drafts = overlay.apply(vec![draft()], &mut Vec::new()).unwrap();
        assert_eq!(drafts[0].inputs[0]["description"], "The collar number.");
        let wrong = Overlay::parse("tools:\n  pet:\n    describe: { pet_id: x }\n").unwrap();
        let error = wrong.apply(vec![draft()], &mut Vec::new()).unwrap_err();
        assert_eq!(
            error,
            "overlay, tool `pet`: `describe` names input `pet_id`, which the tool does not have (it has: id)"
        );
    }

    #[test]
    fn errors_are_worded_per_status_on_the_step_and_bad_keys_named() {
        let overlay = Overlay::parse(
            "tools:\n  pet:\n    errors:\n      \"404\": no pet has that number\n      4xx: { message: \"refused: {{call.body.message}}\", prompt: Check the id. }\n",
        )
        .unwrap();
        let drafts = overlay.apply(vec![draft()], &mut Vec::new()).unwrap();
        assert_eq!(
            drafts[0].steps[0]["errors"],
            json!({"404": "no pet has that number", "4xx": {"message": "refused: {{call.body.message}}", "prompt": "Check the id."}})
        );
        for (wrong, said) in [
            ("\"200\": fine", "`errors.200`: a key is a status from 400 to 599"),
            ("\"404\": { code: x }", "`errors.404` is a message, or"),
        ] {
            let overlay = Overlay::parse(&format!("tools:\n  pet:\n    errors:\n      {wrong}\n")).unwrap();
            let error = overlay.apply(vec![draft()], &mut Vec::new()).unwrap_err();
            assert!(error.starts_with(&format!("overlay, tool `pet`: {said}")), "{error}");
        }
    }

    #[test]
    fn required_fields_left_out_are_written_for_the_loader_to_warn_of() {
        let mut drafts = vec![draft(), draft()];
        let field = |name: &str, place: &'static str, required: bool| Structured {
            name: name.to_owned(),
            place,
            schema: json!({"type": "object"}),
            required,
            description: String::new(),
        };
        drafts[0].structured = vec![
            field("owner", "body", true),
            field("tags", "body", false),
            field("body", "whole_body", true),
        ];
        require_left_out(&mut drafts);
        assert_eq!(drafts[0].steps[0]["requires"], json!(["body.owner", "body"]));
        assert!(drafts[1].steps[0].get("requires").is_none());
    }

    #[test]
    fn auth_and_headers_are_set_and_their_secrets_read() {
        let overlay = Overlay::parse(
            "auth: { bearer: \"{{secret.KIT}}\" }\nheaders: { X-A: a }\ntools:\n  pet:\n    name: animal\n    auth: none\n    headers: { X-B: \"{{ secret.B }}\" }\n",
        )
        .unwrap();
        let drafts = overlay.apply(vec![draft()], &mut Vec::new()).unwrap();
        assert_eq!(drafts[0].auth, Some(json!("none")));
        assert_eq!(drafts[0].steps[0]["headers"], json!({"X-B": "{{ secret.B }}"}));
        let mut defaults = json!({"kind": "http", "headers": {"Accept": "application/json"}});
        overlay.apply_toolkit(&mut defaults);
        assert_eq!(defaults["headers"], json!({"Accept": "application/json", "X-A": "a"}));
        assert_eq!(
            secrets(&defaults, &drafts).into_iter().collect::<Vec<_>>(),
            ["B", "KIT"]
        );
        assert_eq!(
            overlay.fixed().into_iter().collect::<Vec<_>>(),
            ["animal.auth", "animal.headers.X-B", "auth", "headers.X-A"]
        );
    }
}
