//! One call of a federated tool: the listing checked against the pin, the token for the call,
//! the upstream's answer bounded, checked and scrubbed, and its failures said without what a
//! caller must not read (a command line, a child's stderr, a secret).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use toolhost_client::{Error, Source, Tool};
use toolhost_core::{Backend, BackendCall, BoxFuture, ToolFailure};
use toolhost_sculpt::{Scrubber, TokenSource};

use crate::{State, Upstream, Watched};

/// How a call gets its `Authorization`.
#[derive(Debug, Clone)]
pub(crate) enum CallAuth {
    /// The upstream's `headers`, nothing per call.
    None,
    /// The caller's verified token (only with `same_audience`).
    Forward,
    /// A token from a token endpoint (client credentials, or the caller's exchanged).
    Token(Arc<TokenSource>),
}

/// One catalog tool version served by an upstream's tool.
#[derive(Debug)]
pub(crate) struct Upstreamed {
    pub upstream: Arc<Upstream>,
    pub watched: Arc<Watched>,
    pub auth: CallAuth,
    pub idempotent: bool,
    /// The one output's name when the version has exactly one (a text result fills it).
    pub single_output: Option<String>,
    /// Whether that one output is of type `content`: an MCP answer's blocks fill it as they are.
    pub content: bool,
    /// The largest answer passed on, in bytes of JSON.
    pub max_response_bytes: u64,
}

