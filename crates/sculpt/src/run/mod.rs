//! Call time: run the steps (each as soon as the steps it depends on have finished, so
//! independent steps overlap), then make the outputs. Nothing is parsed or compiled here.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value};
use toolhost_core::{Backend, BackendCall, BoxFuture, StepOutcome, ToolFailure};

use crate::Shared;
use crate::build::{BodyTemplate, OutputSource, Outputs, Recipe, Step};
use crate::failure::{self, Scrubber};
use crate::jq;
use crate::reference::{Scope, StepResult};

mod ask;
mod exchange;
mod kinds;
mod poll;

/// The most characters of a phrased failure's message or prompt (which may quote the upstream).
const MAX_PHRASE_CHARS: usize = 1000;

/// A compiled `http` backend.
pub(crate) struct Sculpted {
    recipe: Recipe,
    shared: Arc<Shared>,
    /// The server secrets this tool can send, in every form (see [`sent_secrets`]): a secret it
    /// never sends cannot come back, so failures and answers are scrubbed of these only, which
    /// keeps the scrub of every successful answer as cheap as the tool's own secrets allow.
    scrubber: Scrubber,
    /// Send only GET and HEAD (`toolhost try --dry-run`).
    dry_run: bool,
}

impl std::fmt::Debug for Sculpted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let steps: Vec<&str> = self.recipe.steps.iter().map(|s| s.shape.as_str()).collect();
        f.debug_struct("Sculpted")
            .field("steps", &steps)
            .finish_non_exhaustive()
    }
}

impl Backend for Sculpted {
    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Map<String, Value>, ToolFailure>> {
        Box::pin(self.run(call))
    }

    /// The origin (scheme, host, port) of each step's base URL and OAuth token endpoint; a
    /// host that comes from the input is not known here. The catalog removes repeats.
    fn dependencies(&self) -> Vec<String> {
        let origin = |url: &reqwest::Url| url.origin().ascii_serialization();
        self.recipe
            .steps
            .iter()
            .flat_map(|step| {
                let base = reqwest::Url::parse(&step.base).ok().map(|u| origin(&u));
                let token = step.auth.as_deref().and_then(crate::auth::Auth::token_url).map(origin);
                base.into_iter().chain(token)
            })
            .collect()
    }

    fn calls(&self) -> Vec<(String, toolhost_core::VersionSelector)> {
        self.recipe.steps.iter().filter_map(|s| s.tool.clone()).collect()
    }

    fn warnings(&self) -> Vec<String> {
        self.recipe.warnings.clone()
    }

    /// A JSON-text input whose text does not parse, before any step runs (issue #38.5).
    fn check_input(&self, input: &Map<String, Value>) -> Vec<toolhost_core::ParameterError> {
        self.recipe
            .json_inputs
            .iter()
            .filter_map(|name| {
                let Some(Value::String(text)) = input.get(name) else {
                    return None;
                };
                let error = serde_json::from_str::<Value>(text).err()?;
                Some(toolhost_core::ParameterError {
                    parameter: name.clone(),
                    message: format!("`{name}` expects JSON text, but got text that does not parse as JSON ({error})"),
                })
            })
            .collect()
    }

    /// A step that is not idempotent may have been sent when the version's timeout cut the call.
    fn may_act(&self) -> bool {
        self.recipe.steps.iter().any(|step| !step.idempotent)
    }
}

/// The results so far, indexed like the steps (`None`: not finished, or skipped).
type Results = Vec<Option<Arc<StepResult>>>;

impl Sculpted {
    pub fn new(recipe: Recipe, shared: Arc<Shared>, dry_run: bool) -> Self {
        let scrubber = Scrubber::shared(sent_secrets(&recipe).iter().map(|s| s.expose()));
        Self {
            recipe,
            shared,
            scrubber,
            dry_run,
        }
    }

