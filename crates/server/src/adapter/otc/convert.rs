//! Pure translation between core types and OTC wire types.

use serde_json::{Map, Value};
use toolhost_core::{CallContext, Secret, Tool, Version, VersionSelector};
use toolhost_wire::otc::{
    AuthorizationRequirement, Context, InputSchema, OAuth2, Requirements, SecretRequirement, ToolDefinition,
};

/// `$schema` values that mean OTC 1.0 (docs/protocols.md §4): the shorthand, the OXP urn, and the
/// long URL forms the spec's versioning page uses.
const ACCEPTED_SCHEMAS: &[&str] = &[
    "otc://1.0",
    "urn:oxp:1.0",
    "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json",
    "https://github.com/OpenToolCalling/Specification/blob/main/spec/http/1.0/openapi.json",
    "https://raw.githubusercontent.com/OpenToolCalling/Specification/main/spec/http/1.0/openapi.json",
];

/// The `$schema` to answer with: the request's own form when it is OTC 1.0.
pub(super) fn schema_form(given: Option<&str>) -> Result<&'static str, String> {
    match given {
        None => Ok(toolhost_wire::otc::SCHEMA),
        Some(s) => ACCEPTED_SCHEMAS.iter().copied().find(|a| *a == s).ok_or_else(|| {
            format!(
                "this server speaks OTC 1.0, but the request's $schema is `{s}`; send `otc://1.0` or leave $schema out"
            )
        }),
    }
}

/// The definition of one version (`ToolDefinition`).
pub(super) fn definition(tool: &Tool, version: &Version) -> ToolDefinition {
    let r = &tool.requirements;
    let confirmation = version.confirmation.is_some();
    let requirements = (!r.is_empty() || confirmation).then(|| Requirements {
        authorization: r
            .authorization
            .iter()
            .map(|a| AuthorizationRequirement {
                id: a.id.clone(),
                oauth2: (!a.scopes.is_empty()).then(|| OAuth2 {
                    scopes: a.scopes.clone(),
                }),
            })
            .collect(),
        secrets: r
            .secrets
            .iter()
            .map(|id| SecretRequirement { id: id.clone() })
            .collect(),
        user_id: r.user_id.then_some(true),
        confirmation: confirmation.then_some(true),
    });
    ToolDefinition {
        id: format!("{}.{}@{}", tool.toolkit, tool.name, version.semver),
        name: tool.otc_name(),
        description: version.description.clone(),
        version: version.semver.to_string(),
        input_schema: InputSchema {
            parameters: (**version.input_schema()).clone(),
        },
        output_schema: output_schema(version),
        requirements,
    }
}

/// `null` with no outputs, the single output's own schema, or the object of all outputs
/// (docs/protocols.md §4: the spec's `Calculator.Add` answers `"value": 15`).
fn output_schema(version: &Version) -> Option<Value> {
    match version.outputs.as_slice() {
        [] => None,
        [_] => version.output_schema()["properties"]
            .as_object()
            .and_then(|p| p.values().next().cloned()),
        _ => Some((**version.output_schema()).clone()),
    }
}

/// The result `value` matching [`output_schema`].
pub(super) fn value(version: &Version, mut output: Map<String, Value>) -> Option<Value> {
    match version.outputs.as_slice() {
        [] => None,
        [only] => output.remove(&only.name),
        _ => Some(Value::Object(output)),
    }
}

/// A parsed tool id: toolkit, tool name and version.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ToolId<'a> {
    pub toolkit: &'a str,
    pub name: &'a str,
    pub version: VersionSelector,
}

/// Parses `Toolkit.Tool[@x|@x.y.z]` exactly as the spec's `ToolId` pattern and version rules say:
/// `@x` means exactly `x.0.0`, no suffix means the latest version.
pub(super) fn tool_id(id: &str) -> Result<ToolId<'_>, String> {
    let explain = || {
        format!(
            "`{id}` is not a tool id; write `Toolkit.Tool`, `Toolkit.Tool@1` or `Toolkit.Tool@1.0.0` (as in the `id` of GET /tools)"
        )
    };
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let (path, version) = match id.split_once('@') {
        Some((path, version)) => (path, Some(version)),
        None => (id, None),
    };
    let (toolkit, name) = path
        .split_once('.')
        .filter(|(k, n)| word(k) && word(n))
        .ok_or_else(explain)?;
    let version = match version {
        None => VersionSelector::Latest,
        Some(v) => VersionSelector::pin(v).map_err(|why| format!("in tool id `{id}`: {why} (e.g. `{path}@1.0.0`)"))?,
    };
    Ok(ToolId { toolkit, name, version })
}

