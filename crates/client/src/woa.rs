//! Web of Agents (draft-gaikwad-woa-00, docs/protocols.md §5): discovery and REST invocation.
//!
//! The document names the invocation URL (`transports.rest.base` + `invoke_path`), so the URL a
//! call goes to comes from the server: it is checked by the SSRF guard like any other (§8.3 of
//! the draft treats the document as untrusted input).

use serde_json::{Map, Value, json};
use toolhost_wire::woa::{self as wire, Agent, Document};
use url::Url;

use crate::discover::{Ctx, Found};
use crate::error::Error;
use crate::model::{Address, Protocol, Source, Tool};
use crate::nact::{problem_error, urlencode};
use crate::{schema, text};

/// The document URL for a server URL: the URL itself when it already names the document,
/// else `/.well-known/woa.json` at its origin (RFC 8615).
pub(crate) fn document_url(url: &Url) -> Result<Url, Error> {
    if url.path().ends_with(wire::WELL_KNOWN_PATH) {
        return Ok(url.clone());
    }
    url.join(wire::WELL_KNOWN_PATH)
        .map_err(|e| Error::Setup(format!("failed to build the WoA document URL from {url}: {e}")))
}

/// Every agent in the document at `url`, one tool each.
pub(crate) async fn discover(ctx: &Ctx<'_>, url: &Url) -> Result<Found, Error> {
    let body = crate::nact::json(ctx.http.get(url, ctx.freshness, ctx.bearer).await?, Protocol::Woa)?;
    let protocol_error = |detail: String| Error::Protocol {
        url: url.to_string(),
        protocol: Protocol::Woa,
        detail,
    };
    let agents = body
        .get("agents")
        .and_then(Value::as_array)
        .ok_or_else(|| protocol_error("the document has no `agents` array".to_owned()))?;
    let transports: wire::Transports = serde_json::from_value(body.get("transports").cloned().unwrap_or(json!({})))
        .map_err(|e| protocol_error(format!("`transports` is not as the draft's §4.3 says ({e})")))?;
    if body.get("woa_version").and_then(Value::as_str) != Some(wire::VERSION) {
        tracing::warn!(%url, "the WoA document does not say woa_version \"1\"; reading it anyway");
    }
    // WoA REST must use https (draft §8.1): a plain-http document or REST base is only read
    // on loopback, at the origin the user gave, or where the user opened private addresses.
    let policy = ctx.http.guard().policy();
    if !secure_enough(url, policy) {
        return Err(Error::Refused {
            url: url.to_string(),
            reason: "a WoA document must be fetched over https (draft §8.1); plain http is read only on loopback or at an address you allowed".to_owned(),
            private: false,
        });
    }
    let endpoint = Source::Url(url.clone());
    let mut found = Found::default();
    for raw in agents.iter().take(ctx.limits.max_tools) {
        match tools(&transports, &endpoint, raw.clone(), policy) {
            Ok(t) => found.tools.extend(t),
            Err(why) => found.skipped.push(why),
        }
    }
    if agents.len() > ctx.limits.max_tools {
        found
            .skipped
            .push(format!("stopped after {} agents (the limit)", ctx.limits.max_tools));
    }
    // Keep `Document` the reference shape: a document it cannot read is reported, not trusted.
    if let Err(e) = serde_json::from_value::<Document>(body.clone()) {
        tracing::debug!(%url, error = %e, "the WoA document deviates from the draft");
    }
    Ok(found)
}

