//! One request of a step: rendered from its templates, sent (authentication, retries, the
//! 401 refresh), and its answer read, or its failure phrased by the step's `errors:`.

use std::sync::Arc;
use std::time::Instant;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use toolhost_core::ToolFailure;

use super::{MAX_PHRASE_CHARS, Sculpted, TRY};
use crate::build::{BodyTemplate, Step};
use crate::failure::{self, Key, Scrubber};
use crate::reference::{Scope, StepResult};
use crate::send::{self, Body, Failure, Policy, Request};
use crate::template::as_text;
use crate::{multipart, style};

/// What a path segment keeps unencoded: RFC 3986's unreserved characters. Everything else,
/// `/ ? # %` and spaces included, is percent-encoded, so an input can never add a segment, a
/// query or a fragment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

impl Sculpted {
    /// Sends one rendered request of `step` (authentication, retries, the 401 refresh) and reads
    /// the answer: a result, or the failure phrased by the step's `errors:`.
    pub(super) async fn exchange(
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
            if answer.status.is_server_error() {
                tracing::warn!(step = %step.name, request = %step.shape, status, body = %excerpt, "the upstream failed; its answer is for this log only");
            }
            // The reason is read from the answer as scrubbed above, so its cut cannot leave part
            // of a secret either.
            let reason = crate::reason::from_body(&result.body);
            let refusal = failure::Refusal {
                status: answer.status,
                retry_after: answer.retry_after,
                excerpt: &excerpt,
                reason: reason.as_deref(),
            };
            let failure = failure::for_status(&step.name, &step.shape, &refusal);
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

    /// The URL of a step whose path has holes: filled, checked, parsed.
    fn url(
        &self,
        step: &Step,
        scope: &Scope<'_>,
        unexpected: impl Fn(&str, Option<&str>) -> ToolFailure,
    ) -> Result<Url, ToolFailure> {
        let path = step
            .path
            .text_by(scope, |reference, value, out| {
                // An array or object in OpenAPI's `simple` style (`a,b`) or as `styles` says,
                // each part encoded as a segment: an input never adds one.
                let encode = |part: &str, out: &mut String| out.extend(utf8_percent_encode(part, SEGMENT));
                match step.style_of(reference) {
                    Some(segment) => segment.write(value, out, encode),
                    None => {
                        for (i, part) in style::parts(value).iter().enumerate() {
                            if i > 0 {
                                out.push(',');
                            }
                            encode(part, out);
                        }
                    }
                }
            })
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

    /// Renders the step's request for this call.
    pub(super) fn request(&self, step: &Step, scope: &Scope<'_>) -> Result<Request, ToolFailure> {
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
            for (key, template, style) in &step.query {
                match (template.render(scope), style) {
                    (None, _) => {}
                    (Some(value), Some(style)) => {
                        pairs.extend_pairs(style.pairs(key, &value));
                    }
                    (Some(Value::Null), None) => {}
                    (Some(Value::Array(items)), None) => {
                        for item in items.iter().filter(|i| !i.is_null()) {
                            pairs.append_pair(key, &as_text(item));
                        }
                    }
                    (Some(value), None) => {
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
            // An array or object is written as OpenAPI's `simple` style says (`a,b`; exploded,
            // an object's members `k=v,k2=v2`).
            let styled = template.text_by(scope, |reference, value, out| match step.style_of(reference) {
                Some(segment) if segment.is_simple() => segment.write(value, out, |part, out| out.push_str(part)),
                _ => out.push_str(&style::simple(value)),
            });
            let Some(text) = styled else {
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
        let cookies: Vec<String> = step
            .cookies
            .iter()
            .filter_map(|(name, template)| Some(format!("{name}={}", style::cookie(&*template.value(scope)?))))
            .collect();
        if !cookies.is_empty() {
            let mut value = HeaderValue::from_str(&cookies.join("; ")).map_err(|_| {
                ToolFailure::permanent("a value cannot be sent in an upstream cookie").with_code(failure::INVALID_INPUT)
            })?;
            value.set_sensitive(step.cookies.iter().any(|(_, t)| t.has_secret()));
            headers.insert(reqwest::header::COOKIE, value);
        }
        let body = match &step.body {
            None => None,
            // A body that is one optional input left out is no body at all.
            Some(BodyTemplate::Json(template)) => template.render(scope).map(Body::Json),
            Some(BodyTemplate::Form(fields)) => Some(Body::Form(
                fields
                    .iter()
                    .flat_map(|(k, t, style)| match (t.render(scope), style) {
                        (None | Some(Value::Null), _) => Vec::new(),
                        (Some(value), Some(style)) => style.pairs(k, &value),
                        (Some(value), None) => vec![(k.clone(), as_text(&value).into_owned())],
                    })
                    .collect(),
            )),
            Some(BodyTemplate::Multipart(fields)) => {
                let mut parts = Vec::new();
                for (name, template, file) in fields {
                    let Some(value) = template.render(scope) else {
                        continue;
                    };
                    parts.extend(multipart::parts(name, &value, *file).map_err(|e| {
                        ToolFailure::permanent(format!("the input cannot be sent: {e}"))
                            .with_code(failure::INVALID_INPUT)
                    })?);
                }
                let (boundary, bytes) = multipart::encode(&parts);
                let names = parts.into_iter().map(|p| p.name).collect();
                Some(Body::Multipart { boundary, bytes, names })
            }
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
}

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
        Some(send::Body::Multipart { names, bytes, .. }) => {
            format!("multipart/form-data, {} bytes: {}", bytes.len(), names.join(", "))
        }
        Some(send::Body::Form(pairs)) => {
            let text: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish();
            scrubber.scrub(&text)
        }
    }
}
