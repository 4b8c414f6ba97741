//! Web of Agents (draft-gaikwad-woa-00) wire types, with the readings of docs/protocols.md §5.
//!
//! These serve both sides: the server renders a [`Document`] and decodes an [`Envelope`]; a
//! client decodes the document and sends the envelope. Field order follows the draft's §4.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The media type of a WoA document (draft §9.2).
pub const CONTENT_TYPE: &str = "application/woa+json";

/// The only `woa_version` the draft defines (§4).
pub const VERSION: &str = "1";

/// The well-known path of the document (draft §9.1, RFC 8615).
pub const WELL_KNOWN_PATH: &str = "/.well-known/woa.json";

/// The placeholder a REST `invoke_path` may contain (draft §4.3.1).
pub const AGENT_ID_PLACEHOLDER: &str = "{agent_id}";

/// The name of the REST transport (draft §4.3.1, §9.3).
pub const REST: &str = "rest";

/// The name of the MCP transport (draft §4.3.2, §9.3).
pub const MCP: &str = "mcp";

/// The operation a client names when an agent has a single one (draft §5.1: "default").
pub const DEFAULT_OPERATION: &str = "default";

/// A WoA document (draft §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Always [`VERSION`].
    pub woa_version: String,
    /// The agents this host describes.
    pub agents: Vec<Agent>,
    /// Transport configurations by transport name.
    pub transports: Transports,
}

/// One agent (draft §4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    /// A token unique in the document: `1*( ALPHA / DIGIT / "-" / "_" )`.
    pub id: String,
    /// A short, human-readable name.
    pub name: String,
    /// What the agent does; untrusted input for clients (draft §8.3).
    pub description: String,
    /// The implementation's version, e.g. `1.0.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Stable capability identifiers; the draft defines no vocabulary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// The JSON Schema (2020-12) of the envelope's `input` (draft §4.2).
    pub inputs: Value,
    /// The JSON Schema (2020-12) of a successful response body.
    pub outputs: Value,
    /// Keys of the top-level `transports` that can invoke this agent.
    pub transports: Vec<String>,
    /// Named operations; absent means one unnamed operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Vec<Operation>>,
    /// Extension (toolhost, issue #40; WoA §6 allows deployment metadata): `required` when a
    /// human confirms each call before it runs (answered `403` `confirmation-required` until
    /// then, retried with the envelope member `confirmation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<String>,
}

/// One operation of an agent that has several (draft §4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    /// A token naming the operation.
    pub name: String,
    /// What the operation does.
    pub description: String,
    /// Overrides the agent's `inputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Value>,
    /// Overrides the agent's `outputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Value>,
}

/// The top-level `transports` object (draft §4.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transports {
    /// The REST transport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<Rest>,
    /// The MCP transport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<Mcp>,
    /// Any other transport, private (reverse-DNS names, §4.3.3) or later registered.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// A REST transport configuration (draft §4.3.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rest {
    /// The absolute URL of the API's base; the invocation URL is `base` + `invoke_path`.
    pub base: String,
    /// An absolute path, possibly with [`AGENT_ID_PLACEHOLDER`].
    pub invoke_path: String,
}

/// An MCP transport configuration (draft §4.3.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mcp {
    /// The MCP server's endpoint URL.
    pub server: String,
    /// The logical namespace of the tools on that server.
    pub tool_namespace: String,
    /// The envelope field whose value is the MCP tool name.
    pub tool_field: String,
}

/// A REST invocation envelope (draft §5.1) with toolhost's `version` extension. Other members
/// are ignored: §5.1 lets transports add fields (toolhost adds `version` itself), so a client of
/// another host's extension is not refused (issue #37.16).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The agent's id; the host takes it from the URL when absent (draft §5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The operation; absent or [`DEFAULT_OPERATION`] for toolhost's agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The agent's input. Required by the draft, and an object; kept as any JSON value so
    /// that the host can say precisely what is wrong with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Extension (draft §5.1 allows added fields): the semantic version to run; the latest
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Extension (toolhost, issue #40): the id of the confirmation a human gave this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The Appendix B document of the draft decodes, and encodes back to the same JSON.
    #[test]
    fn appendix_b_document_round_trips() {
        let text = json!({
            "woa_version": "1",
            "agents": [{
                "id": "summarizer",
                "name": "Document Summarizer",
                "description": "Summarizes English text.",
                "version": "1.0.0",
                "capabilities": ["https://example.com/capability/summarization"],
                "inputs": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                "outputs": {"type": "object", "properties": {"summary": {"type": "string"}}},
                "transports": ["rest"],
                "operations": [{"name": "default", "description": "Default summarization operation."}]
            }],
            "transports": {
                "rest": {"base": "https://api.example.com", "invoke_path": "/agents/{agent_id}/invoke"},
                "com.example.mytransport": {"anything": true}
            }
        });
        let document: Document = serde_json::from_value(text.clone()).unwrap();
        assert_eq!(document.agents[0].id, "summarizer");
        assert!(document.transports.other.contains_key("com.example.mytransport"));
        assert_eq!(serde_json::to_value(&document).unwrap(), text);
    }

    /// The Appendix B envelope decodes; a member the draft does not define is an extension some
    /// transport added (§5.1: "Transports MAY add additional fields"), ignored.
    #[test]
    fn envelope_fields() {
        let envelope: Envelope = serde_json::from_value(json!({
            "agent": "summarizer",
            "operation": "default",
            "input": {"text": "The IETF is an open community of designers.", "max_words": 40}
        }))
        .unwrap();
        assert_eq!(envelope.agent.as_deref(), Some("summarizer"));
        assert_eq!(envelope.version, None);
        let extended: Envelope =
            serde_json::from_value(json!({"input": {}, "trace": "abc", "com.example.priority": 1})).unwrap();
        assert_eq!(extended.input, Some(json!({})));
    }
}
