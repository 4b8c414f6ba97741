//! Call time: run the steps (each as soon as the steps it depends on have finished, so
//! independent steps overlap), then make the outputs. Nothing is parsed or compiled here.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};
use toolhost_core::{Backend, BackendCall, BoxFuture, ToolFailure};

use crate::Shared;
use crate::build::{BodyTemplate, ForEach, Next, OutputSource, Outputs, Paginate, Recipe, Step};
use crate::failure::{self, Key, Scrubber};
use crate::jq;
use crate::reference::{Scope, StepResult};
use crate::send::{self, Body, Failure, Policy, Request};
use crate::template::as_text;

/// `url` with query parameter `name` set to `value` (any earlier value of it removed).
fn with_param(url: &Url, name: &str, value: &str) -> Url {
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != name)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut out = url.clone();
    out.query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .append_pair(name, value);
    out
}

/// The `rel="next"` target of a `Link` header (RFC 8288), as written.
fn link_next(headers: &Value) -> Option<String> {
    let link = headers.get("link")?.as_str()?;
    link.split(",")
        .filter_map(|part| {
            let (target, params) = part.trim().strip_prefix('<')?.split_once('>')?;
            params
                .split(';')
                .filter_map(|p| p.trim().strip_prefix("rel="))
                .any(|rel| {
                    rel.trim_matches('"')
                        .split_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("next"))
                })
                .then(|| target.to_owned())
        })
        .next()
}