    async fn run(&self, call: BackendCall<'_>) -> Result<Map<String, Value>, ToolFailure> {
        let deadline = Instant::now() + call.version.timeout;
        let steps = &self.recipe.steps;
        let mut results: Results = vec![None; steps.len()];
        // A failure after a step that changes something has run (or while one is in flight,
        // which the failure cancels) leaves the tool partly done: retrying it would repeat that
        // step, so the failure is an unknown outcome (issue #12).
        let acted = |i: usize, results: &Results| !steps[i].idempotent && results[i].is_some();
        // Each finished step is reported to the caller, in the order steps finish.
        let report = |i: usize, done: usize, result: &Result<Option<Arc<StepResult>>, ToolFailure>| {
            // A question waiting for its answer is not a step done.
            if result.as_ref().is_err_and(ask::is_waiting) {
                return;
            }
            if let Some(progress) = &call.context.progress {
                let outcome = match result {
                    Ok(Some(_)) => StepOutcome::Done,
                    Ok(None) => StepOutcome::Skipped,
                    // What the caller's error says, scrubbed again like every upstream text.
                    Err(failure) => StepOutcome::Failed(self.scrubber(&call).scrub(&failure.message)),
                };
                progress.step(done, steps.len(), &steps[i].name, &outcome);
            }
        };
        if let [only] = steps.as_slice() {
            let result = self.step(only, &call, &results, deadline).await;
            report(0, 1, &result);
            results[0] = result?;
        } else {
            let mut finished = vec![false; steps.len()];
            let mut started = vec![false; steps.len()];
            let mut running = FuturesUnordered::new();
            // A step that changes something waits for every question (docs/asking.md): a call
            // that must wait for an answer ends before anything acted, and is resumed from the
            // start. A question still unanswered leaves the steps after it unstarted.
            let asks: Vec<usize> = steps.iter().filter(|s| s.ask.is_some()).map(|s| s.index).collect();
            let mut waiting = None;
            loop {
                for (i, step) in steps.iter().enumerate() {
                    let ready = step.deps.iter().all(|&d| finished[d])
                        && (step.idempotent || asks.iter().all(|&a| finished[a]));
                    if !started[i] && ready {
                        started[i] = true;
                        let snapshot = results.clone();
                        let call = &call;
                        running.push(async move { (i, self.step(step, call, &snapshot, deadline).await) });
                    }
                }
                let next = running.next().await;
                if let Some((i, result)) = &next {
                    report(*i, finished.iter().filter(|&&f| f).count() + 1, result);
                }
                match next {
                    None => break,
                    Some((i, Ok(result))) => {
                        results[i] = result;
                        finished[i] = true;
                    }
                    // The other questions are still put, so that one round asks them all.
                    Some((_, Err(failure))) if ask::is_waiting(&failure) => {
                        waiting.get_or_insert(failure);
                    }
                    // Dropping `running` cancels the other steps in flight.
                    Some((failed, Err(failure))) => {
                        let partly_done = (0..steps.len()).any(|j| {
                            j != failed && (acted(j, &results) || (started[j] && !finished[j] && !steps[j].idempotent))
                        });
                        return Err(if partly_done {
                            failure.into_outcome_unknown()
                        } else {
                            failure
                        });
                    }
                }
            }
            if let Some(waiting) = waiting {
                return Err(waiting);
            }
        }
        self.outputs(&call, &results, deadline).await.map_err(|failure| {
            if (0..steps.len()).any(|i| acted(i, &results)) {
                failure.into_outcome_unknown()
            } else {
                failure
            }
        })
    }

    /// Runs one step; `Ok(None)` when its `when` says no. A failure is logged at `warn` with
    /// the step, its request shape and what the upstream (or its token endpoint) answered,
    /// scrubbed, so an operator can see why without turning on debug logs (issue #12.8).
    async fn step(
        &self,
        step: &Step,
        call: &BackendCall<'_>,
        results: &[Option<Arc<StepResult>>],
        deadline: Instant,
    ) -> Result<Option<Arc<StepResult>>, ToolFailure> {
        let result = self.run_step(step, call, results, deadline).await;
        if let Err(failure) = &result {
            tracing::warn!(
                step = %step.name,
                request = %step.shape,
                code = failure.code.as_deref().unwrap_or("error"),
                retryable = failure.retryable,
                outcome_unknown = failure.outcome_unknown,
                detail = failure.developer_message.as_deref().unwrap_or(&failure.message),
                "upstream step failed"
            );
        }
        result
    }

