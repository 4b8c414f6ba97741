//! [`Engine::invoke`]: resolve the version, validate the input, run the backend under its
//! timeout, keep only the outputs the version declares, and check them against their types.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::{Map, Value};

use crate::backend::{BackendCall, CallContext, ToolFailure};
use crate::catalog::{Access, Catalog, Tool, Version, VersionSelector};
use crate::confirm::{Admission, Gate, GateCall, Stored};
use crate::validate::{self, ParameterError};

/// Runs tools from the current catalog. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Engine {
    catalog: ArcSwap<Catalog>,
    generation: std::sync::atomic::AtomicU64,
    /// The generation, for those who wait for the next catalog ([`Engine::reloads`]).
    reloads: tokio::sync::watch::Sender<u64>,
    /// For an agent's engine, the whole catalog's: the tools a backend calls in turn (a
    /// sculpted `tool` step) are found there, not among the agent's tools.
    outer: Option<Arc<Engine>>,
    /// Who admits calls of versions that need confirmation ([`Engine::set_gate`]); without
    /// one, such calls fail closed.
    gate: std::sync::OnceLock<Arc<dyn Gate>>,
}

/// One call of a tool, as an adapter decoded it.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The tool's name or UUID.
    pub tool: String,
    /// Which version to run.
    pub version: VersionSelector,
    /// The arguments, keyed by parameter name.
    pub input: Map<String, Value>,
    /// Secrets, user and request identity.
    pub context: CallContext,
}

/// A successful call.
#[derive(Debug)]
pub struct Outcome {
    /// The tool that ran.
    pub tool: Arc<Tool>,
    version: usize,
    /// The output object, checked against the declared outputs.
    pub output: Map<String, Value>,
    /// How long the backend took.
    pub elapsed: Duration,
}

impl Outcome {
    /// The version that ran.
    pub fn version(&self) -> &Version {
        &self.tool.versions[self.version]
    }
}

/// Why a call did not produce an output. Adapters map each kind to their protocol in one match.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No tool with this name or id is served.
    #[error("no tool named `{tool}` is served here; list the tools to see what is")]
    ToolNotFound { tool: String },
    /// The tool exists but the requested version is not served.
    #[error("tool `{tool}` has no served version {version}; served versions: {served}")]
    VersionNotFound {
        tool: String,
        version: VersionSelector,
        served: String,
    },
    /// The tool needs a secret, token or user id that the call did not carry.
    #[error("tool `{tool}` requires {missing}, which the call did not provide")]
    MissingRequirement { tool: String, missing: Requirement },
    /// The input does not match the version's parameters.
    #[error("the input to `{tool}` is not valid: {}", summarize(.errors))]
    InvalidInput { tool: String, errors: Vec<ParameterError> },
    /// The tool ran and failed.
    #[error("tool `{tool}` failed: {failure}")]
    Failed { tool: String, failure: Box<ToolFailure> },
    /// The backend did not answer within the version's timeout.
    #[error("tool `{tool}` did not finish within {} ms", .after.as_millis())]
    Timeout { tool: String, after: Duration },
    /// The version needs a human's confirmation of this exact call first, and has none that
    /// is approved: nothing ran (issue #40).
    #[error("{}", .answer.prompt())]
    Confirmation {
        tool: String,
        answer: Box<crate::confirm::Answer>,
    },
}

/// Something a call must carry beside its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// A secret, by id.
    Secret(String),
    /// An authorization token, by provider id.
    Authorization(String),
    /// The end user's id.
    UserId,
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Secret(id) => write!(f, "the secret `{id}`"),
            Self::Authorization(id) => write!(f, "an authorization token from `{id}`"),
            Self::UserId => f.write_str("a user id"),
        }
    }
}

impl Tool {
    /// The first requirement of the tool that `context` does not meet (secrets, tokens and the
    /// user a call must bring: OTC's `context`, or what the server knows of the caller).
    pub fn unmet_requirement(&self, context: &CallContext) -> Option<Requirement> {
        missing(self, context)
    }