/// The most characters of a phrased failure's message or prompt (which may quote the upstream).
const MAX_PHRASE_CHARS: usize = 1000;
/// What a path segment keeps unencoded: RFC 3986's unreserved characters. Everything else,
/// `/ ? # %` and spaces included, is percent-encoded, so an input can never add a segment, a
/// query or a fragment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

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
        if let [only] = steps.as_slice() {
            results[0] = self.step(only, &call, &results, deadline).await?;
        } else {
            let mut finished = vec![false; steps.len()];
            let mut started = vec![false; steps.len()];
            let mut running = FuturesUnordered::new();
            loop {
                for (i, step) in steps.iter().enumerate() {
                    if !started[i] && step.deps.iter().all(|&d| finished[d]) {
                        started[i] = true;
                        let snapshot = results.clone();
                        let call = &call;
                        running.push(async move { (i, self.step(step, call, &snapshot, deadline).await) });
                    }
                }
                match running.next().await {
                    None => break,
                    Some((i, Ok(result))) => {
                        results[i] = result;
                        finished[i] = true;
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
        if let Some((tool, version)) = &step.tool {
            return self
                .call_tool(step, (tool, version), call, &scope, &scrubber, deadline)
                .await
                .map(Some);
        }
        if let Some(each) = &step.for_each {
            return self.for_each(step, each, &scope, &scrubber, deadline).await.map(Some);
        }
        if let Some(pages) = &step.paginate {
            return self.pages(step, pages, &scope, &scrubber, deadline).await.map(Some);
        }
        // The phrase of a missing value may quote earlier steps' answers: scrub it too.
        let request = self.request(step, &scope).map_err(|f| scrubber.failure(f))?;
        self.exchange(step, request, &scope, scrubber, deadline).await.map(Some)
    }

    /// Runs a `tool` step: the catalog tool called through the engine with this call's context
    /// (secrets, caller identity, request id), one level deeper, within the call's deadline.
    /// Its output object is the step's `body`. The tool is called whoever may see it: the
    /// catalog composed it into this one, which is what the caller was allowed to call.
    async fn call_tool(
        &self,
        step: &Step,
        (tool, version): (&str, &toolhost_core::VersionSelector),
        call: &BackendCall<'_>,
        scope: &Scope<'_>,
        scrubber: &Scrubber,
        deadline: Instant,
    ) -> Result<Arc<StepResult>, ToolFailure> {
        use toolhost_core::Error;
        let detail = |what: String| format!("step `{}` (tool `{tool}`): {what}", step.name);
        let input = match &step.body {
            Some(BodyTemplate::Json(template)) => template.render(scope),
            _ => None,
        };
        let Some(Value::Object(input)) = input else {
            return Err(
                ToolFailure::permanent("this tool is misconfigured: a step's input is not an object")
                    .with_code(failure::MISCONFIGURED)
                    .with_developer_message(detail("`input` did not render to an object".to_owned())),
            );
        };
        // Under `try --dry-run` only what cannot act goes out: a tool step is shown, not run,
        // unless it says it is idempotent.
        if self.dry_run && !step.idempotent {
            return Err(
                ToolFailure::permanent("dry run: the call stops before a tool step that may act")
                    .with_code("dry_run")
                    .with_developer_message(detail(format!(
                        "input {} was shown, not sent: --dry-run runs only idempotent tool steps",
                        scrubber.scrub(&Value::Object(input).to_string())
                    ))),
            );
        }
        let mut context = call.context.clone();
        context.access = toolhost_core::Access::All;
        context.nesting = context.nesting.saturating_add(1);
        let invocation = toolhost_core::Invocation {
            tool: tool.to_owned(),
            version: version.clone(),
            input,
            context,
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let answer = tokio::time::timeout(left, call.engine.invoke(invocation)).await;
        let failure = match answer {
            Ok(Ok(outcome)) => {
                return Ok(Arc::new(StepResult {
                    status: 200,
                    headers: Value::Object(Map::new()),
                    body: Value::Object(outcome.output),
                }));
            }
            // The called tool's own failure, as it said it: retryable or not, an unknown outcome.
            Ok(Err(Error::Failed { failure, .. })) => {
                let developer = detail(
                    failure
                        .developer_message
                        .clone()
                        .unwrap_or_else(|| failure.message.clone()),
                );
                failure.with_developer_message(developer)
            }
            Ok(Err(Error::Timeout { .. })) | Err(_) if !step.idempotent => ToolFailure::outcome_unknown(
                "a tool this one calls did not finish in time and may have acted; check before trying again",
            )
            .with_developer_message(detail("no answer in time".to_owned())),
            Ok(Err(Error::Timeout { .. })) | Err(_) => {
                ToolFailure::temporary("a tool this one calls did not finish in time; try again", None)
                    .with_code(failure::TIMEOUT)
                    .with_developer_message(detail("no answer in time".to_owned()))
            }
            // Not found, the input the catalog built refused, a requirement: the catalog's fault.
            Ok(Err(other)) => ToolFailure::permanent("this tool is misconfigured: a tool it calls refused the call")
                .with_code(failure::MISCONFIGURED)
                .with_developer_message(detail(other.to_string())),
        };
        Err(scrubber.failure(failure))
    }

    /// Runs a `for_each` step: its request once per element of the list (the first
    /// `max_items`), `concurrency` at a time; the result's body is the answers' bodies in the
    /// list's order.
    async fn for_each(
        &self,
        step: &Step,
        each: &ForEach,
        scope: &Scope<'_>,
        scrubber: &Scrubber,
        deadline: Instant,
    ) -> Result<Arc<StepResult>, ToolFailure> {
        let items: Vec<Value> = match each.list.lookup(scope).map(Cow::into_owned) {
            Some(Value::Array(items)) => items.into_iter().take(each.max_items).collect(),
            None => Vec::new(),
            Some(other) => {
                return Err(scrubber.failure(
                    ToolFailure::permanent(
                        "the upstream service answered in an unexpected shape, so the call cannot go on",
                    )
                    .with_code(failure::UNEXPECTED)
                    .with_developer_message(format!(
                        "step `{}`: `for_each` needs a list, and got {}",
                        step.name,
                        toolhost_core::validate::kind_of(&other)
                    )),
                ));
            }
        };
        let mut answers: Vec<Value> = vec![Value::Null; items.len()];
        let mut done = 0usize;
        let mut last_status = 200;
        let mut pending = items.iter().enumerate();
        let mut running = FuturesUnordered::new();
        loop {
            while running.len() < each.concurrency {
                let Some((i, item)) = pending.next() else { break };
                let scope = Scope {
                    item: Some(item),
                    ..*scope
                };
                running.push(self.element(step, scope, i, scrubber, deadline));
            }
            let Some((i, result)) = running.next().await else { break };
            match result {
                Ok(result) => {
                    answers[i] = result.body.clone();
                    last_status = result.status;
                    done += 1;
                }
                // A step that changes something has acted for the elements done (and may have
                // for those in flight, which this failure cancels): retrying would repeat them.
                Err(failure) if !step.idempotent && (done > 0 || (items.len() > 1 && each.concurrency > 1)) => {
                    return Err(failure.into_outcome_unknown());
                }
                Err(failure) => return Err(failure),
            }
        }
        Ok(Arc::new(StepResult {
            status: last_status,
            headers: Value::Object(Map::new()),
            body: Value::Array(answers),
        }))
    }

    /// One element of a `for_each` step, with its index.
    async fn element(
        &self,
        step: &Step,
        scope: Scope<'_>,
        i: usize,
        scrubber: &Scrubber,
        deadline: Instant,
    ) -> (usize, Result<Arc<StepResult>, ToolFailure>) {
        let result = match self.request(step, &scope) {
            Ok(request) => self.exchange(step, request, &scope, scrubber.clone(), deadline).await,
            Err(failure) => Err(scrubber.failure(failure)),
        };
        (i, result)
    }

    /// Runs a paginated step: page after page (at most `max_pages`, each within the call's
    /// deadline, never to another origin), the items of every page gathered into one list.
    async fn pages(
        &self,
        step: &Step,
        pages: &Paginate,
        scope: &Scope<'_>,
        scrubber: &Scrubber,
        deadline: Instant,
    ) -> Result<Arc<StepResult>, ToolFailure> {
        let first = self.request(step, scope).map_err(|f| scrubber.failure(f))?;
        let origin = first.url.origin();
        let mut url = first.url.clone();
        let mut page = 0;
        if let Next::Page(param, start) = &pages.next {
            page = *start;
            url = with_param(&url, param, &page.to_string());
        }
        let mut request = first;
        request.url = url;
        let mut gathered = Vec::new();
        let mut read = 0;
        loop {
            read += 1;
            let current = request.url.clone();
            let result = self.exchange(step, request, scope, scrubber.clone(), deadline).await?;
            let count = match pages
                .items
                .as_ref()
                .map_or(Some(Cow::Borrowed(&result.body)), |f| f.get(&result))
            {
                Some(Cow::Borrowed(Value::Array(items))) => {
                    gathered.extend(items.iter().cloned());
                    items.len()
                }
                Some(Cow::Owned(Value::Array(items))) => {
                    let count = items.len();
                    gathered.extend(items);
                    count
                }
                None | Some(Cow::Borrowed(Value::Null) | Cow::Owned(Value::Null)) => 0,
                Some(other) => {
                    gathered.push(other.into_owned());
                    1
                }
            };
            let text = |v: Cow<'_, Value>| match v.as_ref() {
                Value::String(s) if !s.is_empty() => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            };
            let next = match &pages.next {
                Next::Link => link_next(&result.headers).and_then(|l| current.join(&l).ok()),
                Next::Url(field) => field.get(&result).and_then(text).and_then(|l| current.join(&l).ok()),
                Next::Cursor(field, param) => field
                    .get(&result)
                    .and_then(text)
                    .map(|c| with_param(&current, param, &c)),
                Next::Page(param, _) => (count > 0).then(|| {
                    page += 1;
                    with_param(&current, param, &page.to_string())
                }),
            };
            let Some(next) = next.filter(|_| read < pages.max_pages) else {
                return Ok(Arc::new(StepResult {
                    status: result.status,
                    headers: result.headers.clone(),
                    body: Value::Array(gathered),
                }));
            };
            // Credentials go only where the catalog sends them: a next page elsewhere is refused.
            if next.origin() != origin {
                return Err(scrubber.failure(
                    ToolFailure::permanent(
                        "the upstream service pointed to another site for the next page, which is not followed",
                    )
                    .with_code(failure::REDIRECT)
                    .with_developer_message(format!(
                        "step `{}` ({}): the next page is on {}, not {}",
                        step.name,
                        step.shape,
                        next.origin().ascii_serialization(),
                        origin.ascii_serialization()
                    )),
                ));
            }
            request = self.request(step, scope).map_err(|f| scrubber.failure(f))?;
            request.url = next;
        }
    }

    /// Sends one rendered request of `step` (authentication, retries, the 401 refresh) and reads
    /// the answer: a result, or the failure phrased by the step's `errors:`.
    async fn exchange(
        &self,
        step: &Step,
        mut request: Request,
        scope: &Scope<'_>,
        mut scrubber: Scrubber,
        deadline: Instant,
    ) -> Result<Arc<StepResult>, ToolFailure> {
        let scope = *scope;
        // Auth may add query parameters; each attempt starts again from the rendered URL.
        let plain_url = step.auth.as_ref().map(|_| request.url.clone());
        let policy = Policy {
            retries: step.retries,
            idempotent: step.idempotent,
            timeout: step.timeout,
            max_body: self.recipe.max_response_bytes,
        };
        let mut refreshed = false;
        loop {
            let mut token = None;
            if let (Some(auth), Some(plain)) = (&step.auth, &plain_url) {
                let applied = auth
                    .apply(
                        &self.shared.client,
                        &scope,
                        &mut request.headers,
                        &mut scrubber,
                        deadline,
                    )
                    .await?;
                if !applied.query.is_empty() {
                    let mut url = plain.clone();
                    url.query_pairs_mut().extend_pairs(&applied.query);
                    request.url = url;
                }
                token = applied.token;
            }
            let started = Instant::now();
            if tracing::enabled!(target: TRY, tracing::Level::TRACE) {
                tracing::trace!(
                    target: TRY,
                    step = %step.name,
                    method = %request.method,
                    url = %scrubber.scrub(request.url.as_str()),
                    headers = %shown_headers(&request.headers, &scrubber),
                    body = %shown_body(request.body.as_ref(), &scrubber),
                    "request"
                );
            }
            if self.dry_run && !matches!(request.method, reqwest::Method::GET | reqwest::Method::HEAD) {
                return Err(
                    ToolFailure::permanent("dry run: the call stops before a request that is not GET or HEAD")
                        .with_code("dry_run")
                        .with_developer_message(format!(
                            "step `{}` ({}) was shown, not sent: --dry-run sends only GET and HEAD",
                            step.name, step.shape
                        )),
                );
            }
            let (answer, attempts) = send::send(&self.shared.client, &request, policy, deadline).await;
            if tracing::enabled!(target: TRY, tracing::Level::TRACE) {
                match &answer {
                    Ok(a) => tracing::trace!(
                        target: TRY,
                        step = %step.name,
                        status = a.status.as_u16(),
                        attempts = attempts.count,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        body = %failure::excerpt(&scrubber.scrub(&String::from_utf8_lossy(&a.body)), 2000),
                        "answer"
                    ),
                    Err(f) => tracing::trace!(
                        target: TRY,
                        step = %step.name,
                        attempts = attempts.count,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        error = %scrubber.scrub(&format!("{f:?}")),
                        "no answer"
                    ),
                }
            }
            tracing::debug!(
                step = %step.name,
                request = %step.shape,
                status = answer.as_ref().map_or(0, |a| a.status.as_u16()),
                attempts = attempts.count,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "upstream step"
            );
            let answer = answer.map_err(|f| self.transport_failure(step, f, &scope, &scrubber))?;
            let status = answer.status.as_u16();
            // A cached OAuth 2.0 token may have been revoked early: forget it and try once more.
            if status == 401
                && !refreshed
                && let (Some(auth), Some(token)) = (&step.auth, &token)
            {
                auth.invalidate(token);
                refreshed = true;
                continue;
            }
            // An upstream that reflects what it was sent (an echo of the `Authorization` header,
            // a key in a "you called" field) would hand a secret to the model in a result or a
            // phrase quoting the answer: every secret form is removed from the answer before
            // anything reads it (issue #21.1).
            let mut result = StepResult {
                status,
                headers: send::headers_value(&answer.headers),
                body: send::body_value(&answer.headers, &answer.body),
            };
            scrubber.scrub_value(&mut result.headers);
            scrubber.scrub_value(&mut result.body);
            let result = Arc::new(result);
            if answer.status.is_success() || step.accept.contains(&status) {
                if let Some((written, _)) = step.expect.iter().find(|(_, field)| !field.present(&result)) {
                    let failure = ToolFailure::permanent("the upstream service found nothing for this request")
                        .with_code(failure::UNEXPECTED)
                        .with_developer_message(format!(
                            "step `{}` ({}) answered {} without `{written}`",
                            step.name, step.shape, answer.status
                        ));
                    let failure = self.phrase_with_own(step, Key::Missing, failure, &scope, result);
                    return Err(scrubber.failure(failure));
                }
                return Ok(result);
            }
            let text = String::from_utf8_lossy(&answer.body);
            // Scrub before cutting, so that a cut can never leave part of a secret behind.
            let excerpt = failure::excerpt(&scrubber.scrub(&text), 300);
            let failure = failure::for_status(&step.name, &step.shape, answer.status, answer.retry_after, &excerpt);
            let failure = self.phrase_with_own(step, Key::Status(status), failure, &scope, result);
            return Err(scrubber.failure(failure));
        }
    }

    /// Phrases `failure` by the step's `errors:`, whose templates may quote the step's own
    /// answer (already scrubbed); the quoted part is cut so an upstream cannot flood the model.
    fn phrase_with_own(
        &self,
        step: &Step,
        key: Key,
        failure: ToolFailure,
        scope: &Scope<'_>,
        own: Arc<StepResult>,
    ) -> ToolFailure {
        if step.errors.0.is_empty() {
            return failure;
        }
        let mut steps = scope.steps.to_vec();
        if let Some(slot) = steps.get_mut(step.index) {
            *slot = Some(own);
        }
        let scope = Scope {
            steps: &steps,
            ..*scope
        };
        let mut failure = step.errors.apply(&key, failure, &scope);
        failure.message = failure::excerpt(&failure.message, MAX_PHRASE_CHARS);
        if let Some(prompt) = &failure.prompt {
            failure.prompt = Some(failure::excerpt(prompt, MAX_PHRASE_CHARS));
        }
        failure
    }

    /// Renders the step's request for this call.
    /// The URL of a step whose path has holes: filled, checked, parsed.
    fn url(
        &self,
        step: &Step,
        scope: &Scope<'_>,
        unexpected: impl Fn(&str, Option<&str>) -> ToolFailure,
    ) -> Result<Url, ToolFailure> {
        let path = step
            .path
            .text(scope, |value, out| out.extend(utf8_percent_encode(value, SEGMENT)))
            .ok_or_else(|| {
                step.errors
                    .apply(&Key::Missing, unexpected("path", step.path.missing(scope)), scope)
            })?;
        // `.` and `..` are unreserved, so they pass through encoding; as whole segments they
        // would climb the upstream's path, so they are refused.
        if crate::build::climbs(&path) {
            return Err(ToolFailure::permanent(
                "an input cannot be `.` or `..` where it forms part of the upstream path",
            )
            .with_code(failure::INVALID_INPUT));
        }
        Url::parse(&format!("{}{path}", step.base)).map_err(|e| {
            ToolFailure::permanent("the input cannot be made into an upstream URL")
                .with_code(failure::INVALID_INPUT)
                .with_developer_message(format!("step `{}`: {e}", step.name))
        })
    }

    fn request(&self, step: &Step, scope: &Scope<'_>) -> Result<Request, ToolFailure> {
        let unexpected = |what: &str, written: Option<&str>| {
            ToolFailure::permanent("the upstream service answered in an unexpected shape, so the call cannot go on")
                .with_code(failure::UNEXPECTED)
                .with_developer_message(format!(
                    "step `{}`, `{what}`: `{}` has no value in this call",
                    step.name,
                    written.unwrap_or("?")
                ))
        };
        let mut url = match &step.url {
            Some(url) => url.clone(),
            None => self.url(step, scope, unexpected)?,
        };
        if !step.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (key, template) in &step.query {
                match template.render(scope) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        for item in items.iter().filter(|i| !i.is_null()) {
                            pairs.append_pair(key, &as_text(item));
                        }
                    }
                    Some(value) => {
                        pairs.append_pair(key, &as_text(&value));
                    }
                }
            }
        }
        let mut headers = HeaderMap::new();
        // W3C trace context goes on to the upstream, so its spans join the caller's trace.
        if let Some(traceparent) = scope.context.traceparent.as_deref()
            && let Ok(value) = HeaderValue::from_str(traceparent)
        {
            headers.insert("traceparent", value);
        }
        for (name, template) in &step.headers {
            let Some(text) = template.text(scope, |s, out| out.push_str(s)) else {
                continue;
            };
            let mut value = HeaderValue::from_bytes(text.as_bytes()).map_err(|_| {
                ToolFailure::permanent(format!(
                    "a value cannot be sent in the upstream header `{name}`: it has a line break or another control character"
                ))
                .with_code(failure::INVALID_INPUT)
            })?;
            value.set_sensitive(template.has_secret());
            headers.insert(name.clone(), value);
        }
        let body = match &step.body {
            None => None,
            Some(BodyTemplate::Json(template)) => Some(Body::Json(template.render(scope).unwrap_or(Value::Null))),
            Some(BodyTemplate::Form(fields)) => Some(Body::Form(
                fields
                    .iter()
                    .filter_map(|(k, t)| Some((k.clone(), as_text(&t.render(scope)?).into_owned())))
                    .collect(),
            )),
        };
        Ok(Request {
            method: step.method.clone(),
            url,
            headers,
            body,
        })
    }

    fn transport_failure(&self, step: &Step, failure: Failure, scope: &Scope<'_>, scrubber: &Scrubber) -> ToolFailure {
        let detail = |what: String| format!("step `{}` ({}): {what}", step.name, step.shape);
        // A request that changes something may have reached the upstream and acted before the
        // connection broke or the time ran out: saying "try again" would repeat it (issue #12).
        // Connecting failed means nothing was sent, so that one stays retryable.
        if !step.idempotent {
            let lost = match &failure {
                Failure::Timeout => Some("no answer in time after the request was sent".to_owned()),
                Failure::Transport(e) => Some(format!("the connection broke after the request was sent: {e}")),
                _ => None,
            };
            if let Some(lost) = lost {
                return scrubber.failure(
                    ToolFailure::outcome_unknown(
                        "the upstream service may have carried out this request, but its answer was lost; \
                         check whether it took effect before trying again",
                    )
                    .with_developer_message(detail(lost)),
                );
            }
        }
        let (key, failure) = match failure {
            Failure::Timeout => (
                Some(Key::Timeout),
                ToolFailure::temporary(
                    "the upstream service did not answer in time; try again",
                    Some(failure::DEFAULT_RETRY_AFTER),
                )
                .with_code(failure::TIMEOUT)
                .with_developer_message(detail("no answer in time".to_owned())),
            ),
            Failure::Connect(e) => (
                Some(Key::Unreachable),
                ToolFailure::temporary(
                    "the upstream service cannot be reached; try again later",
                    Some(failure::DEFAULT_RETRY_AFTER),
                )
                .with_code(failure::UNREACHABLE)
                .with_developer_message(detail(e)),
            ),
            Failure::Transport(e) => (
                Some(Key::Unreachable),
                ToolFailure::temporary(
                    "the connection to the upstream service failed; try again",
                    Some(failure::DEFAULT_RETRY_AFTER),
                )
                .with_code(failure::UPSTREAM_ERROR)
                .with_developer_message(detail(e)),
            ),
            Failure::Redirect(e) => (
                None,
                ToolFailure::permanent("the upstream service redirected the request too many times")
                    .with_code(failure::REDIRECT)
                    .with_developer_message(detail(e)),
            ),
            Failure::TooLarge { limit } => (
                None,
                ToolFailure::permanent("the upstream service answered with more data than this tool accepts")
                    .with_code(failure::TOO_LARGE)
                    .with_developer_message(detail(format!(
                        "the response body is over {limit} bytes (`max_response_bytes`)"
                    ))),
            ),
        };
        let failure = match key {
            Some(key) => step.errors.apply(&key, failure, scope),
            None => failure,
        };
        scrubber.failure(failure)
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

/// Header names and values for `toolhost try`: a sensitive value (auth) as `***`, any other
/// scrubbed of secrets.
fn shown_headers(headers: &reqwest::header::HeaderMap, scrubber: &Scrubber) -> String {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = if value.is_sensitive() {
                "***".to_owned()
            } else {
                scrubber.scrub(&String::from_utf8_lossy(value.as_bytes()))
            };
            format!("{name}: {shown}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A request body for `toolhost try`, scrubbed of secrets.
fn shown_body(body: Option<&send::Body>, scrubber: &Scrubber) -> String {
    match body {
        None => "(none)".to_owned(),
        Some(send::Body::Json(value)) => scrubber.scrub(&value.to_string()),
        Some(send::Body::Form(pairs)) => {
            let text: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish();
            scrubber.scrub(&text)
        }
    }
}

/// The server secrets `recipe` can send: those its paths, queries, headers, bodies and auth
/// reference. (Caller secrets and fetched tokens are added per call.)
fn sent_secrets(recipe: &Recipe) -> Vec<toolhost_core::Secret> {
    use crate::reference::{Reference, SecretSlot};
    let mut references: Vec<&Reference> = Vec::new();
    for step in &recipe.steps {
        references.extend(step.path.references());
        for (_, value) in &step.query {
            references.extend(value.references());
        }
        for (_, header) in &step.headers {
            references.extend(header.references());
        }
        match &step.body {
            Some(BodyTemplate::Json(value)) => references.extend(value.references()),
            Some(BodyTemplate::Form(pairs)) => pairs.iter().for_each(|(_, v)| references.extend(v.references())),
            None => {}
        }
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
