//! What an operation answers, as a tool's outputs: the 2xx JSON answer's top-level properties,
//! typed, and a `json` output's schema read from the answer's (issue #38.4), so MCP's
//! `outputSchema` says what comes back. The schema describes the answer loosely (types and
//! shape; no `required`, enumerations, bounds or formats, and any field may be null), since an
//! answer is checked against it: a real answer that differs a little from its description must
//! not fail the call, while one of another shape (a list where an object was described) is a
//! clean error. It is cut to a bounded size (a `$ref` cycle, a huge schema) and says where.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::operation::required_of;
use super::schema::{resolve, types};
use super::{METHODS, STEP, describe, snake, unique};

/// How deep an output's schema is written at most.
const MAX_DEPTH: usize = 4;
/// How many JSON values the output schemas of one description hold at most, shared among its
/// operations (a catalog file holds at most 250,000 YAML nodes); deeper levels are cut first.
const MAX_VALUES: usize = 80_000;
/// How many JSON values the output schemas of one tool hold at most.
const MAX_TOOL_VALUES: usize = 600;

/// What an operation answers, as outputs.
pub(crate) struct Answer {
    pub outputs: Vec<Value>,
    pub mapping: Value,
    /// The step's own `Accept`, when the operation answers in something other than JSON (the
    /// toolkit asks for JSON): a text/plain-only operation answers 406 to `application/json`.
    pub accept: Option<String>,
}

/// The 2xx answer: its JSON's top-level scalar properties, typed (required when the schema says
/// so and they cannot be null); a text answer as one string; else one `json` output with the
/// whole body.
pub(crate) fn outputs(doc: &Value, op: &Value) -> Answer {
    let whole = |accept: Option<String>| Answer {
        outputs: vec![
            json!({"name": "result", "type": "json", "required": false, "description": "The upstream's answer."}),
        ],
        mapping: json!({"result": format!("{STEP}.body")}),
        accept,
    };
    let responses = op["responses"].as_object().cloned().unwrap_or_default();
    let Some(ok) = responses
        .iter()
        .find(|(code, _)| code.starts_with('2'))
        .map(|(_, r)| resolve(doc, r, 0).unwrap_or(Value::Null))
    else {
        return whole(None);
    };
    let media: Vec<&String> = ok["content"]
        .as_object()
        .map(|c| c.keys().collect())
        .unwrap_or_default();
    let json_media = media
        .iter()
        .find(|m| m.as_str() == "application/json" || m.ends_with("+json"));
    let Some(json_media) = json_media else {
        if media.is_empty() {
            return whole(None);
        }
        let accept = Some(media.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", "));
        if media.iter().any(|m| m.starts_with("text/")) {
            return Answer {
                outputs: vec![
                    json!({"name": "result", "type": "string", "required": false, "description": "The upstream's answer, as text."}),
                ],
                mapping: json!({"result": format!("{STEP}.body")}),
                accept,
            };
        }
        return whole(accept);
    };
    let schema = resolve(doc, &ok["content"][json_media.as_str()]["schema"], 0).unwrap_or(Value::Null);
    let Some(properties) = schema["properties"].as_object().filter(|p| !p.is_empty()) else {
        // A list, a union, a free-form object: the whole answer, described.
        let mut answer = whole(None);
        if schema.is_object() {
            described(doc, &mut answer.outputs, &[Some(schema)]);
        }
        return answer;
    };
    let required = required_of(&schema);
    let mut outs = Vec::new();
    let mut mapping = Map::new();
    let mut names = BTreeSet::new();
    let mut sources = Vec::new();
    for (prop, prop_schema) in properties {
        let prop_schema = resolve(doc, prop_schema, 0).unwrap_or(Value::Null);
        let plain = prop.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && prop.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if !plain {
            continue;
        }
        let name = unique(&snake(prop), &mut names);
        let kind = match types(&prop_schema).as_slice() {
            // An upstream's enumeration may grow before its description does: a string, which
            // any new value still is.
            ["string"] => "string",
            ["integer"] => "int",
            ["number"] => "number",
            ["boolean"] => "boolean",
            _ => "json",
        };
        let nullable = prop_schema["nullable"] == json!(true)
            || prop_schema["type"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "null"));
        let is_required = required.contains(prop.as_str()) && !nullable && kind != "json";
        outs.push(json!({
            "name": name, "type": kind, "required": is_required,
            "description": describe(prop_schema["description"].as_str().unwrap_or_default(), &prop_schema, prop),
        }));
        mapping.insert(name, json!(format!("{STEP}.body.{prop}")));
        sources.push((kind == "json").then_some(prop_schema));
    }
    if outs.is_empty() {
        return whole(None);
    }
    described(doc, &mut outs, &sources);
    Answer {
        outputs: outs,
        mapping: Value::Object(mapping),
        accept: None,
    }
}