/// The call's context for the backend: secrets and tokens wrapped so they are never printed.
/// The call's context: OTC's `context` (secrets, tokens, user id) and trace id over the
/// caller's own (`caller`), whose user id it replaces when it gives one.
/// What the operator grants the caller fills in what the call does not bring.
pub(super) fn context(context: Option<Context>, trace_id: Option<String>, caller: CallContext) -> CallContext {
    let context = context.unwrap_or_default();
    let mut secrets = caller.secrets.clone();
    secrets.extend(context.secrets.into_iter().map(|s| (s.id, Secret::new(s.value))));
    let mut authorization = caller.authorization.clone();
    authorization.extend(context.authorization.into_iter().map(|a| (a.id, Secret::new(a.token))));
    CallContext {
        secrets,
        authorization,
        user_id: context.user_id.or(caller.user_id.clone()),
        request_id: trace_id,
        confirmation: context.confirmation.map(toolhost_core::confirm::Presented::Id),
        ..caller
    }
}

/// What makes two calls "the same call" for `call_id`: the tool version the id resolves to
/// (`Toolkit.name@x.y.z`, however the call wrote it: issue #31.5), the input's JSON value (not
/// its spelling: key order, `1` or `1.0`) and the `context` (user, secrets, tokens), so that one
/// caller's stored result is never handed to a call made for another user (issue #21.4). A
/// SHA-256 (hex), so every replica computes the same one for a shared store, and nobody can
/// craft a collision.
pub(super) fn fingerprint(resolved: &str, input: &Map<String, Value>, context: Option<&Context>) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    // Each part length-prefixed, so no two different calls feed the same bytes.
    let mut part = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    part(resolved.as_bytes());
    let mut text = String::new();
    canonical(&mut text, &Value::Object(input.clone()));
    part(text.as_bytes());
    if let Some(context) = context {
        part(context.user_id.as_deref().unwrap_or("\u{0}none").as_bytes());
        // Order-independent, as the spec gives these lists no order.
        let mut secrets: Vec<_> = context.secrets.iter().map(|s| (&s.id, &s.value)).collect();
        secrets.sort();
        let mut tokens: Vec<_> = context.authorization.iter().map(|a| (&a.id, &a.token)).collect();
        tokens.sort();
        for (id, value) in secrets.into_iter().chain(tokens) {
            part(id.as_bytes());
            part(value.as_bytes());
        }
    }
    let digest = hasher.finalize();
    toolhost_core::hex(&digest)
}

