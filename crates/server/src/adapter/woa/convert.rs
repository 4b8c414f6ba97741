//! Pure translation between core types and WoA wire types.

use serde_json::{Map, Value};
use toolhost_core::validate::kind_of as kind;
use toolhost_core::{CallContext, Catalog, Tool, VersionSelector};
use toolhost_wire::woa::{self as wire, Agent, Envelope, Mcp, Rest, Transports};

use super::Site;

/// The JSON Schema dialect of `inputs` and `outputs` (draft §4.2).
pub(super) use toolhost_core::validate::DIALECT;

/// The WoA document of a catalog as `access` sees it: one agent per tool, at its latest version
/// (module docs).
///
/// Written as serde writes a [`wire::Document`], one agent at a time: the document never exists
/// as a tree of values (on 100,000 tools, GBs; issue #42.1), only as its bytes.
pub(super) fn write(out: &mut Vec<u8>, catalog: &Catalog, site: &Site, caller: &CallContext) -> serde_json::Result<()> {
    out.extend_from_slice(b"{\"woa_version\":");
    serde_json::to_writer(&mut *out, wire::VERSION)?;
    out.extend_from_slice(b",\"agents\":[");
    // A tool whose requirements the caller cannot meet is not an agent of theirs (WoA has no
    // place for OTC's context).
    for (i, tool) in catalog.tools().iter().filter(|t| t.listed_to(caller)).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, &agent(tool))?;
    }
    out.extend_from_slice(b"],\"transports\":");
    serde_json::to_writer(&mut *out, &transports(site))?;
    out.push(b'}');
    Ok(())
}

/// Where the document's agents are reached.
fn transports(site: &Site) -> Transports {
    Transports {
        rest: Some(Rest {
            base: site.base.clone(),
            invoke_path: site.invoke_path.clone(),
        }),
        mcp: Some(Mcp {
            server: site.mcp_server.clone(),
            tool_namespace: site.tool_namespace.clone(),
            // The MCP tool name is the agent id (docs/protocols.md §1), so `agent` carries it.
            tool_field: "agent".to_owned(),
        }),
        other: Default::default(),
    }
}

/// The agent field's value for a tool whose calls a human confirms (issue #40).
const CONFIRMATION_REQUIRED: &str = "required";

/// The agent of a tool's latest served version.
pub(super) fn agent(tool: &Tool) -> Agent {
    let version = tool.latest();
    Agent {
        id: tool.name.clone(),
        name: tool.title.clone().unwrap_or_else(|| tool.name.clone()),
        description: version.description.clone(),
        version: Some(version.semver.to_string()),
        capabilities: tool.tags_with_toolkit().map(str::to_owned).collect(),
        inputs: schema_document(version.input_schema()),
        // What a call pinned to any served version may return (issue #22.7): only the outputs
        // every one of them returns are required.
        outputs: schema_document(&tool.output_schema_for_any_version(version)),
        transports: vec![wire::REST.to_owned(), wire::MCP.to_owned()],
        operations: None,
        confirmation: version.confirmation.as_ref().map(|_| CONFIRMATION_REQUIRED.to_owned()),
    }
}