/// Writes on each `json` output its described schema (`sources`, in the outputs' order; `None`
/// for a scalar), within the tool's share of [`MAX_VALUES`]: each output starts at its top
/// level and the cheapest next level of any output is added while the share allows,
/// [`MAX_DEPTH`] at most; an output cut short says so in its description.
fn described(doc: &Value, outputs: &mut [Value], sources: &[Option<Value>]) {
    let operations: usize = doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|paths| paths.values())
        .filter_map(Value::as_object)
        .map(|item| item.keys().filter(|k| METHODS.contains(&k.as_str())).count())
        .sum();
    let budget = (MAX_VALUES / operations.max(1)).min(MAX_TOOL_VALUES);
    // Each output's schema at every depth: (schema, cut short, size).
    let levels: Vec<Vec<(Value, bool, usize)>> = sources
        .iter()
        .map(|source| {
            let Some(source) = source else {
                return Vec::new();
            };
            let mut all = Vec::new();
            for depth in 0..=MAX_DEPTH {
                let mut loose = Loose { doc, depth, cut: false };
                let schema = loose.schema(source, 0);
                let size = values(&schema);
                all.push((schema, loose.cut, size));
                if !loose.cut {
                    break;
                }
            }
            all
        })
        .collect();
    let mut chosen = vec![0usize; levels.len()];
    let mut spent: usize = levels.iter().filter_map(|l| l.first()).map(|(_, _, size)| size).sum();
    loop {
        let next = (0..levels.len())
            .filter_map(|i| Some((i, levels[i].get(chosen[i] + 1)?.2 - levels[i][chosen[i]].2)))
            .filter(|(_, more)| spent + more <= budget)
            .min_by_key(|(_, more)| *more);
        let Some((i, more)) = next else {
            break;
        };
        chosen[i] += 1;
        spent += more;
    }
    for ((output, mut all), depth) in outputs.iter_mut().zip(levels).zip(chosen) {
        if all.is_empty() {
            continue;
        }
        let (schema, cut, _) = all.swap_remove(depth);
        output["schema"] = schema;
        if cut {
            let said = output["description"].as_str().unwrap_or_default().trim_end();
            let stop = if said.ends_with('.') { "" } else { "." };
            output["description"] = json!(format!(
                "{said}{stop} Its schema is described {depth} level{} deep; below that, any JSON.",
                if depth == 1 { "" } else { "s" }
            ));
        }
    }
}

/// How many JSON values (and object keys) `value` is made of, as a catalog file counts them.
fn values(value: &Value) -> usize {
    1 + match value {
        Value::Object(members) => members.values().map(|v| 1 + values(v)).sum(),
        Value::Array(items) => items.iter().map(values).sum(),
        _ => 0,
    }
}

/// A loose description of an answer's schema, cut at `depth` levels.
struct Loose<'d> {
    doc: &'d Value,
    depth: usize,
    /// Whether something below `depth` was left out.
    cut: bool,
}