    /// Whether a protocol that cannot carry OTC's `context` (N-ACT, WoA, MCP) lists the tool to
    /// a caller whose context is `context`: it may see it, it is not withdrawn, and every
    /// requirement is met by what the server knows of the caller (its user, the secrets and
    /// tokens the operator maps to it). A tool a caller could not call is not shown to it.
    pub fn listed_to(&self, context: &CallContext) -> bool {
        self.listed_for(&context.access) && missing(self, context).is_none()
    }
}

/// The first requirement of `tool` that `context` does not meet.
fn missing(tool: &Tool, context: &CallContext) -> Option<Requirement> {
    let r = &tool.requirements;
    if let Some(id) = r.secrets.iter().find(|id| !context.secrets.contains_key(*id)) {
        return Some(Requirement::Secret(id.clone()));
    }
    if let Some(a) = r
        .authorization
        .iter()
        .find(|a| !context.authorization.contains_key(&a.id))
    {
        return Some(Requirement::Authorization(a.id.clone()));
    }
    (r.user_id && context.user_id.as_deref().is_none_or(str::is_empty)).then_some(Requirement::UserId)
}

fn summarize(errors: &[ParameterError]) -> String {
    errors.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; ")
}

impl Engine {
    /// The catalog says the tool can be called twice with no further effect.
    fn is_safe_to_repeat(tool: &Tool) -> bool {
        tool.annotations.idempotent == Some(true) || tool.annotations.read_only == Some(true)
    }

    /// An engine serving `catalog`.
    pub fn new(catalog: Catalog) -> Self {
        Self {
            catalog: ArcSwap::from_pointee(catalog),
            generation: std::sync::atomic::AtomicU64::new(1),
            reloads: tokio::sync::watch::Sender::new(1),
            outer: None,
            gate: std::sync::OnceLock::new(),
        }
    }

    /// An engine serving an agent's catalog ([`crate::catalog::Agent::catalog`]) whose
    /// backends call other tools through `outer`, the whole catalog's engine.
    pub fn for_agent(catalog: Arc<Catalog>, outer: Arc<Engine>) -> Self {
        Self {
            catalog: ArcSwap::new(catalog),
            generation: std::sync::atomic::AtomicU64::new(1),
            reloads: tokio::sync::watch::Sender::new(1),
            outer: Some(outer),
            gate: std::sync::OnceLock::new(),
        }
    }

    /// Installs the confirmation service (once; later calls keep the first).
    pub fn set_gate(&self, gate: Arc<dyn Gate>) {
        let _ = self.gate.set(gate);
    }

    /// The confirmation service: this engine's, or the whole catalog's for an agent's.
    fn gate(&self) -> Option<&Arc<dyn Gate>> {
        self.gate.get().or_else(|| self.outer.as_deref().and_then(Engine::gate))
    }

