//! Every adapter runs tools through [`invoke`]: one place that adds the request's ids to the
//! call and records the call in metrics, whatever the protocol.

use std::time::Instant;

use toolhost_core::{Error, Invocation, Outcome};

use crate::State;
use crate::http::log::RequestIds;

/// The protocol a call came in by, as metrics label it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// N-ACT.
    Nact,
    /// Open Tool Calling.
    Otc,
    /// Web of Agents.
    Woa,
    /// MCP, over HTTP or stdio.
    Mcp,
}

impl Protocol {
    /// The metrics label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Nact => "nact",
            Self::Otc => "otc",
            Self::Woa => "woa",
            Self::Mcp => "mcp",
        }
    }
}

/// Runs `invocation` on the engine, with the current request's ids and metrics around it.
pub async fn invoke(state: &State, protocol: Protocol, mut invocation: Invocation) -> Result<Outcome, Error> {
    if let Some(ids) = RequestIds::current() {
        invocation.context.request_id.get_or_insert(ids.request_id);
        invocation.context.traceparent.get_or_insert(ids.traceparent);
    }
    // A tool at its concurrency cap fails fast and retryably rather than queueing. Caps are
    // by tool name, whether the call named the tool or gave its id.
    let slots = &state.tool_slots;
    let permit = if slots.enabled() {
        let catalog = state.engine.catalog();
        let name = catalog
            .find(&invocation.tool)
            .map_or(invocation.tool.as_str(), |t| t.name.as_str());
        slots.try_acquire(name)
    } else {
        Some(None)
    };
    let Some(_permit) = permit else {
        metrics::counter!("toolhost_tool_calls_rejected_total").increment(1);
        let failure = toolhost_core::ToolFailure::temporary(
            "the tool is running as many calls as it is allowed to; try again shortly",
            Some(std::time::Duration::from_secs(1)),
        )
        .with_code("busy");
        return Err(Error::Failed {
            tool: invocation.tool,
            failure: Box::new(failure),
        });
    };
    let gauge = metrics::gauge!("toolhost_tool_calls_in_flight");
    gauge.increment(1.0);
    let started = Instant::now();
    let tool = invocation.tool.clone();
    let result = state.engine.invoke(invocation).await;
    gauge.decrement(1.0);
    let (tool, version, outcome) = match &result {
        Ok(o) => (o.tool.name.clone(), o.version().semver.to_string(), "ok"),
        // A name nobody serves is not a label: callers could mint unbounded series with it.
        Err(Error::ToolNotFound { .. }) => (String::new(), String::new(), "unknown_tool"),
        Err(e) => (tool, String::new(), outcome(e)),
    };
    let protocol = protocol.label();
    metrics::counter!("toolhost_tool_calls_total", "protocol" => protocol, "tool" => tool.clone(), "version" => version, "outcome" => outcome)
        .increment(1);
    metrics::histogram!("toolhost_tool_call_duration_seconds", "protocol" => protocol, "tool" => tool)
        .record(started.elapsed().as_secs_f64());
    result
}

/// The outcome label of a failed call: one exhaustive match, like every adapter's.
fn outcome(error: &Error) -> &'static str {
    match error {
        Error::ToolNotFound { .. } => "unknown_tool",
        Error::VersionNotFound { .. } => "unknown_version",
        Error::MissingRequirement { .. } => "missing_requirement",
        Error::InvalidInput { .. } => "invalid_input",
        Error::Failed { .. } => "tool_error",
        Error::Timeout { .. } => "timeout",
    }
}
