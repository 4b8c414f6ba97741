//! Inputs and outputs: each definition checked and turned into its typed parameter.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::checks::{Context, at, check_description, check_name};
use crate::catalog::file::{EnumValueDef, InputDef, OutputDef};
use crate::catalog::problem::Place;
use crate::catalog::schema::{self, Spelling};
use crate::catalog::{DEFAULT_INT_MAX, EnumValue, InputType, MediaKind, Output, OutputType, Parameter};
use crate::validate;

/// Keywords `input_rules` may not set: the input object's own shape comes from `inputs`, and a
/// base URI of its own would change what `$ref`s mean.
const NOT_RULES: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "$schema",
    "$id",
    "description",
    "title",
];

/// A version's `input_rules`: JSON Schema keywords over the whole input object, checked to
/// leave the object's own shape to `inputs`.
pub(super) fn input_rules(rules: Option<Map<String, Value>>, place: &Place, ctx: &mut Context) -> Map<String, Value> {
    let rules = rules.unwrap_or_default();
    let place = at(place, "input_rules");
    for key in rules.keys().filter(|k| NOT_RULES.contains(&k.as_str())) {
        ctx.error(&place, format!("`input_rules` may not set `{key}`: the input object's properties, `required` and type come from `inputs`; keep `input_rules` to what ties inputs together (`$defs`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentRequired`)"));
    }
    if let Err(e) = validate::compile(&Value::Object(rules.clone())) {
        ctx.error(&place, format!("`input_rules` is not a valid JSON Schema: {e}"));
    }
    rules
}

/// A version's inputs split by who supplies them (`source`): the call's, then the human's
/// (typed on the confirmation page, in no agent-facing schema: CHEQ's Flow B, issue #40.4).
/// `confirmed`: the version needs a human's confirmation, so there is a page to type them on.
pub(super) fn by_source(
    defs: Vec<InputDef>,
    confirmed: bool,
    place: &Place,
    ctx: &mut Context,
) -> (Vec<InputDef>, Vec<InputDef>) {
    let mut agent = Vec::with_capacity(defs.len());
    let mut human = Vec::new();
    for def in defs {
        let place = at(place, &format!("input `{}`.source", def.name));
        match def.source.as_deref() {
            None | Some("agent") => agent.push(def),
            Some("human") => {
                if !confirmed {
                    ctx.error(&place, "`source: human` is typed by the person who confirms the call, on the confirmation page, so the tool needs confirmation: write `confirmation: required` on the tool or from this version on (or leave `source` out to let the agent send it)".to_owned());
                }
                if def.header.is_some() {
                    ctx.error(&place, "an input the human types is never in the agent's call, so there is no request header to mirror it in: remove `header`".to_owned());
                }
                human.push(def);
            }
            Some(other) => ctx.error(&place, format!("`source: {other}` is not who supplies an input; write `agent` (the call sends it; the default) or `human` (the person confirming types it on the confirmation page, and the agent never sees it)")),
        }
    }
    (agent, human)
}

/// One input; `defs` are the version's `input_rules.$defs`, which its `$ref`s may name.
pub(super) fn input(def: InputDef, defs: Option<&Value>, place: &Place, ctx: &mut Context) -> Option<Parameter> {
    let place = at(place, &format!("input `{}`", def.name));
    let before = ctx.errors();
    check_name(&def.name, "input name", &place, &mut ctx.problems);
    check_description(&def.description, &place, &mut ctx.problems);
    // With a schema and no type, the input is what its schema says.
    let implied = if def.schema.is_some() { "json" } else { "string" };
    let type_name = def.kind.as_deref().unwrap_or(implied);
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
                && let Err(e) = validate::compile(&json!({"type": "string", "pattern": pattern}))
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
                Some(Value::Object(schema)) => schema,
                _ => {
                    ctx.error(
                        &place,
                        "a json input needs `schema`, the JSON Schema (2020-12) of its values".to_owned(),
                    );
                    return None;
                }
            };
            // One `default` and one `examples`, beside the schema or inside it. Inside, they
            // are the schema's annotations as written (a federated server's, say), shown and
            // not checked; beside, they are checked like any input's.
            for (key, given) in [("default", def.default.is_some()), ("examples", def.examples.is_some())] {
                if given && schema.contains_key(key) {
                    ctx.error(
                        &place,
                        format!("`{key}` is given both beside `schema` and inside it; keep one"),
                    );
                }
            }
            InputType::Json {
                schema: Value::Object(schema),
            }
        }
        other => {
            ctx.error(&place, format!("unknown input type `{other}`; use string, int, number, boolean or enum (N-ACT's scalars), or json with a `schema` (any JSON Schema 2020-12)"));
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
    if ctx.errors() > before {
        return None;
    }
    let parameter = Parameter {
        id: def.id.unwrap_or_else(|| def.name.clone()),
        name: def.name,
        description: def.description,
        required: def.required.unwrap_or(true),
        kind,
        header: def.header,
        default: def.default,
        examples: def.examples.unwrap_or_default(),
    };
    check_values(&parameter, defs, &place, ctx);
    (ctx.errors() == before).then_some(parameter)
}

