//! The JSON Schemas every answer is validated against (issue #37.12): for OTC 1.0 its own
//! openapi.json (vendored, `tests/vendor/otc-1.0`); for N-ACT and WoA, whose drafts have no
//! schema, ones written from their text and vendored beside this crate (`schemas/nact-00.json`,
//! `schemas/woa-00.json`, each definition citing its section). An answer that does not fit is a
//! check result with the schema's first complaint and where it is, never a crash.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::Ctx;
use crate::checks::Check;
use crate::probe::Exchange;

/// The N-ACT schemas, written from draft-rosenberg-aiproto-nact-00 (§6, §7).
const NACT: &str = include_str!("../schemas/nact-00.json");
/// The WoA schemas, written from draft-gaikwad-woa-00 (§4, §5.2).
const WOA: &str = include_str!("../schemas/woa-00.json");
/// The OTC 1.0 OpenAPI description (MIT, Arcade AI), as vendored for the peer tests.
pub(crate) const OTC: &str = include_str!("../../../tests/vendor/otc-1.0/openapi.json");

/// A shape an answer must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// An N-ACT ToolSignature (§6.1, Figure 2).
    NactSignature,
    /// A page of an N-ACT enumeration API (§6.1, §6.4).
    NactPage,
    /// The result of an N-ACT invocation (§7).
    NactResult,
    /// An N-ACT error sent as application/problem+json.
    NactProblem,
    /// A WoA document (§4).
    WoaDocument,
    /// A WoA error as application/problem+json (§5.2).
    WoaProblem,
    /// OTC's `GET /tools` 200 body.
    OtcListing,
    /// OTC's `POST /tools/call` 200 body (the envelope; `result` is a CallToolResponse).
    OtcCall,
}

impl Shape {
    /// What it is called in a message, and where its schema is.
    fn name(self) -> &'static str {
        match self {
            Shape::NactSignature => "an N-ACT ToolSignature (schemas/nact-00.json#/$defs/signature)",
            Shape::NactPage => "an N-ACT page (schemas/nact-00.json#/$defs/page)",
            Shape::NactResult => "an N-ACT invocation result (schemas/nact-00.json#/$defs/result)",
            Shape::NactProblem => "an RFC 9457 problem (schemas/nact-00.json#/$defs/problem)",
            Shape::WoaDocument => "a WoA document (schemas/woa-00.json#/$defs/document)",
            Shape::WoaProblem => "an RFC 9457 problem (schemas/woa-00.json#/$defs/problem)",
            Shape::OtcListing => "OTC's list-tools answer (openapi.json, GET /tools 200)",
            Shape::OtcCall => "OTC's call-tool answer (openapi.json, POST /tools/call 200)",
        }
    }

    /// The schema document and the pointer to the shape in it.
    fn source(self) -> (&'static str, &'static str) {
        match self {
            Shape::NactSignature => (NACT, "#/$defs/signature"),
            Shape::NactPage => (NACT, "#/$defs/page"),
            Shape::NactResult => (NACT, "#/$defs/result"),
            Shape::NactProblem => (NACT, "#/$defs/problem"),
            Shape::WoaDocument => (WOA, "#/$defs/document"),
            Shape::WoaProblem => (WOA, "#/$defs/problem"),
            Shape::OtcListing => (
                OTC,
                "#/paths/~1tools/get/responses/200/content/application~1json/schema",
            ),
            Shape::OtcCall => (
                OTC,
                "#/paths/~1tools~1call/post/responses/200/content/application~1json/schema",
            ),
        }
    }

    const ALL: [Shape; 8] = [
        Shape::NactSignature,
        Shape::NactPage,
        Shape::NactResult,
        Shape::NactProblem,
        Shape::WoaDocument,
        Shape::WoaProblem,
        Shape::OtcListing,
        Shape::OtcCall,
    ];
}

/// A validator for `pointer` in `document`. The documents are constants: a failure here is a
/// bug of this crate, and passing every shape check without a schema would hide it.
pub(crate) fn compile(document: &str, pointer: &str, adjust: impl FnOnce(&mut Value)) -> jsonschema::Validator {
    let mut schema = serde_json::from_str::<Value>(document).expect("a vendored schema is JSON");
    adjust(&mut schema);
    schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    schema["$ref"] = json!(pointer);
    toolhost_core::validate::compile(&schema).expect("the vendored schemas compile")
}

/// `CallToolResponse` loses its top-level `additionalProperties: false`, which beside its
/// `oneOf` would refuse every `value` and `error` the spec's own examples carry; so does
/// `ToolDefinition`, since the standard "is designed to be extensible: new parameters … can be
/// added as additional properties in the respective schemas" (index).
pub(crate) fn loosen_otc(document: &mut Value) {
    for name in ["CallToolResponse", "ToolDefinition"] {
        if let Some(schema) = document.pointer_mut(&format!("/components/schemas/{name}"))
            && let Some(map) = schema.as_object_mut()
        {
            map.remove("additionalProperties");
        }
    }
}