    async fn run_step(
        &self,
        step: &Step,
        call: &BackendCall<'_>,
        results: &[Option<Arc<StepResult>>],
        deadline: Instant,
    ) -> Result<Option<Arc<StepResult>>, ToolFailure> {
        let scrubber = self.scrubber(call);
        let visible = || -> Vec<(String, Arc<StepResult>)> {
            step.visible
                .iter()
                .filter_map(|&i| Some((self.recipe.steps[i].name.clone(), Arc::clone(results[i].as_ref()?))))
                .collect()
        };
        if let Some(when) = &step.when {
            let answer = self
                .jq(vec![when.clone()], call, visible(), deadline, &scrubber)
                .await?;
            let run = match answer.into_iter().next() {
                Some(Ok(value)) => jq::truthy(&value),
                Some(Err(message)) => {
                    return Err(scrubber.failure(
                        mapping_failed().with_developer_message(format!("step `{}`, `when`: {message}", step.name)),
                    ));
                }
                None => false,
            };
            if !run {
                tracing::debug!(step = %step.name, "step skipped: its `when` is false");
                return Ok(None);
            }
        }
        // The request's `{jq: ...}` values, computed once before it is built.
        let mut computed = Vec::with_capacity(step.programs.len());
        if !step.programs.is_empty() {
            for (i, answer) in self
                .jq(step.programs.clone(), call, visible(), deadline, &scrubber)
                .await?
                .into_iter()
                .enumerate()
            {
                match answer {
                    Ok(value) => computed.push(value.filter(|v| !v.is_null())),
                    Err(message) => {
                        return Err(scrubber.failure(mapping_failed().with_developer_message(format!(
                            "step `{}`, request jq program {}: {message}",
                            step.name,
                            i + 1
                        ))));
                    }
                }
            }
        }
        let scope = Scope {
            input: call.input,
            context: call.context,
            steps: results,
            computed: &computed,
            item: None,
        };
        if let Some(question) = &step.ask {
            return self.ask(step, question, call, &scope, &scrubber).await.map(Some);
        }
        if let Some((tool, version)) = &step.tool {
            let answer = self
                .call_tool(step, (tool, version), call, &scope, &scrubber, deadline)
                .await?;
            return match &step.poll {
                Some(poll) => self
                    .poll(step, poll, answer, call, visible(), &scope, &scrubber, deadline)
                    .await
                    .map(Some),
                None => Ok(Some(answer)),
            };
        }
        if let Some(each) = &step.for_each {
            return self.for_each(step, each, &scope, &scrubber, deadline).await.map(Some);
        }
        if let Some(pages) = &step.paginate {
            return self.pages(step, pages, &scope, &scrubber, deadline).await.map(Some);
        }
        // The phrase of a missing value may quote earlier steps' answers: scrub it too.
        let request = self.request(step, &scope).map_err(|f| scrubber.failure(f))?;
        let answer = self.exchange(step, request, &scope, scrubber.clone(), deadline).await?;
        match &step.poll {
            Some(poll) => self
                .poll(step, poll, answer, call, visible(), &scope, &scrubber, deadline)
                .await
                .map(Some),
            None => Ok(Some(answer)),
        }
    }

    /// Every secret this call may send: the server's and the call's.
    fn scrubber(&self, call: &BackendCall<'_>) -> Scrubber {
        let mut scrubber = self.scrubber.clone();
        for secret in call
            .context
            .secrets
            .values()
            .chain(call.context.authorization.values())
            .chain(call.context.caller_token.as_ref())
        {
            scrubber.add(secret.expose());
        }
        scrubber
    }

    async fn jq(
        &self,
        programs: Vec<jq::Program>,
        call: &BackendCall<'_>,
        steps: Vec<(String, Arc<StepResult>)>,
        deadline: Instant,
        scrubber: &Scrubber,
    ) -> Result<Vec<jq::Answer>, ToolFailure> {
        let input = jq::Input {
            input: call.input.clone(),
            steps,
        };
        let answers = self.shared.jq.run(programs, input, deadline).await.map_err(|stop| {
            let failure = match stop {
                jq::Stop::Deadline => ToolFailure::temporary(
                    "the tool did not finish in time; try again",
                    Some(failure::DEFAULT_RETRY_AFTER),
                )
                .with_code(failure::TIMEOUT),
                jq::Stop::Busy => {
                    ToolFailure::temporary("the server is busy; try again", Some(failure::DEFAULT_RETRY_AFTER))
                        .with_code(failure::MAPPING)
                }
                jq::Stop::Depth | jq::Stop::TooMuch | jq::Stop::Crashed => mapping_failed(),
            };
            failure.with_developer_message(stop.to_string())
        })?;
        Ok(answers
            .into_iter()
            .map(|a| a.map_err(|message| scrubber.scrub(&message)))
            .collect())
    }