impl Upstreamed {
    async fn run(&self, call: BackendCall<'_>) -> Result<Map<String, Value>, ToolFailure> {
        let watched = &self.watched;
        let upstream = &self.upstream;
        let failed = |reason: &'static str| {
            metrics::counter!("toolhost_upstream_failures_total", "tool" => watched.catalog_tool.clone(), "reason" => reason)
                .increment(1);
        };
        // Half the call's time at most for the listing, so that a call that gives up on it
        // does so before anything is sent, and says so.
        let wait = call.version.timeout / 2;
        let listing = match upstream.listing_within(wait).await {
            Some(Ok(listing)) => listing,
            Some(Err(e)) => {
                failed("unreachable");
                let detail = upstream.scrubber.scrub(&format!("{}: {e}", upstream.shown));
                tracing::warn!(tool = %watched.catalog_tool, error = %detail, "the upstream could not be listed");
                return Err(upstream.scrubber.failure(unreachable(&self.told(&e))));
            }
            None => {
                failed("unreachable");
                tracing::warn!(upstream = %upstream.shown, tool = %watched.catalog_tool, wait_ms = wait.as_millis() as u64, "the upstream's listing did not come in time; the call was not sent");
                return Err(unreachable(&format!(
                    "{}: its tool listing did not come within {} ms; the call was not sent",
                    upstream.name,
                    wait.as_millis()
                )));
            }
        };
        // Judged again: this version may have been loaded after the listing was read.
        let state = watched.judge(Some(&listing));
        let Some((tool, now)) = listing.find(&watched.tool, watched.version.as_deref()) else {
            failed("missing");
            tracing::warn!(upstream = %upstream.shown, tool = %watched.catalog_tool, upstream_tool = %watched.tool, version = watched.version.as_deref().unwrap_or("current"), "the upstream no longer lists this tool (or the pinned version); it is withdrawn until it is back or re-imported");
            return Err(ToolFailure::temporary(
                "the service behind this tool does not offer it at the moment; try again later",
                Some(Duration::from_secs(60)),
            )
            .with_code("upstream_missing")
            .with_developer_message(format!("{} lists no tool `{}`", upstream.name, watched.tool)));
        };
        if state == State::Changed {
            let pin = watched.pin();
            failed("changed");
            tracing::warn!(
                upstream = %upstream.shown,
                tool = %watched.catalog_tool,
                upstream_tool = %watched.tool,
                pinned = %pin,
                now = %now,
                "the upstream changed this tool since it was pinned; it is withdrawn until an operator re-imports it (toolhost import tools)"
            );
            return Err(ToolFailure::permanent(
                "this tool is unavailable: the service behind it changed it, and it must be reviewed before it is used again",
            )
            .with_code("upstream_changed")
            .with_developer_message(format!(
                "{} changed `{}`: pinned {pin}, now {now}; re-import it with `toolhost import tools`",
                upstream.name, watched.tool
            )));
        }
        let deadline = Instant::now() + call.version.timeout;
        let bearer = match &self.auth {
            CallAuth::None => None,
            CallAuth::Forward => Some(
                call.context
                    .caller_token
                    .clone()
                    .ok_or_else(toolhost_sculpt::missing_caller_token)?,
            ),
            CallAuth::Token(tokens) => Some(
                tokens
                    .token(&upstream.http, call.context.caller_token.as_ref(), deadline)
                    .await?,
            ),
        };
        // Every secret the call could have sent: the server's (headers, env, client secrets)
        // and the call's token, forwarded, exchanged or fetched.
        let mut scrubber = upstream.scrubber.clone();
        if let Some(bearer) = &bearer {
            scrubber.add(bearer.expose());
        }
        let notes = call.context.progress.as_ref().map(|inner| {
            Arc::new(crate::relay::Scrubbed {
                inner: Arc::clone(inner),
                scrubber: scrubber.clone(),
            }) as Arc<dyn toolhost_core::Progress>
        });
        let context = toolhost_client::CallContext {
            bearer: bearer.clone(),
            owner: call.context.caller_subject.clone(),
            notes,
            blocks: self.content,
            // What an MCP upstream asks goes to the caller (docs/asking.md).
            ask: call.context.ask.clone(),
            ..Default::default()
        };
        let answer = upstream
            .client
            .call_with(tool, Value::Object(call.input.clone()), &context)
            .await;
        match answer {
            Ok(mut value) => {
                // The tool ran to its end: what it did is known to be done, so not an unknown
                // outcome, but its answer is not passed on.
                self.usable(&value)?;
                scrubber.scrub_value(&mut value);
                Ok(self.outputs(tool, value))
            }
            Err(error) => {
                // A token the upstream refused is not used again.
                if let (CallAuth::Token(tokens), Some(bearer), Error::Status { status: 401, .. }) =
                    (&self.auth, &bearer, &error)
                {
                    tokens.invalidate(bearer);
                }
                if !matches!(error, Error::Tool(_) | Error::InvalidArguments { .. }) {
                    upstream.forget();
                }
                Err(self.failure(&error, &scrubber))
            }
        }
    }

    /// Refuses an answer over the tool's `max_response_bytes` (issue #30.15). An MCP result that
    /// is not text or structured content (an image, audio, a resource) is its content blocks, which
    /// a `json` output carries as they are and any other output type refuses (`invalid_output`):
    /// never dropped (issue #30.13).
    fn usable(&self, value: &Value) -> Result<(), ToolFailure> {
        let size = json_size(value);
        if size > self.max_response_bytes {
            tracing::warn!(tool = %self.watched.catalog_tool, bytes = size, limit = self.max_response_bytes, "the upstream's answer is over the tool's max_response_bytes; not passed on");
            return Err(ToolFailure::permanent(
                "the service behind this tool ran it, but answered with more than this tool passes on",
            )
            .with_code("response_too_large")
            .with_developer_message(format!(
                "{}: the answer is {size} bytes of JSON, over {} (`max_response_bytes`)",
                self.upstream.name, self.max_response_bytes
            )));
        }
        Ok(())
    }

    /// The result as the version's outputs: a `content` output's blocks; an object as it is;
    /// text (or any other value) into the one output.
    fn outputs(&self, tool: &Tool, value: Value) -> Map<String, Value> {
        match (value, &self.single_output) {
            (value, Some(name)) if self.content => Map::from_iter([(name.clone(), crate::relay::content(value))]),
            (Value::Object(map), _) if !tool.outputs.is_empty() || self.single_output.is_none() => map,
            (value, Some(name)) => Map::from_iter([(name.clone(), value)]),
            (value, None) => Map::from_iter([("result".to_owned(), value)]),
        }
    }

    /// The failure of a call the upstream did not answer well, with every secret the call could
    /// have sent removed from its texts and from the log.
    fn failure(&self, error: &Error, scrubber: &Scrubber) -> ToolFailure {
        // The operator's log has all of it (a command line, a child's stderr), scrubbed.
        if !matches!(error, Error::Tool(_) | Error::InvalidArguments { .. }) {
            let detail = scrubber.scrub(&format!("{}: {error}", self.upstream.shown));
            tracing::warn!(tool = %self.watched.catalog_tool, error = %detail, "the upstream call failed");
        }
        let reason = refusal_reason(error, scrubber);
        scrubber.failure(self.classify(error, scrubber.scrub(&self.told(error)), reason))
    }

    /// What a caller may read of `error`: for a `stdio:` server never its command line or its
    /// stderr, which may carry keys (issue #30.7); those go to the log.
    fn told(&self, error: &Error) -> String {
        told(&self.upstream, error)
    }

    /// The failure for `error`; `reason` is the upstream's own word on a refusal (or the tool's
    /// own failure message), scrubbed and bounded, which the message carries.
    fn classify(&self, error: &Error, detail: String, reason: Option<String>) -> ToolFailure {
        let refused = || {
            let message = match &reason {
                Some(reason) => format!(
                    "the service behind this tool refused the call; {}",
                    toolhost_sculpt::reason::quoted("it", reason)
                ),
                None => "the service behind this tool refused the call".to_owned(),
            };
            ToolFailure::permanent(message)
                .with_code("upstream_refused")
                .with_developer_message(detail.clone())
        };
        match error {
            Error::Tool(failure) => {
                let message = reason.clone().unwrap_or_else(|| "the tool failed".to_owned());
                let mut out = if failure.retryable {
                    ToolFailure::temporary(message, failure.retry_after)
                } else {
                    ToolFailure::permanent(message)
                };
                out.prompt.clone_from(&failure.prompt);
                out.with_code("upstream_tool_failed").with_developer_message(detail)
            }
            // Nothing reached the upstream: trying again is safe.
            _ if error.nothing_sent() => unreachable(&detail),
            // The upstream answered that it will not run this request: nothing was done, and
            // the same request will be refused again.
            _ if error.refused_unrun() => refused(),
            Error::Transport { .. } | Error::Timeout { .. } | Error::Mcp { .. } | Error::McpError { .. }
                if !self.idempotent =>
            {
                ToolFailure::outcome_unknown(
                    "the service behind this tool stopped answering while it ran; it may have acted",
                )
                .with_developer_message(detail)
            }
            _ if error.is_retryable()
                || matches!(
                    error,
                    Error::Transport { .. } | Error::Timeout { .. } | Error::Mcp { .. } | Error::McpError { .. }
                ) =>
            {
                ToolFailure::temporary(
                    "the service behind this tool is unavailable; try again",
                    Some(Duration::from_secs(1)),
                )
                .with_code("upstream_unavailable")
                .with_developer_message(detail)
            }
            _ => refused(),
        }
    }
}