/// A core schema as a standalone JSON Schema document: the same keywords, with `$schema`
/// naming the 2020-12 dialect first, so a client need not guess (draft §4.2).
pub(super) fn schema_document(schema: &Value) -> Value {
    let mut document = Map::new();
    document.insert("$schema".to_owned(), DIALECT.into());
    if let Value::Object(keywords) = schema {
        document.extend(keywords.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Value::Object(document)
}

/// What an envelope asks of the engine, once checked against the URL.
#[derive(Debug, PartialEq)]
pub(super) struct Call {
    /// The version to run.
    pub version: VersionSelector,
    /// The input object.
    pub input: Map<String, Value>,
    /// The confirmation the envelope presents (issue #40).
    pub confirmation: Option<String>,
}

/// Checks an envelope sent to the invocation URL of `agent` (draft §5.1, §5.2), in the order
/// a client would fix it: the agent, the operation, the version, the input. The error is the
/// `detail` of a 400.
pub(super) fn call(agent: &str, envelope: Envelope) -> Result<Call, String> {
    if let Some(named) = &envelope.agent
        && named != agent
    {
        return Err(format!(
            "the envelope names agent `{named}`, but the URL addresses `{agent}`; send the same agent in both, or leave `agent` out (draft §5.2)"
        ));
    }
    if let Some(operation) = &envelope.operation
        && operation != wire::DEFAULT_OPERATION
    {
        return Err(format!(
            "agent `{agent}` has a single operation, but the envelope names operation `{operation}`; leave `operation` out or send `\"default\"`"
        ));
    }
    let version = match &envelope.version {
        None => VersionSelector::Latest,
        Some(text) => {
            VersionSelector::pin(text).map_err(|why| format!("`version`: {why}; leave it out to run the latest"))?
        }
    };
    let input = match envelope.input {
        Some(Value::Object(input)) => input,
        None => {
            return Err(
                "the envelope has no `input`; send the agent's input as an object, `{}` when it takes none (draft §5.1)"
                    .to_owned(),
            );
        }
        Some(other) => {
            return Err(format!(
                "`input` must be a JSON object of the agent's inputs, but got {}; send e.g. {{\"input\": {{...}}}}",
                kind(&other)
            ));
        }
    };
    Ok(Call {
        version,
        input,
        confirmation: envelope.confirmation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(value: Value) -> Envelope {
        serde_json::from_value(value).unwrap()
    }

    fn catalog() -> Catalog {
        toolhost_core::catalog::Loader::default()
            .load(&toolhost_core::native::bundled_catalog())
            .unwrap()
    }

    fn site() -> Site {
        Site {
            base: "https://tools.example.com".to_owned(),
            invoke_path: "/woa/agents/{agent_id}/invoke".to_owned(),
            mcp_server: "https://tools.example.com/mcp".to_owned(),
            tool_namespace: "toolhost".to_owned(),
        }
    }

    /// The draft's agent-id ABNF: `1*( ALPHA / DIGIT / "-" / "_" )` (§4.1).
    fn is_agent_id(id: &str) -> bool {
        !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }

    #[test]
    fn one_agent_per_tool_at_its_latest_version() {
        let catalog = catalog();
        // Written a tool at a time, read back as the wire type: the bytes are a WoA document.
        let mut bytes = Vec::new();
        write(&mut bytes, &catalog, &site(), &CallContext::default_all()).unwrap();
        let document: wire::Document = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(document.woa_version, "1");
        assert_eq!(document.agents.len(), catalog.tools().len());
        let convert = document.agents.iter().find(|a| a.id == "convert_length").unwrap();
        let tool = catalog.find("convert_length").unwrap();
        assert_eq!(
            convert.version.as_deref(),
            Some(tool.latest().semver.to_string().as_str())
        );
        assert_eq!(convert.capabilities[0], tool.toolkit);
        assert_eq!(convert.transports, ["rest", "mcp"]);
        assert_eq!(convert.inputs["$schema"], DIALECT);
        assert_eq!(convert.inputs["properties"], tool.latest().input_schema()["properties"]);
        assert_eq!(convert.outputs["$schema"], DIALECT);
        assert!(document.agents.iter().all(|a| is_agent_id(&a.id)));
        let rest = document.transports.rest.unwrap();
        assert_eq!(rest.base, "https://tools.example.com");
        assert_eq!(rest.invoke_path, "/woa/agents/{agent_id}/invoke");
        let mcp = document.transports.mcp.unwrap();
        assert_eq!(
            (
                mcp.server.as_str(),
                mcp.tool_namespace.as_str(),
                mcp.tool_field.as_str()
            ),
            ("https://tools.example.com/mcp", "toolhost", "agent")
        );
    }

    #[test]
    fn schema_document_names_its_dialect_first() {
        let doc = schema_document(&json!({"type": "object", "properties": {}}));
        assert_eq!(doc, json!({"$schema": DIALECT, "type": "object", "properties": {}}));
        assert_eq!(doc.as_object().unwrap().keys().next().unwrap(), "$schema");
    }

    #[test]
    fn agent_and_operation_may_be_left_out_or_match() {
        for body in [
            json!({"input": {"a": 1}}),
            json!({"agent": "add", "operation": "default", "input": {"a": 1}}),
        ] {
            let call = call("add", envelope(body)).unwrap();
            assert_eq!(call.version, VersionSelector::Latest);
            assert_eq!(Value::Object(call.input), json!({"a": 1}));
        }
    }

    #[test]
    fn a_version_pins_a_semver() {
        let call = call("add", envelope(json!({"input": {}, "version": "1.1.0"}))).unwrap();
        assert_eq!(call.version, VersionSelector::Semver(semver::Version::new(1, 1, 0)));
    }

    #[test]
    fn each_envelope_rule_says_what_to_change() {
        let refused = |body: Value| call("add", envelope(body)).unwrap_err();
        let message = refused(json!({"agent": "other", "input": {}}));
        assert!(message.contains("`other`") && message.contains("`add`"), "{message}");
        let message = refused(json!({"operation": "summarize", "input": {}}));
        assert!(
            message.contains("`summarize`") && message.contains("default"),
            "{message}"
        );
        let message = refused(json!({"input": {}, "version": "1.x"}));
        assert!(message.contains("`1.x` is not a version"), "{message}");
        let pinned = call("add", envelope(json!({"input": {}, "version": "1"}))).unwrap();
        assert_eq!(pinned.version, VersionSelector::Semver(semver::Version::new(1, 0, 0)));
        assert!(refused(json!({})).contains("no `input`"));
        for (input, said) in [
            (json!([1]), "an array"),
            (json!("x"), "a string"),
            (json!(1), "a number"),
            (json!(true), "a boolean"),
        ] {
            let message = refused(json!({ "input": input }));
            assert!(message.contains(said), "{message}");
        }
    }
}

/// Issue #12: any JSON as a WoA envelope is refused with a message or accepted, never a panic;
/// an accepted envelope's input is the object sent.
#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::call;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn envelopes_never_panic(body in crate::adapter::props::json()) {
            // Decoded as the server decodes a body (a JSON object, then its shape).
            if let Ok(envelope) = crate::http::body::parse::<toolhost_wire::woa::Envelope>(body.to_string().as_bytes()) {
                let again: toolhost_wire::woa::Envelope = serde_json::from_value(serde_json::to_value(&envelope).unwrap()).unwrap();
                prop_assert_eq!(&again, &envelope);
                match call("add", envelope) {
                    Ok(accepted) => prop_assert_eq!(Some(&serde_json::Value::Object(accepted.input)), body.get("input")),
                    Err(message) => prop_assert!(!message.is_empty()),
                }
            }
        }
    }
}