impl Loose<'_> {
    fn schema(&mut self, schema: &Value, level: usize) -> Value {
        let Some(schema) = resolve(self.doc, schema, 0) else {
            return json!({});
        };
        let mut out = Map::new();
        // Only JSON Schema's own types (Swagger's `file` is none), and null beside any: an
        // answer's missing value is no reason to fail the call.
        const TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "object", "array"];
        let mut kinds: Vec<&str> = types(&schema).into_iter().filter(|t| TYPES.contains(t)).collect();
        kinds.dedup();
        if !kinds.is_empty() {
            kinds.push("null");
            out.insert("type".into(), json!(kinds));
        }
        let members = ["anyOf", "oneOf"].iter().find_map(|k| schema[*k].as_array());
        let shaped = schema.get("properties").is_some() || schema.get("items").is_some() || members.is_some();
        if level >= self.depth {
            self.cut |= shaped;
            return Value::Object(out);
        }
        if let Some(properties) = schema["properties"].as_object() {
            let described: Map<String, Value> = properties
                .iter()
                .filter(|(_, p)| p["writeOnly"] != json!(true))
                .map(|(k, p)| (k.clone(), self.schema(p, level + 1)))
                .collect();
            out.insert("properties".into(), Value::Object(described));
        }
        if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
            out.insert("items".into(), self.schema(items, level + 1));
        }
        // `oneOf` as `anyOf`: an answer that fits two members is no reason to fail either.
        if let Some(members) = members {
            let members: Vec<Value> = members.iter().map(|m| self.schema(m, level + 1)).collect();
            out.insert("anyOf".into(), Value::Array(members));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An answer whose schema refers to itself (a `$ref` cycle) and one of two shapes: outputs
    /// whose schemas are bounded, loose (no `required`, null allowed, `oneOf` as `anyOf`), and
    /// say where they were cut.
    #[test]
    fn answer_schemas_are_loose_bounded_and_say_where_they_were_cut() {
        let doc = json!({
            "paths": {"/nodes": {"get": {}}},
            "components": {"schemas": {"Node": {
                "type": "object", "required": ["id"],
                "properties": {
                    "id": {"type": "integer"},
                    "child": {"$ref": "#/components/schemas/Node"},
                    "tag": {"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "integer", "minimum": 1}]}
                }
            }}}
        });
        let op = json!({"responses": {"200": {"content": {"application/json": {"schema": {
            "type": "array", "items": {"$ref": "#/components/schemas/Node"}
        }}}}}});
        let answer = outputs(&doc, &op);
        let [result] = answer.outputs.as_slice() else {
            panic!("{:?}", answer.outputs)
        };
        let schema = &result["schema"];
        assert_eq!(schema["type"], json!(["array", "null"]));
        let node = &schema["items"];
        assert!(node.get("required").is_none(), "{node}");
        assert_eq!(
            node["properties"]["tag"]["anyOf"],
            json!([{"type": ["string", "null"]}, {"type": ["integer", "null"]}])
        );
        // The cycle stops at MAX_DEPTH (the list is level 0, its items 1), said in the
        // description.
        let mut depth = 2;
        let mut at = &node["properties"]["child"];
        while at.get("properties").is_some() {
            at = &at["properties"]["child"];
            depth += 1;
        }
        assert_eq!(depth, MAX_DEPTH, "{schema}");
        assert!(
            result["description"]
                .as_str()
                .unwrap()
                .ends_with("Its schema is described 4 levels deep; below that, any JSON."),
            "{result}"
        );
        // Within a smaller share (many operations), shallower, and still said.
        let mut crowded = doc.clone();
        for i in 0..2000 {
            crowded["paths"][format!("/n{i}")] = json!({"get": {}});
        }
        let answer = outputs(&crowded, &op);
        assert!(
            values(&answer.outputs[0]["schema"]) <= MAX_VALUES / 2000 + 8,
            "{:?}",
            answer.outputs
        );
        let said = answer.outputs[0]["description"].as_str().unwrap();
        assert!(
            said.contains("Its schema is described") && !said.contains("4 levels"),
            "{said}"
        );
    }
}