    async fn outputs(
        &self,
        call: &BackendCall<'_>,
        results: &[Option<Arc<StepResult>>],
        deadline: Instant,
    ) -> Result<Map<String, Value>, ToolFailure> {
        let scope = Scope {
            input: call.input,
            context: call.context,
            steps: results,
            computed: &[],
            item: None,
        };
        let unexpected = |detail: String| {
            ToolFailure::permanent("the upstream service answered in an unexpected shape, so the tool has no result")
                .with_code(failure::UNEXPECTED)
                .with_developer_message(detail)
        };
        let (rules, programs) = match &self.recipe.outputs {
            Outputs::LastBody => {
                let last = self.recipe.steps.len() - 1;
                return match results[last].as_ref().map(|r| &r.body) {
                    Some(Value::Object(body)) => Ok(body.clone()),
                    Some(_) => Err(unexpected(format!(
                        "the last step, `{}`, did not answer with a JSON object; map its answer in `outputs`",
                        self.recipe.steps[last].name
                    ))),
                    None => Err(unexpected(format!(
                        "the last step, `{}`, was skipped",
                        self.recipe.steps[last].name
                    ))),
                };
            }
            Outputs::Map { rules, programs } => (rules, programs),
        };
        let answers = if programs.is_empty() {
            Vec::new()
        } else {
            let steps = self
                .recipe
                .steps
                .iter()
                .zip(results)
                .filter_map(|(s, r)| Some((s.name.clone(), Arc::clone(r.as_ref()?))))
                .collect();
            let scrubber = self.scrubber(call);
            self.jq(programs.clone(), call, steps, deadline, &scrubber).await?
        };
        let mut out = Map::with_capacity(rules.len());
        for rule in rules {
            let value: Option<Cow<'_, Value>> = match &rule.source {
                OutputSource::Template { template, default } => {
                    template.value(&scope).or_else(|| default.as_ref().map(Cow::Borrowed))
                }
                OutputSource::Constant(value) => Some(Cow::Borrowed(value)),
                OutputSource::Jq(i) => match answers.get(*i) {
                    Some(Ok(value)) => value.as_ref().filter(|v| !v.is_null()).map(|v| Cow::Owned(v.clone())),
                    Some(Err(message)) => {
                        return Err(
                            mapping_failed().with_developer_message(format!("`outputs.{}`: {message}", rule.name))
                        );
                    }
                    None => None,
                },
            };
            match value {
                Some(value) => {
                    out.insert(rule.name.clone(), value.into_owned());
                }
                None if rule.required => {
                    let what = match &rule.source {
                        OutputSource::Template { template, .. } => {
                            format!("`{}` has no value", template.missing(&scope).unwrap_or("?"))
                        }
                        _ => "the jq program produced nothing or null".to_owned(),
                    };
                    return Err(unexpected(format!("output `{}`: {what}", rule.name)));
                }
                None => {}
            }
        }
        Ok(out)
    }
}

fn mapping_failed() -> ToolFailure {
    ToolFailure::permanent("the tool could not shape the upstream answer into its result").with_code(failure::MAPPING)
}

/// The tracing target of `toolhost try`'s view of each step: the request as sent and the answer,
/// with secrets masked (never logged at any other target).
pub const TRY: &str = "toolhost::try";

/// The server secrets `recipe` can send: those its paths, queries, headers, bodies and auth
/// reference. (Caller secrets and fetched tokens are added per call.)
fn sent_secrets(recipe: &Recipe) -> Vec<toolhost_core::Secret> {
    use crate::reference::{Reference, SecretSlot};
    let mut references: Vec<&Reference> = Vec::new();
    for step in &recipe.steps {
        references.extend(step.path.references());
        for (_, value, _) in &step.query {
            references.extend(value.references());
        }
        for header in step
            .headers
            .iter()
            .map(|(_, t)| t)
            .chain(step.cookies.iter().map(|(_, t)| t))
        {
            references.extend(header.references());
        }
        references.extend(step.body.iter().flat_map(BodyTemplate::references));
        for template in step.auth.iter().flat_map(|a| a.templates()) {
            references.extend(template.references());
        }
    }
    references
        .into_iter()
        .filter_map(|r| match r {
            Reference::Secret(SecretSlot::Server(secret)) => Some(secret.clone()),
            _ => None,
        })
        .collect()
}
