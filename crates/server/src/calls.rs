//! Every adapter runs tools through [`invoke`]: one place that adds the request's ids to the
//! call and records the call in metrics, whatever the protocol.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use toolhost_core::{Error, Invocation, Outcome};

use crate::State;
use crate::http::log::RequestIds;
use crate::http::meter::Handles;

pub use toolhost_wire::Protocol;

/// Runs `invocation` on the engine, with the current request's ids and metrics around it.
pub async fn invoke(state: &State, protocol: Protocol, mut invocation: Invocation) -> Result<Outcome, Error> {
    if let Some(ids) = RequestIds::current() {
        invocation.context.request_id.get_or_insert(ids.request_id);
        invocation.context.traceparent.get_or_insert(ids.traceparent);
    }
    invocation.context.protocol.get_or_insert(protocol.as_str());
    // A tool at its concurrency cap fails fast and retryably rather than queueing. Caps are by
    // the tool's own name, whichever name or id the call gave; a tool the caller may not see
    // (or that does not exist) is not capped, so it answers exactly as unknown, below.
    let slots = &state.tool_slots;
    let _permit = if slots.enabled() {
        let catalog = state.engine.catalog();
        match catalog.find_for(&invocation.tool, &invocation.context.access) {
            Some(tool) => match slots.try_acquire(&tool.name) {
                Some(permit) => permit,
                None => return Err(busy(tool.name.clone())),
            },
            None => None,
        }
    } else {
        None
    };
    let meters = meters();
    meters.in_flight.increment(1.0);
    let started = Instant::now();
    // A failed call is counted under the version it asked for (or the current one), like a
    // successful one, not under `version=""` (issue #12.11).
    let selector = invocation.version.clone();
    let result = state.engine.invoke(invocation).await;
    meters.in_flight.decrement(1.0);
    let took = started.elapsed();
    let elapsed = took.as_secs_f64();
    match &result {
        Ok(o) => meters.record(protocol, &o.tool.name, Some(&o.version().semver), "ok", elapsed),
        // A name nobody serves is not a label: callers could mint unbounded series with it.
        Err(Error::ToolNotFound { .. }) => meters.record(protocol, "", None, "unknown_tool", elapsed),
        // Every other error names the tool as the catalog does: a bounded set.
        Err(
            e @ (Error::VersionNotFound { tool, .. }
            | Error::MissingRequirement { tool, .. }
            | Error::InvalidInput { tool, .. }
            | Error::Failed { tool, .. }
            | Error::Timeout { tool, .. }
            | Error::Confirmation { tool, .. }),
        ) => {
            let catalog = state.engine.catalog();
            let version = catalog
                .find(tool)
                .and_then(|t| t.resolve(&selector))
                .map(|v| v.semver.clone());
            meters.record(protocol, tool, version.as_ref(), outcome(e), elapsed);
        }
    }
    if let Some(serving) = &state.agent {
        let label = result.as_ref().map_or_else(outcome, |_| "ok");
        crate::state::agents::record(serving, label, took);
    }
    result
}

pub use crate::limits::BUSY_CODE;

/// The retryable failure of a call to a tool at its concurrency cap.
fn busy(tool: String) -> Error {
    meters().rejected.increment(1);
    let failure = toolhost_core::ToolFailure::temporary(
        "the tool is running as many calls as it is allowed to; try again shortly",
        Some(std::time::Duration::from_secs(1)),
    )
    .with_code(BUSY_CODE);
    Error::Failed {
        tool,
        failure: Box::new(failure),
    }
}

/// The protocols, in the order of [`ToolMeters::duration`].
const PROTOCOLS: [Protocol; 4] = [Protocol::Nact, Protocol::Otc, Protocol::Woa, Protocol::Mcp];

/// The call metrics' handles: per tool a latency histogram per protocol, and a counter per
/// protocol, version and outcome.
#[derive(Debug)]
struct Meters {
    in_flight: metrics::Gauge,
    rejected: metrics::Counter,
    tools: Handles<String, Arc<ToolMeters>>,
}

#[derive(Debug)]
struct ToolMeters {
    duration: [metrics::Histogram; 4],
    calls: Handles<(Protocol, Option<semver::Version>, &'static str), metrics::Counter>,
}

fn meters() -> &'static Meters {
    static METERS: OnceLock<Meters> = OnceLock::new();
    METERS.get_or_init(|| Meters {
        in_flight: metrics::gauge!("toolhost_tool_calls_in_flight"),
        rejected: metrics::counter!("toolhost_tool_calls_rejected_total"),
        tools: Handles::default(),
    })
}

impl Meters {
    fn record(
        &self,
        protocol: Protocol,
        tool: &str,
        version: Option<&semver::Version>,
        outcome: &'static str,
        secs: f64,
    ) {
        let meters = self.tools.get(tool, || {
            let duration = PROTOCOLS.map(|p| {
                metrics::histogram!("toolhost_tool_call_duration_seconds", "protocol" => p.as_str(), "tool" => tool.to_owned())
            });
            let meters = ToolMeters {
                duration,
                calls: Handles::default(),
            };
            (tool.to_owned(), Arc::new(meters))
        });
        let index = PROTOCOLS.iter().position(|p| *p == protocol).unwrap_or_default();
        meters.duration[index].record(secs);
        let key = (protocol, version.cloned(), outcome);
        meters
            .calls
            .get(&key, || {
                let version = version.map(ToString::to_string).unwrap_or_default();
                let counter = metrics::counter!("toolhost_tool_calls_total", "protocol" => protocol.as_str(), "tool" => tool.to_owned(), "version" => version, "outcome" => outcome);
                (key.clone(), counter)
            })
            .increment(1);
    }
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
        Error::Confirmation { .. } => "confirmation",
    }
}
