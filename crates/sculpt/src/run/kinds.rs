//! The steps that are more than one request: a `tool` step (another catalog tool through the
//! engine), a `for_each` fan-out, and pages followed one after another.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use reqwest::Url;
use serde_json::{Map, Value};
use toolhost_core::{BackendCall, ToolFailure};

use super::Sculpted;
use crate::build::{BodyTemplate, ForEach, Next, Paginate, Step};
use crate::failure::{self, Scrubber};
use crate::reference::{Scope, StepResult};

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

/// The refusal of a URL an upstream pointed to (`what`: "the next page", "the poll URL") on
/// another origin than the step's: credentials go only where the catalog sends them.
pub(super) fn elsewhere(step: &Step, what: &str, url: &Url, origin: &str) -> ToolFailure {
    ToolFailure::permanent(format!(
        "the upstream service pointed to another site for {what}, which is not followed"
    ))
    .with_code(failure::REDIRECT)
    .with_developer_message(format!(
        "step `{}` ({}): {what} is on {}, not {}",
        step.name,
        step.shape,
        url.origin().ascii_serialization(),
        origin
    ))
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

impl Sculpted {
    /// Runs a `tool` step: the catalog tool called through the engine with this call's context
    /// (secrets, caller identity, request id), one level deeper, within the call's deadline.
    /// Its output object is the step's `body`. The tool is called whoever may see it: the
    /// catalog composed it into this one, which is what the caller was allowed to call.
    pub(super) async fn call_tool(
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
        // The inner tool's steps are not this call's steps: only this call reports progress.
        context.progress = None;
        // Its questions still reach the caller, known by this step's name first.
        context.ask = context
            .ask
            .take()
            .map(|ask| toolhost_core::ask::within(ask, &format!("{}.", step.name)));
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
    pub(super) async fn for_each(
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
    pub(super) async fn pages(
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
                return Err(scrubber.failure(elsewhere(step, "the next page", &next, &origin.ascii_serialization())));
            }
            request = self.request(step, scope).map_err(|f| scrubber.failure(f))?;
            request.url = next;
        }
    }
}