/// Whether `url` may be used for WoA: https, or plain http on loopback, at an origin the user
/// gave, or on a private address the user opened with `--allow-private` / `--allow-net`.
fn secure_enough(url: &Url, policy: &crate::guard::Policy) -> bool {
    if url.scheme() == "https" || policy.trusts(url) {
        return true;
    }
    match url.host() {
        // A private address the user opened is theirs; a public one over plain http is not.
        Some(url::Host::Ipv4(ip)) => ip.is_loopback() || (ip.is_private() && policy.check(ip.into()).is_ok()),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback() || (ip.is_unique_local() && policy.check(ip.into()).is_ok()),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// One agent → its tools: one, or one per operation when it names operations (draft §4.1);
/// `Err` says why it was skipped. The operation `default` (§5.1: the implied operation) is the
/// agent itself: the tool is named by the agent's id and keeps the agent's description (as
/// Appendix B's `summarizer`); another operation is `{agent}.{operation}`, described by the
/// agent's description and then the operation's.
fn tools(
    transports: &wire::Transports,
    endpoint: &Source,
    raw: Value,
    policy: &crate::guard::Policy,
) -> Result<Vec<Tool>, String> {
    let agent: Agent =
        serde_json::from_value(raw.clone()).map_err(|e| format!("skipped an agent that is not WoA ({e})"))?;
    let base = tool(transports, endpoint, &agent, raw, policy)?;
    let Some(operations) = agent.operations.as_ref().filter(|ops| !ops.is_empty()) else {
        return Ok(vec![base]);
    };
    let mut out = Vec::with_capacity(operations.len());
    for op in operations {
        if !text::is_plain_name(&op.name) {
            return Err(format!("skipped `{}`: an operation name is not plain text", agent.id));
        }
        let mut t = base.clone();
        if op.name != DEFAULT_OPERATION {
            t.name = format!("{}.{}", agent.id, op.name);
            t.description = text::clean(
                &format!("{}\n\nOperation `{}`: {}", agent.description, op.name, op.description),
                text::MAX_DESCRIPTION,
            );
        }
        if let Some(inputs) = &op.inputs {
            t.inputs = schema::parameters(inputs);
            plain_inputs(&agent.id, &t.inputs)?;
            t.input_schema = inputs.clone();
            t.compiled = Default::default();
        }
        if let Some(outputs) = &op.outputs {
            t.outputs = schema::outputs(outputs);
            t.output_schema = Some(outputs.clone());
        }
        if let Address::Woa { operation, .. } = &mut t.address {
            *operation = Some(op.name.clone());
        }
        out.push(t);
    }
    Ok(out)
}

/// The operation an envelope names when it names none (draft §5.1).
pub(crate) const DEFAULT_OPERATION: &str = "default";

/// Every input name is plain text (draft §8.3: a server's names are untrusted), else why the
/// agent is skipped.
fn plain_inputs(agent: &str, inputs: &[crate::model::Parameter]) -> Result<(), String> {
    match inputs.iter().find(|p| !text::is_plain_name(&p.name)) {
        Some(bad) => Err(format!(
            "skipped `{agent}`: the input `{}` is not plain text",
            text::one_line(&bad.name, 80)
        )),
        None => Ok(()),
    }
}

/// One agent → a tool; `Err` says why it was skipped.
fn tool(
    transports: &wire::Transports,
    endpoint: &Source,
    agent: &Agent,
    raw: Value,
    policy: &crate::guard::Policy,
) -> Result<Tool, String> {
    if !text::is_plain_name(&agent.id) {
        return Err(format!(
            "skipped an agent whose id is not plain text: `{}`",
            text::one_line(&agent.id, 80)
        ));
    }
    let inputs = schema::parameters(&agent.inputs);
    plain_inputs(&agent.id, &inputs)?;
    let invoke = match (&transports.rest, agent.transports.iter().any(|t| t == wire::REST)) {
        (Some(rest), true) => {
            let path = rest
                .invoke_path
                .replace(wire::AGENT_ID_PLACEHOLDER, &urlencode(&agent.id));
            Url::parse(&format!("{}{path}", rest.base.trim_end_matches('/'))).ok()
        }
        _ => None,
    };
    let invoke = match invoke {
        Some(url) if !secure_enough(&url, policy) => {
            return Err(format!(
                "skipped `{}`: its REST base is plain http on the network, and WoA REST must use https (draft §8.1)",
                agent.id
            ));
        }
        other => other,
    };
    // Only MCP: call the agent as a tool of the document's MCP server (draft §4.3.2).
    let mcp = match (
        &invoke,
        &transports.mcp,
        agent.transports.iter().any(|t| t == wire::MCP),
    ) {
        (None, Some(mcp), true) => Url::parse(&mcp.server).ok(),
        _ => None,
    };
    Ok(Tool {
        title: (agent.name != agent.id).then(|| text::one_line(&agent.name, 200)),
        description: text::clean(&agent.description, text::MAX_DESCRIPTION),
        versions: agent.version.iter().cloned().collect(),
        version: agent.version.clone(),
        version_number: None,
        inputs,
        outputs: schema::outputs(&agent.outputs),
        input_schema: agent.inputs.clone(),
        output_schema: Some(agent.outputs.clone()),
        protocol: Protocol::Woa,
        endpoint: endpoint.clone(),
        address: Address::Woa {
            invoke,
            agent: agent.id.clone(),
            operation: None,
            mcp,
        },
        name: agent.id.clone(),
        definition: raw,
        history: Vec::new(),
        compiled: Default::default(),
    })
}

/// Where a REST call goes: the invocation URL, the agent, and the operation when it has several.
pub(crate) struct Target<'a> {
    pub invoke: Option<&'a Url>,
    pub agent: &'a str,
    pub operation: Option<&'a str>,
}

/// One call through the REST transport (draft §5): the response body, the output itself.
pub(crate) async fn invoke(
    ctx: &Ctx<'_>,
    tool: &Tool,
    target: Target<'_>,
    input: &Map<String, Value>,
    confirmation: Option<&str>,
) -> Result<Value, Error> {
    let Target {
        invoke,
        agent,
        operation,
    } = target;
    let Some(url) = invoke else {
        return Err(Error::Protocol {
            url: tool.endpoint.to_string(),
            protocol: Protocol::Woa,
            detail: format!("agent `{agent}` offers no REST transport; reach it over its MCP server instead"),
        });
    };
    let mut envelope = json!({"agent": agent, "input": input});
    if let Some(operation) = operation {
        envelope["operation"] = Value::String(operation.to_owned());
    }
    // The confirmation a human gave the call (issue #40): an extension member (draft §5.1).
    if let Some(id) = confirmation {
        envelope["confirmation"] = Value::String(id.to_owned());
    }
    let reply = ctx.http.post_json(url, &envelope, ctx.timeout, ctx.bearer).await?;
    if let Some(held) = crate::confirm::Confirmation::from_reply(&tool.name, Protocol::Woa, &reply) {
        return Err(Error::Confirmation(Box::new(held)));
    }
    if !(200..300).contains(&reply.status) {
        return Err(problem_error(&reply, &tool.name));
    }
    reply.json().map_err(|detail| Error::Protocol {
        url: url.to_string(),
        protocol: Protocol::Woa,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_lives_at_the_origin() {
        let url = Url::parse("http://h:1/some/path").unwrap();
        assert_eq!(document_url(&url).unwrap().as_str(), "http://h:1/.well-known/woa.json");
        let direct = Url::parse("http://h/.well-known/woa.json").unwrap();
        assert_eq!(document_url(&direct).unwrap(), direct);
    }

    #[test]
    fn agents_become_tools_with_their_invoke_url() {
        let transports: wire::Transports = serde_json::from_value(json!({
            "rest": {"base": "https://api.example.com/", "invoke_path": "/agents/{agent_id}/invoke"}
        }))
        .unwrap();
        let endpoint = Source::Url(Url::parse("https://api.example.com/.well-known/woa.json").unwrap());
        let raw = json!({
            "id": "summarizer", "name": "Document Summarizer", "description": "Summarizes.",
            "version": "1.0.0",
            "inputs": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "outputs": {"type": "object", "properties": {"summary": {"type": "string"}}},
            "transports": ["rest"]
        });
        let t = tools(&transports, &endpoint, raw, &crate::guard::Policy::strict())
            .unwrap()
            .remove(0);
        let Address::Woa { invoke, .. } = &t.address else {
            panic!()
        };
        assert_eq!(
            invoke.as_ref().unwrap().as_str(),
            "https://api.example.com/agents/summarizer/invoke"
        );
        assert_eq!(t.title.as_deref(), Some("Document Summarizer"));
        assert_eq!(t.outputs[0].name, "summary");
    }

    /// Issue #22.12 (draft §4.1, §4.3.2, §8.1): operations become tools of their own; an agent
    /// with only the MCP transport is called through the MCP server; a plain-http REST base on
    /// the network is refused.
    #[test]
    fn operations_mcp_only_agents_and_plain_http_bases() {
        let strict = crate::guard::Policy::strict();
        let endpoint = Source::Url(Url::parse("https://api.example.com/.well-known/woa.json").unwrap());
        let agent = |transports: Value| {
            json!({
                "id": "docs", "name": "Docs", "description": "Documents.",
                "inputs": {"type": "object", "properties": {"text": {"type": "string"}}},
                "outputs": {"type": "object"},
                "transports": transports,
                "operations": [
                    {"name": "summarize", "description": "Summarize a text."},
                    {"name": "translate", "description": "Translate a text.",
                     "inputs": {"type": "object", "properties": {"text": {"type": "string"}, "to": {"type": "string"}}, "required": ["text", "to"]}}
                ]
            })
        };
        let rest: wire::Transports = serde_json::from_value(json!({
            "rest": {"base": "https://api.example.com", "invoke_path": "/agents/{agent_id}/invoke"},
            "mcp": {"server": "https://api.example.com/mcp", "tool_namespace": "x", "tool_field": "agent"}
        }))
        .unwrap();
        let made = tools(&rest, &endpoint, agent(json!(["rest"])), &strict).unwrap();
        let names: Vec<&str> = made.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["docs.summarize", "docs.translate"]);
        assert!(
            made[1].inputs.iter().any(|p| p.name == "to"),
            "an operation's own inputs"
        );
        let Address::Woa { operation, .. } = &made[1].address else {
            panic!()
        };
        assert_eq!(operation.as_deref(), Some("translate"));

        let mut odd = agent(json!(["rest"]));
        odd["operations"][0]["inputs"] = json!({"type": "object", "properties": {"te\u{202e}xt": {"type": "string"}}});
        let refused = tools(&rest, &endpoint, odd, &strict).unwrap_err();
        assert!(
            refused.contains("not plain text"),
            "an operation's inputs are checked too: {refused}"
        );

        let only_mcp = tools(&rest, &endpoint, agent(json!(["mcp"])), &strict).unwrap();
        let Address::Woa { invoke, mcp, .. } = &only_mcp[0].address else {
            panic!()
        };
        assert!(invoke.is_none());
        assert_eq!(mcp.as_ref().map(Url::as_str), Some("https://api.example.com/mcp"));

        let plain: wire::Transports = serde_json::from_value(json!({
            "rest": {"base": "http://api.example.com", "invoke_path": "/agents/{agent_id}/invoke"}
        }))
        .unwrap();
        let refused = tools(&plain, &endpoint, agent(json!(["rest"])), &strict).unwrap_err();
        assert!(refused.contains("https"), "{refused}");
        let local: wire::Transports = serde_json::from_value(json!({
            "rest": {"base": "http://127.0.0.1:8080", "invoke_path": "/agents/{agent_id}/invoke"}
        }))
        .unwrap();
        assert!(
            tools(&local, &endpoint, agent(json!(["rest"])), &strict).is_ok(),
            "loopback is fine"
        );
    }
}