fn validator(shape: Shape) -> &'static jsonschema::Validator {
    static CACHE: OnceLock<HashMap<Shape, jsonschema::Validator>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        Shape::ALL
            .into_iter()
            .map(|shape| {
                let (document, pointer) = shape.source();
                (shape, compile(document, pointer, loosen_otc))
            })
            .collect()
    });
    &cache[&shape]
}

/// Why `value` does not fit `validator` (the first complaint, and where); `None` when it does.
pub(crate) fn complaint(validator: &jsonschema::Validator, name: &str, value: &Value) -> Option<String> {
    let error = validator.iter_errors(value).next()?;
    let at = error.instance_path().to_string();
    Some(format!(
        "not {name}: {error} (at `{}`)",
        if at.is_empty() { "/" } else { at.as_str() }
    ))
}

/// Every complaint of `shape`'s schema about `value`: where (a JSON pointer) and what.
pub(crate) fn misfits(shape: Shape, value: &Value) -> Vec<(String, String)> {
    validator(shape)
        .iter_errors(value)
        .map(|error| {
            let at = error.instance_path().to_string();
            let message = format!(
                "not {}: {error} (at `{}`)",
                shape.name(),
                if at.is_empty() { "/" } else { at.as_str() }
            );
            (at, message)
        })
        .collect()
}

/// Why `value` does not have `shape`; `None` when it has.
pub(crate) fn misfit(shape: Shape, value: &Value) -> Option<String> {
    complaint(validator(shape), shape.name(), value)
}

impl Ctx {
    /// Judges `check` by whether `value` (from `answer`) has `shape`.
    pub(crate) fn shape(&mut self, check: &Check, shape: Shape, value: &Value, answer: &Exchange) {
        let problem = misfit(shape, value);
        self.rec.judge(check, problem.is_none(), || {
            answer.evidence(problem.unwrap_or_default())
        });
    }

    /// An error answer sent as application/problem+json that is no RFC 9457 problem: a warning
    /// on `check` (the drafts do not require problems; one that says it is one should be one).
    pub(crate) fn problem_shape(&mut self, check: &Check, shape: Shape, answer: &Exchange) {
        if answer.media_type() != "application/problem+json" {
            return;
        }
        let body = answer.json().unwrap_or(Value::Null);
        if let Some(problem) = misfit(shape, &body) {
            self.rec.warn(check, answer.evidence(problem));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape has its schema, and each refuses what its section rules out.
    #[test]
    fn every_schema_compiles_and_refuses_what_its_text_rules_out() {
        for shape in Shape::ALL {
            let _ = validator(shape);
        }
        let figure_2 = json!({"toolId": "0479a45d-ad0a-49d4-94db-75edf00d2ca4", "name": "Lookup Weather", "description": "d", "img": "x", "version": "1", "currentVersion": "2", "tags": ["system"], "input_parameters": [{"id": "city", "name": "City", "type": "string", "description": "c", "required": true}], "output_parameters": [{"id": "temp-fh", "name": "T", "type": "int", "description": "t"}]});
        assert_eq!(misfit(Shape::NactSignature, &figure_2), None);
        let mut broken = figure_2.clone();
        broken["version"] = json!([1]);
        assert!(misfit(Shape::NactSignature, &broken).unwrap().contains("at `/version`"));
        broken = figure_2;
        broken["input_parameters"][0].as_object_mut().unwrap().remove("id");
        assert!(misfit(Shape::NactSignature, &broken).is_some());
        assert_eq!(
            misfit(
                Shape::NactPage,
                &json!({"items": [], "paging": {"pageLimit": 5, "next": null}})
            ),
            None
        );
        assert!(misfit(Shape::NactPage, &json!({"items": [], "paging": {"pageLimit": "5"}})).is_some());
        assert_eq!(
            misfit(
                Shape::NactResult,
                &json!({"output_parameters": [{"name": "t", "value": 80}]})
            ),
            None
        );
        assert!(misfit(Shape::NactResult, &json!({"output_parameters": [{"name": "t"}]})).is_some());
        assert!(misfit(Shape::NactProblem, &json!({"status": "400"})).is_some());
        let document = json!({"woa_version": "1", "agents": [{"id": "a", "name": "A", "description": "d", "inputs": {}, "outputs": {}, "transports": ["rest"]}], "transports": {"rest": {"base": "https://x.example", "invoke_path": "/a"}}});
        assert_eq!(misfit(Shape::WoaDocument, &document), None);
        assert!(
            misfit(
                Shape::WoaDocument,
                &json!({"woa_version": "1", "agents": [{}], "transports": {}})
            )
            .unwrap()
            .contains("/agents/0")
        );
        assert_eq!(misfit(Shape::OtcListing, &json!({"tools": []})), None);
        assert!(misfit(Shape::OtcListing, &json!({"tools": [{}]})).is_some());
        assert!(misfit(Shape::OtcCall, &json!({"$schema": "otc://1.0"})).is_some());
    }
}