/// The input's schema compiles (its `$ref`s resolving against the version's `$defs`), and its
/// `default` and `examples` are values it accepts, as the API spells them.
fn check_values(p: &Parameter, defs: Option<&Value>, place: &Place, ctx: &mut Context) {
    // A typed input's schema is written by `input_property` from checked parts (a `pattern` is
    // compiled where it is read): with no value to check, there is nothing to compile. On
    // GitHub's description this was one compile per input, most of the load (issue #42.1).
    if !matches!(p.kind, InputType::Json { .. }) && p.default.is_none() && p.examples.is_empty() {
        return;
    }
    let mut document = json!({"properties": {&p.name: schema::input_property(p, Spelling::Wire)}});
    if let Some(defs) = defs {
        document["$defs"] = defs.clone();
    }
    let validator = match validate::compile(&document) {
        Ok(validator) => validator,
        Err(e) => {
            let what = if matches!(p.kind, InputType::Json { .. }) {
                "`schema` is not a valid JSON Schema (2020-12)"
            } else {
                "the input's schema does not compile"
            };
            ctx.error(place, format!("{what}: {e}"));
            return;
        }
    };
    let given = p
        .default
        .iter()
        .map(|v| ("default", v))
        .chain(p.examples.iter().map(|v| ("an example", v)));
    for (what, value) in given {
        let input = json!({&p.name: value});
        if let Some(error) = validator.iter_errors(&input).next() {
            let spelling = if matches!(p.kind, InputType::Enum { .. }) {
                " (an enum's values are written as the API spells them: a value's `value`, else its name)"
            } else {
                ""
            };
            ctx.error(
                place,
                format!(
                    "{what} {} is not a value the input accepts{spelling}: {}",
                    validate::preview(value),
                    error.masked()
                ),
            );
        }
    }
}

pub(super) fn output(def: OutputDef, place: &Place, ctx: &mut Context) -> Option<Output> {
    let place = at(place, &format!("output `{}`", def.name));
    let before = ctx.errors();
    check_name(&def.name, "output name", &place, &mut ctx.problems);
    check_description(&def.description, &place, &mut ctx.problems);
    if def.schema.is_some() && def.kind != "json" {
        ctx.error(
            &place,
            format!("`schema` applies to a json output, not a {} one", def.kind),
        );
    }
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
        "json" => match def.schema {
            None => OutputType::Json { schema: None },
            Some(schema @ Value::Object(_)) => {
                if let Err(e) = validate::compile(&schema) {
                    ctx.error(&place, format!("`schema` is not a valid JSON Schema (2020-12): {e}"));
                }
                OutputType::Json { schema: Some(schema) }
            }
            Some(_) => {
                ctx.error(
                    &place,
                    "`schema` of a json output must be a JSON Schema object".to_owned(),
                );
                return None;
            }
        },
        "enum" => OutputType::Enum {
            values: enum_values(def.values, &place, ctx),
        },
        "image" => OutputType::Media { kind: MediaKind::Image },
        "audio" => OutputType::Media { kind: MediaKind::Audio },
        "resource" => OutputType::Media {
            kind: MediaKind::Resource,
        },
        "content" => OutputType::Media {
            kind: MediaKind::Content,
        },
        other => {
            ctx.error(
                &place,
                format!("unknown output type `{other}`; use string, int, number, boolean, enum, json, image, audio, resource or content"),
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
        if !crate::catalog::is_enum_name(&v.name) {
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
        let wire = v.value.clone().unwrap_or_else(|| Value::String(v.name.clone()));
        if matches!(wire, Value::Null | Value::Array(_) | Value::Object(_)) {
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
