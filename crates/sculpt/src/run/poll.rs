//! A step that started an asynchronous operation, polled until it is done (`poll:`,
//! docs/tasks.md): the first answer's `Location` (or the URL its `url` program gives, or, for a
//! `tool` step, the same call) asked again every `interval` until `done` holds, `failed` holds,
//! or the poll's timeout or the call's deadline comes. Dropping the call (a cancelled task, a
//! client gone) drops the poll and the request in flight.

use std::sync::Arc;
use std::time::Instant;

use reqwest::Method;
use serde_json::Value;
use toolhost_core::{BackendCall, ToolFailure};

use super::{Sculpted, mapping_failed};
use crate::build::{Poll, Step};
use crate::failure::{self, Scrubber};
use crate::jq;
use crate::reference::{Scope, StepResult};

/// The failure code of an operation its upstream reported as failed.
pub(crate) const OPERATION_FAILED: &str = "operation_failed";

impl Sculpted {
    /// Polls the operation `first` started until it is done; the step's result is the answer
    /// that says so.
    #[expect(
        clippy::too_many_arguments,
        reason = "the step's whole context, as the other step kinds take it"
    )]
    pub(super) async fn poll(
        &self,
        step: &Step,
        poll: &Poll,
        first: Arc<StepResult>,
        call: &BackendCall<'_>,
        visible: Vec<(String, Arc<StepResult>)>,
        scope: &Scope<'_>,
        scrubber: &Scrubber,
        deadline: Instant,
    ) -> Result<Arc<StepResult>, ToolFailure> {
        let until = poll.timeout.map_or(deadline, |t| (Instant::now() + t).min(deadline));
        let detail = |what: String| format!("step `{}` ({}), poll: {what}", step.name, step.shape);
        // An operation that was started and then lost sight of may still be carried out.
        let lost = |failure: ToolFailure| {
            if step.idempotent {
                failure
            } else {
                failure.into_outcome_unknown()
            }
        };
        let with = |answer: &Arc<StepResult>| {
            let mut steps = visible.clone();
            steps.push((step.name.clone(), Arc::clone(answer)));
            steps
        };
        let request = match &step.tool {
            Some(_) => None,
            None => Some(
                self.poll_request(step, poll, &first, call, with(&first), scope, scrubber, deadline)
                    .await
                    .map_err(lost)?,
            ),
        };
        let mut programs = vec![poll.done.clone()];
        programs.extend(poll.failed.clone());
        let mut answer = first;
        loop {
            let answers = self
                .jq(programs.clone(), call, with(&answer), deadline, scrubber)
                .await
                .map_err(lost)?;
            let mut held = answers.into_iter().map(|a| match a {
                Ok(value) => Ok(jq::truthy(&value)),
                Err(message) => Err(message),
            });
            let done = held.next().unwrap_or(Ok(false));
            let failed = held.next().unwrap_or(Ok(false));
            match (done, failed) {
                (_, Ok(true)) => {
                    return Err(scrubber.failure(
                        ToolFailure::permanent("the upstream service reported that the operation failed")
                            .with_code(OPERATION_FAILED)
                            .with_developer_message(detail(format!(
                                "`failed` held on the answer (status {})",
                                answer.status
                            ))),
                    ));
                }
                (Ok(true), _) => return Ok(answer),
                (Err(message), _) | (_, Err(message)) => {
                    return Err(lost(
                        scrubber.failure(mapping_failed().with_developer_message(detail(message))),
                    ));
                }
                (Ok(false), Ok(false)) => {}
            }
            if Instant::now() + poll.interval >= until {
                let waited = poll
                    .timeout
                    .map_or("the call's deadline".to_owned(), |t| format!("{} ms", t.as_millis()));
                return Err(lost(
                    ToolFailure::temporary(
                        format!("the operation did not finish within {waited}; try again later"),
                        Some(failure::DEFAULT_RETRY_AFTER),
                    )
                    .with_code(failure::TIMEOUT)
                    .with_developer_message(detail("`done` did not hold in time".to_owned())),
                ));
            }
            tokio::time::sleep(poll.interval).await;
            answer = match (&request, &step.tool) {
                (Some(request), _) => {
                    let again = self.request(step, scope).map_err(|f| scrubber.failure(f))?;
                    let request = crate::send::Request {
                        method: Method::GET,
                        url: request.clone(),
                        headers: again.headers,
                        body: None,
                    };
                    self.exchange(step, request, scope, scrubber.clone(), deadline)
                        .await
                        .map_err(lost)?
                }
                (None, Some((tool, version))) => self
                    .call_tool(step, (tool, version), call, scope, scrubber, deadline)
                    .await
                    .map_err(lost)?,
                (None, None) => unreachable!("a step without a tool has a poll URL"),
            };
        }
    }

    /// The URL to poll: what `url` gives from the first answer, else its `Location`, resolved
    /// against the step's URL and kept on its origin (credentials go only where the catalog
    /// sends them).
    #[expect(
        clippy::too_many_arguments,
        reason = "the step's whole context, as the other step kinds take it"
    )]
    async fn poll_request(
        &self,
        step: &Step,
        poll: &Poll,
        first: &StepResult,
        call: &BackendCall<'_>,
        steps: Vec<(String, Arc<StepResult>)>,
        scope: &Scope<'_>,
        scrubber: &Scrubber,
        deadline: Instant,
    ) -> Result<reqwest::Url, ToolFailure> {
        let misconfigured = |what: String| {
            scrubber.failure(
                ToolFailure::permanent("the upstream service did not say where to follow the operation it started")
                    .with_code(failure::UNEXPECTED)
                    .with_developer_message(format!("step `{}` ({}), poll: {what}", step.name, step.shape)),
            )
        };
        let written = match &poll.url {
            Some(program) => match self
                .jq(vec![program.clone()], call, steps, deadline, scrubber)
                .await?
                .pop()
            {
                Some(Ok(Some(Value::String(url)))) => url,
                Some(Ok(other)) => return Err(misconfigured(format!("`url` gave {other:?}, not a URL"))),
                Some(Err(message)) => return Err(misconfigured(message)),
                None => return Err(misconfigured("`url` gave nothing".to_owned())),
            },
            None => match first.headers.get("location").and_then(Value::as_str) {
                Some(url) => url.to_owned(),
                None => {
                    return Err(misconfigured(format!(
                        "the answer (status {}) has no Location header",
                        first.status
                    )));
                }
            },
        };
        let base = self.request(step, scope).map_err(|f| scrubber.failure(f))?.url;
        let url = base
            .join(&written)
            .map_err(|e| misconfigured(format!("`{written}` is not a URL: {e}")))?;
        if url.origin() != base.origin() {
            return Err(scrubber.failure(super::kinds::elsewhere(
                step,
                "the poll URL",
                &url,
                &base.origin().ascii_serialization(),
            )));
        }
        Ok(url)
    }
}