    /// The current catalog. Calls already running keep the catalog they started with.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.load_full()
    }

    /// Atomically serves a new catalog from now on.
    pub fn replace(&self, catalog: Catalog) {
        self.catalog.store(Arc::new(catalog));
        let generation = self.generation.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.reloads.send_replace(generation);
    }

    /// Sees each [`Engine::replace`] from now on: `changed()` returns once a new catalog is
    /// served (MCP resource subscriptions wait on it).
    pub fn reloads(&self) -> tokio::sync::watch::Receiver<u64> {
        self.reloads.subscribe()
    }

    /// How many catalogs this engine has served: 1 at start, one more per [`Engine::replace`].
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Finds a tool and resolves the version, without running anything.
    pub fn resolve(&self, tool: &str, version: &VersionSelector, access: &Access) -> Result<(Arc<Tool>, usize), Error> {
        let catalog = self.catalog.load();
        let (tool, resolved) = resolve(&catalog, tool, version, access)?;
        Ok((Arc::clone(tool), resolved.number as usize - 1))
    }

    /// Runs one call: resolve, validate, call the backend under its timeout, check the output.
    pub async fn invoke(&self, invocation: Invocation) -> Result<Outcome, Error> {
        let (tool, index) = self.resolve(&invocation.tool, &invocation.version, &invocation.context.access)?;
        let version = &tool.versions[index];
        if let Some(missing) = missing(&tool, &invocation.context) {
            return Err(Error::MissingRequirement {
                tool: tool.name.clone(),
                missing,
            });
        }
        let input = Value::Object(invocation.input);
        if let Err(errors) = validate::check_input(
            version.validators.input(version.input_schema()),
            &tool.name,
            &version.inputs,
            &input,
        ) {
            return Err(Error::InvalidInput {
                tool: tool.name.clone(),
                errors,
            });
        }
        let Value::Object(input) = input else {
            unreachable!("constructed as an object above")
        };
        let refused = version.backend.check_input(&input);
        if !refused.is_empty() {
            return Err(Error::InvalidInput {
                tool: tool.name.clone(),
                errors: refused,
            });
        }
        // Only a valid call reaches a human; only a confirmed one reaches the backend.
        let Some(policy) = &version.confirmation else {
            return self.run(&tool, index, input, &invocation.context).await;
        };
        let Some(gate) = self.gate() else {
            let failure = ToolFailure::permanent(
                "this tool needs a human's confirmation, and this server has no confirmation service; nothing was done",
            );
            return Err(Error::Failed {
                tool: tool.name.clone(),
                failure: Box::new(failure),
            });
        };
        let call = GateCall {
            tool: &tool,
            version,
            policy,
            input: &input,
            context: &invocation.context,
        };
        match gate.admit(call).await? {
            Admission::Replay(Stored::Output(output)) => Ok(Outcome {
                tool: Arc::clone(&tool),
                version: index,
                output,
                elapsed: Duration::ZERO,
            }),
            Admission::Replay(Stored::Failure { message, code }) => {
                let mut failure = ToolFailure::permanent(message);
                failure.code = code;
                Err(Error::Failed {
                    tool: tool.name.clone(),
                    failure: Box::new(failure),
                })
            }
            Admission::Run { id, human } => {
                // What the human typed goes to the backend only: the call never carried it.
                let mut input = input;
                input.extend(human.expose().iter().map(|(k, v)| (k.clone(), v.clone())));
                let result = self.run(&tool, index, input, &invocation.context).await;
                let stored = match &result {
                    Ok(outcome) => Stored::Output(outcome.output.clone()),
                    Err(Error::Failed { failure, .. }) => Stored::failure(failure),
                    Err(other) => Stored::Failure {
                        message: other.to_string(),
                        code: None,
                    },
                };
                gate.settle(&id, stored).await;
                result
            }
        }
    }

    /// Runs a call that passed every check: the backend under its timeout, then the output's.
    async fn run(
        &self,
        tool: &Arc<Tool>,
        index: usize,
        input: Map<String, Value>,
        context: &CallContext,
    ) -> Result<Outcome, Error> {
        let version = &tool.versions[index];
        let invocation_context = context;
        if invocation_context.nesting > crate::backend::MAX_NESTING {
            let failure = ToolFailure::permanent("this tool is misconfigured: its tools call one another too deeply")
                .with_code("nesting")
                .with_developer_message(format!(
                    "`{}` was called {} tools deep (at most {}): do its steps call each other in a loop?",
                    tool.name,
                    invocation_context.nesting,
                    crate::backend::MAX_NESTING
                ));
            return Err(Error::Failed {
                tool: tool.name.clone(),
                failure: Box::new(failure),
            });
        }
        let call = BackendCall {
            input: &input,
            context: invocation_context,
            tool,
            version,
            engine: self.outer.as_deref().unwrap_or(self),
        };
        let started = Instant::now();
        let result = tokio::time::timeout(version.timeout, version.backend.call(call)).await;
        let elapsed = started.elapsed();
        // The kind of a backend error is its failure code (`rate_limited`, `upstream_4xx`,
        // `outcome_unknown`, a catalog's own code: a set the catalog bounds), so a dashboard can
        // tell a 429 from a dropped connection (issue #12.11).
        let kind = match &result {
            Err(_) => Some("timeout".to_owned()),
            Ok(Err(failure)) => Some(failure.code.clone().unwrap_or_else(|| "error".to_owned())),
            Ok(Ok(_)) => None,
        };
        tool.backend_duration().record(elapsed.as_secs_f64());
        if let Some(kind) = kind {
            metrics::counter!("toolhost_backend_errors_total", "tool" => tool.name.clone(), "kind" => kind)
                .increment(1);
        }
        let output = match result {
            Err(_) => {
                tracing::warn!(tool = %tool.name, version = %version.semver, timeout_ms = version.timeout.as_millis() as u64, "backend timed out");
                // Cut short mid-request, a tool that changes things may already have acted: a
                // retry could do it twice (issue #12).
                if version.backend.may_act() && !Self::is_safe_to_repeat(tool) {
                    let failure = ToolFailure::outcome_unknown(format!(
                        "the tool did not finish within {} ms and may already have carried out this request; \
                         check whether it took effect before trying again",
                        version.timeout.as_millis()
                    ));
                    return Err(Error::Failed {
                        tool: tool.name.clone(),
                        failure: Box::new(failure),
                    });
                }
                return Err(Error::Timeout {
                    tool: tool.name.clone(),
                    after: version.timeout,
                });
            }
            Ok(Err(failure)) => {
                let failure = failure.rephrase(&tool.errors);
                return Err(Error::Failed {
                    tool: tool.name.clone(),
                    failure: Box::new(failure),
                });
            }
            Ok(Ok(output)) => output,
        };
        // One backend often serves several versions; each version shows only what it declares.
        let mut output = output;
        output.retain(|key, _| version.outputs.iter().any(|o| &o.name == key));
        let output = Value::Object(output);
        let validator = version.validators.output(version.output_schema());
        if !validator.is_valid(&output) {
            tracing::error!(
                tool = %tool.name,
                version = %version.semver,
                details = %validate::explain_output(validator, &output),
                "backend returned output that does not match the declared outputs; not passed on"
            );
            let mut failure = ToolFailure::permanent("the tool returned a result that does not match its declared outputs; this is a fault of the server, not of the call")
                .with_code(crate::backend::INVALID_OUTPUT_CODE)
                .with_developer_message("output shape check failed; see the server log");
            // The tool ran to its end, so whatever it does was done: not to be repeated blindly.
            if version.backend.may_act() && !Self::is_safe_to_repeat(tool) {
                failure = failure.into_outcome_unknown();
            }
            return Err(Error::Failed {
                tool: tool.name.clone(),
                failure: Box::new(failure),
            });
        }
        let Value::Object(output) = output else {
            unreachable!("constructed as an object above")
        };
        drop(input);
        Ok(Outcome {
            tool: Arc::clone(tool),
            version: index,
            output,
            elapsed,
        })
    }
}

/// Finds a tool in `catalog` and resolves the version, with the errors `invoke` gives.
pub fn resolve<'a>(
    catalog: &'a Catalog,
    tool: &str,
    version: &VersionSelector,
    access: &Access,
) -> Result<(&'a Arc<Tool>, &'a Version), Error> {
    let found = catalog
        .find_for(tool, access)
        .ok_or_else(|| Error::ToolNotFound { tool: tool.to_owned() })?;
    let resolved = found.resolve(version).ok_or_else(|| Error::VersionNotFound {
        tool: found.name.clone(),
        version: version.clone(),
        served: served(found),
    })?;
    Ok((found, resolved))
}

/// "1 (1.0.0), 3 (1.2.0)": the served versions, for messages.
fn served(tool: &Tool) -> String {
    let mut list: Vec<String> = tool
        .versions
        .iter()
        .filter(|v| !v.retired)
        .map(|v| format!("{} ({})", v.number, v.semver))
        .collect();
    if list.len() > 10 {
        let tail = list.split_off(list.len() - 10);
        list = std::iter::once("…".to_owned()).chain(tail).collect();
    }
    list.join(", ")
}