/// `value` written so that equal JSON values write equal text: object keys sorted, and a number
/// that is an integer written as one (`1.0` and `1e0` as `1`).
fn canonical(out: &mut String, value: &Value) {
    match value {
        Value::Object(members) => {
            let mut keys: Vec<&String> = members.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(out, &members[key]);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(out, item);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            // Integral and exactly representable: one spelling for 1, 1.0 and 1e0.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                #[allow(clippy::cast_possible_truncation)] // integral and below 2^53, checked above
                out.push_str(&(f as i64).to_string());
            }
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// The idempotency key of a call: its `call_id` within the caller's own namespace, so that
/// another caller can neither read a stored result nor take a `call_id` before its owner uses it
/// (issue #21.4).
pub(super) fn call_key(caller: &str, call_id: &str) -> String {
    format!("{caller}\u{0}{call_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn semver(s: &str) -> VersionSelector {
        VersionSelector::Semver(semver::Version::parse(s).unwrap())
    }

    #[test]
    fn tool_ids_follow_the_spec() {
        assert_eq!(
            tool_id("Calculator.Add").unwrap(),
            ToolId {
                toolkit: "Calculator",
                name: "Add",
                version: VersionSelector::Latest
            }
        );
        assert_eq!(tool_id("Calculator.Add@1").unwrap().version, semver("1.0.0"));
        assert_eq!(tool_id("Calculator.Add@1.2.3").unwrap().version, semver("1.2.3"));
        for bad in [
            "Calculator.Add@1.2",
            "Calculator",
            ".Add",
            "Calculator.",
            "Calculator.Add@",
            "Calculator.Add@x",
            "A.B.C",
            "Calc-ulator.Add",
            "Calculator.Add@1.0.0.0",
        ] {
            assert!(tool_id(bad).is_err(), "{bad}");
        }
        assert!(tool_id("Calculator.Add@01.0.0").unwrap_err().contains("leading zeros"));
    }

    #[test]
    fn schema_forms() {
        assert_eq!(schema_form(None).unwrap(), "otc://1.0");
        assert_eq!(schema_form(Some("urn:oxp:1.0")).unwrap(), "urn:oxp:1.0");
        assert!(schema_form(Some("otc://9.9")).unwrap_err().contains("otc://9.9"));
    }

    #[test]
    fn fingerprints_take_the_inputs_value_not_its_spelling() {
        let parse = |text: &str| -> Map<String, Value> { serde_json::from_str(text).unwrap() };
        let one = parse(r#"{"a": 1, "b": {"y": [1, 2.5], "x": "s"}}"#);
        for same in [
            r#"{"b": {"x": "s", "y": [1.0, 2.5]}, "a": 1.0}"#,
            r#"{"a": 1e0, "b": {"y": [10e-1, 25e-1], "x": "\u0073"}}"#,
        ] {
            assert_eq!(
                fingerprint("T.x@1.0.0", &one, None),
                fingerprint("T.x@1.0.0", &parse(same), None),
                "{same}"
            );
        }
        for other in [
            r#"{"a": 1.5, "b": {"x": "s", "y": [1, 2.5]}}"#,
            r#"{"a": "1", "b": {"x": "s", "y": [1, 2.5]}}"#,
        ] {
            assert_ne!(
                fingerprint("T.x@1.0.0", &one, None),
                fingerprint("T.x@1.0.0", &parse(other), None),
                "{other}"
            );
        }
    }

    #[test]
    fn fingerprints_depend_on_tool_input_and_context() {
        let a: Map<String, Value> = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
        let b: Map<String, Value> = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
        let c: Map<String, Value> = serde_json::from_str(r#"{"a":1,"b":3}"#).unwrap();
        assert_eq!(fingerprint("T.x", &a, None), fingerprint("T.x", &b, None));
        assert_ne!(fingerprint("T.x", &a, None), fingerprint("T.x", &c, None));
        assert_ne!(fingerprint("T.x", &a, None), fingerprint("T.y", &a, None));
        let alice: Context = serde_json::from_str(r#"{"user_id": "alice"}"#).unwrap();
        let bob: Context = serde_json::from_str(r#"{"user_id": "bob"}"#).unwrap();
        assert_ne!(fingerprint("T.x", &a, Some(&alice)), fingerprint("T.x", &a, Some(&bob)));
        assert_ne!(fingerprint("T.x", &a, Some(&alice)), fingerprint("T.x", &a, None));
        let s1: Context =
            serde_json::from_str(r#"{"secrets": [{"id": "k", "value": "1"}, {"id": "j", "value": "2"}]}"#).unwrap();
        let s2: Context =
            serde_json::from_str(r#"{"secrets": [{"id": "j", "value": "2"}, {"id": "k", "value": "1"}]}"#).unwrap();
        let s3: Context =
            serde_json::from_str(r#"{"secrets": [{"id": "j", "value": "2"}, {"id": "k", "value": "9"}]}"#).unwrap();
        assert_eq!(fingerprint("T.x", &a, Some(&s1)), fingerprint("T.x", &a, Some(&s2)));
        assert_ne!(fingerprint("T.x", &a, Some(&s1)), fingerprint("T.x", &a, Some(&s3)));
    }
}

/// Issue #12: the OTC request decoders take any input without panicking; a valid tool id
/// round-trips.
#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use toolhost_core::VersionSelector;

    use super::tool_id;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn tool_ids_never_panic(id in "\\PC{0,64}") {
            let _ = tool_id(&id);
        }

        #[test]
        fn valid_tool_ids_round_trip(
            toolkit in "[A-Za-z][A-Za-z0-9_]{0,20}",
            name in "[A-Za-z][A-Za-z0-9_]{0,20}",
            version in proptest::option::of((0u64..1000, 0u64..1000, 0u64..1000)),
        ) {
            let text = match version {
                Some((a, b, c)) => format!("{toolkit}.{name}@{a}.{b}.{c}"),
                None => format!("{toolkit}.{name}"),
            };
            let parsed = tool_id(&text).unwrap();
            prop_assert_eq!(parsed.toolkit, toolkit.as_str());
            prop_assert_eq!(parsed.name, name.as_str());
            let expected = match version {
                Some((a, b, c)) => VersionSelector::Semver(semver::Version::new(a, b, c)),
                None => VersionSelector::Latest,
            };
            prop_assert_eq!(parsed.version, expected);
        }

        #[test]
        fn call_bodies_never_panic(body in crate::adapter::props::json()) {
            let text = body.to_string();
            if let Ok(decoded) = serde_json::from_str::<toolhost_wire::otc::CallBody>(&text)
                && let Some(request) = decoded.request
                && let Ok(request) = serde_json::from_str::<toolhost_wire::otc::CallToolRequest>(request.get())
            {
                let _ = tool_id(&request.tool_id);
                let _ = super::context(request.context, request.trace_id, toolhost_core::CallContext::default());
            }
        }

        /// N-ACT's invocation body: what decodes, encodes and decodes to the same.
        #[test]
        fn nact_invocations_round_trip(body in crate::adapter::props::json()) {
            if let Ok(decoded) = crate::http::body::parse::<toolhost_wire::nact::Invocation>(body.to_string().as_bytes()) {
                let again: toolhost_wire::nact::Invocation = serde_json::from_value(serde_json::to_value(&decoded).unwrap()).unwrap();
                prop_assert_eq!(again, decoded);
            }
        }
    }
}