/// What the upstream said on refusing the call (a 4xx's detail, the arguments it found
/// invalid, a JSON-RPC refusal) or on failing it (the tool's own message), scrubbed first and
/// then bounded ([`toolhost_sculpt::reason`]). A 5xx's detail is the server's internals: none.
fn refusal_reason(error: &Error, scrubber: &Scrubber) -> Option<String> {
    use toolhost_sculpt::reason;
    let said = match error {
        // A tool's own failure is its whole message, which may quote a reason of its own,
        // without the "tool `x` failed: " the far server put first (this one's adapter says it).
        Error::Tool(failure) => {
            let tool = &failure.tool;
            let message = [
                format!("tool `{tool}` failed: "),
                format!("Tool `{tool}` failed: "),
                format!("agent `{tool}` failed: "),
            ]
            .iter()
            .find_map(|said| failure.message.strip_prefix(said.as_str()))
            .unwrap_or(&failure.message);
            return reason::bounded_to(&scrubber.scrub(message), MAX_TOOL_MESSAGE_CHARS);
        }
        Error::Status {
            status: 400..=499,
            detail,
            ..
        } => detail.clone(),
        Error::InvalidArguments { problems, .. } => problems
            .iter()
            .map(|p| p.message.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        Error::McpError { message, .. } if error.refused_unrun() => message.clone(),
        _ => return None,
    };
    reason::bounded(&scrubber.scrub(&said))
}

/// The most characters of an upstream tool's own failure message passed on.
const MAX_TOOL_MESSAGE_CHARS: usize = 1000;

/// What a caller may read of an upstream's `error`, named as callers know the upstream.
pub(crate) fn told(upstream: &Upstream, error: &Error) -> String {
    let said = match (&upstream.source, error) {
        (_, Error::Tool(failure)) => failure.message.clone(),
        (_, Error::McpError { code, message, .. }) => format!("the server answered with error {code}: {message}"),
        // Its body is the server's internals, for the log only.
        (
            _,
            Error::Status {
                status: status @ 500.., ..
            },
        ) => format!("answered HTTP {status}"),
        (Source::Url(_), other) => other.to_string(),
        (Source::Command { .. }, Error::Mcp { sent: false, .. }) => "the upstream could not start".to_owned(),
        (Source::Command { .. }, Error::Timeout { timeout, .. }) => {
            format!("no answer within {} ms", timeout.as_millis())
        }
        (Source::Command { .. }, Error::InvalidArguments { .. }) => error.to_string(),
        (Source::Command { .. }, _) => "the upstream stopped answering (the server's log says why)".to_owned(),
    };
    format!("{}: {said}", upstream.name)
}

/// The failure when the upstream cannot be reached or listed, or did not start: nothing was
/// sent, so it is retryable.
fn unreachable(detail: &str) -> ToolFailure {
    ToolFailure::temporary(
        "the service behind this tool is unreachable; try again",
        Some(Duration::from_secs(1)),
    )
    .with_code("upstream_unreachable")
    .with_developer_message(detail.to_owned())
}

/// The length of `value` serialized as JSON, counted without writing it out.
pub(crate) fn json_size(value: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

impl Upstreamed {
    /// This version's standing. A version not judged yet is judged against the upstream's
    /// last listing when there is one, so a version a reload loads starts where its upstream
    /// stands — a withdrawn tool stays withdrawn until it is imported again — rather than as
    /// served until the watcher's next reading (issue #32.9). Asked after the whole catalog is
    /// built, so every later version's pin is known.
    fn state(&self) -> State {
        if !self.watched.judged.load(std::sync::atomic::Ordering::Relaxed) {
            let last = self
                .upstream
                .listing
                .try_lock()
                .ok()
                .and_then(|listing| listing.as_ref().map(|(_, _, found)| Arc::clone(found)));
            if let Some(found) = last {
                return self.watched.judge(Some(&found));
            }
        }
        self.watched.state()
    }
}

impl Backend for Upstreamed {
    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Map<String, Value>, ToolFailure>> {
        Box::pin(self.run(call))
    }

    fn dependencies(&self) -> Vec<String> {
        match &self.upstream.source {
            Source::Url(url) => vec![url.to_string()],
            Source::Command { .. } => Vec::new(),
        }
    }

    fn may_act(&self) -> bool {
        !self.idempotent
    }

    fn upstream(&self) -> Option<(String, bool)> {
        Some((self.upstream.name.clone(), self.state() != State::Unreachable))
    }

    fn withdrawn(&self) -> Option<&'static str> {
        let state = self.state();
        state.withdraws().then_some(state.name())
    }
}

#[cfg(test)]
mod tests {
    use super::{json_size, refusal_reason};
    use toolhost_client::Error;
    use toolhost_sculpt::Scrubber;

    #[test]
    fn a_refusal_says_the_upstreams_reason_scrubbed_and_bounded_and_a_5xx_says_none() {
        let scrubber = Scrubber::shared(["Server-Secret-77"]);
        let status = |status: u16, detail: &str| Error::Status {
            url: "http://127.0.0.1:1/nact".to_owned(),
            status,
            detail: detail.to_owned(),
            retry_after: None,
            retryable: None,
        };
        let said = |e: &Error| refusal_reason(e, &scrubber);
        assert_eq!(
            said(&status(422, "label nope does not exist\n(key Server-Secret-77)")).as_deref(),
            Some("label nope does not exist (key <redacted>)")
        );
        assert_eq!(said(&status(500, "stack trace at db.internal")), None);
        let invalid = Error::InvalidArguments {
            tool: "add".to_owned(),
            problems: vec![toolhost_core::ParameterError {
                parameter: "a".to_owned(),
                message: "`a` expects an integer".to_owned(),
            }],
        };
        assert_eq!(said(&invalid).as_deref(), Some("`a` expects an integer"));
        let rpc = |code: i32| Error::McpError {
            server: "http://127.0.0.1:1/mcp".to_owned(),
            code,
            message: "unknown argument `z`".to_owned(),
        };
        assert_eq!(said(&rpc(-32602)).as_deref(), Some("unknown argument `z`"));
        assert_eq!(
            said(&rpc(-32603)),
            None,
            "an internal error may come after the tool acted"
        );
        let named = Error::Tool(Box::new(toolhost_client::ToolFailure {
            tool: "add".to_owned(),
            message: "tool `add` failed: the API said: \"no\"".to_owned(),
            prompt: None,
            developer_message: None,
            retryable: false,
            retry_after: None,
        }));
        assert_eq!(
            said(&named).as_deref(),
            Some("the API said: \"no\""),
            "the tool is named once, here"
        );
        let long = Error::Tool(Box::new(toolhost_client::ToolFailure {
            tool: "add".to_owned(),
            message: "x".repeat(5000),
            prompt: None,
            developer_message: None,
            retryable: false,
            retry_after: None,
        }));
        assert_eq!(said(&long).map(|m| m.chars().count()), Some(1001));
    }

    #[test]
    fn the_size_of_an_answer_is_its_json_length() {
        let value = serde_json::json!({"a": [1, "two", null], "b": "é"});
        assert_eq!(json_size(&value), serde_json::to_vec(&value).unwrap().len() as u64);
    }
}
