//! Why a client operation failed, with what to do about it.

use std::fmt;
use std::time::Duration;

use toolhost_core::ParameterError;

use crate::confirm::{Confirmation, Unconfirmed};
use crate::model::Protocol;
use crate::text::shown_url as shown;

/// What an HTTP status most likely asks of the user, said after it.
fn advice(status: u16) -> &'static str {
    match status {
        401 => " (the server wants credentials: pass --bearer TOKEN or --api-key KEY, or --header 'NAME: VALUE')",
        403 => " (the credentials do not allow this)",
        _ => "",
    }
}

/// Why discovering, checking or calling a tool failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The SSRF guard refused the address before connecting.
    #[error("refused to connect to {}: {reason}{}", shown(.url), if *.private {
        "; to reach it on purpose pass --allow-private (loopback and private ranges) or --allow-net CIDR"
    } else {
        "; to reach it on purpose pass --allow-net CIDR"
    })]
    Refused {
        /// The URL.
        url: String,
        /// Which rule refused it.
        reason: String,
        /// Whether `--allow-private` would open it.
        private: bool,
    },
    /// The request did not complete: connection, TLS, timeout or a body too large.
    #[error("failed to reach {}: {message}", shown(.url))]
    Transport {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
        /// Whether nothing reached the server (a connection that never opened), so a retry is safe.
        connect: bool,
    },
    /// The server answered with an HTTP error that is not a tool failure.
    #[error("{} answered HTTP {status}{}: {detail}", shown(.url), advice(*.status))]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's explanation, cleaned.
        detail: String,
        /// `Retry-After`, when the server sent one.
        retry_after: Option<Duration>,
        /// The server's own word on retrying (problem `retryable`), when it gave one.
        retryable: Option<bool>,
    },
    /// The server answered, but not in the protocol's shape.
    #[error("{} did not answer like {protocol}: {detail}", shown(.url))]
    Protocol {
        /// The URL or command.
        url: String,
        /// The protocol expected.
        protocol: Protocol,
        /// What was wrong.
        detail: String,
    },
    /// No protocol answered at the address.
    #[error(
        "no tool protocol answered at {} (tried {tried}); give the protocol's own address, e.g. http://host/nact, http://host/otc or http://host/mcp, or name it with --protocol",
        shown(.url)
    )]
    NotFound {
        /// The address.
        url: String,
        /// What was tried, and how each failed.
        tried: String,
    },
    /// The server has no tool of that name.
    #[error("{} has no tool `{name}`; its tools are: {known}", shown(.server))]
    UnknownTool {
        /// The server.
        server: String,
        /// The name asked for (cleaned).
        name: String,
        /// The names it has.
        known: String,
    },
    /// The arguments do not match the tool's signature; nothing was sent (or the server said so).
    #[error("{}", invalid(.tool, .problems))]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// One problem per parameter.
        problems: Vec<ParameterError>,
    },
    /// The tool ran and failed.
    #[error("{0}")]
    Tool(Box<ToolFailure>),
    /// The call did not finish in time.
    #[error("`{tool}` did not answer within {} ms; raise --timeout-ms if it is slow", .timeout.as_millis())]
    Timeout {
        /// The tool or operation.
        tool: String,
        /// The limit.
        timeout: Duration,
    },
    /// An MCP session failed (start, handshake or transport).
    #[error("MCP at {}: {message}", shown(.server))]
    Mcp {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
        /// Whether the request may have reached the server: `false` when the session never
        /// opened (the server did not start, or is waiting out its restart backoff), so
        /// nothing was sent.
        sent: bool,
    },
    /// An MCP server answered the request with a JSON-RPC error (not a transport failure: the
    /// server is there and said no). See [`Error::refused_unrun`].
    #[error("MCP at {}: the server answered with error {code}: {message}", shown(.server))]
    McpError {
        /// The server.
        server: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message, cleaned.
        message: String,
    },
    /// A lockfile or mapping file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The client could not be built (e.g. a TLS backend missing).
    #[error("failed to set up the HTTP client: {0}")]
    Setup(String),
    /// The server holds the call until a human confirms it (issue #40): nothing ran.
    #[error("{0}")]
    Confirmation(Box<Confirmation>),
    /// Waiting for a human's confirmation ended without one: nothing ran.
    #[error("`{tool}` did not run and nothing was done: {why}. The confirmation page: {link}")]
    Unconfirmed {
        /// The tool.
        tool: String,
        /// The confirmation page.
        link: String,
        /// Why it ended.
        why: Unconfirmed,
    },
    /// A confirmation's result URI is on another origin than the server called: not polled.
    #[error(
        "refused to wait on {}: the confirmation's result URI is not on the server that was called, and the client polls only that server. `{tool}` did not run; confirm at {link} and call it again",
        shown(.url)
    )]
    ForeignResult {
        /// The tool.
        tool: String,
        /// The result URI given.
        url: String,
        /// The confirmation page.
        link: String,
    },
}

impl Error {
    /// Whether the same request may succeed if sent again (docs/protocols.md §7): a 5xx (unless the
    /// server said it is not retryable), a tool failure the tool marks retryable, or a
    /// connection that never opened. Never a 4xx, never invalid arguments.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Status { status, retryable, .. } => *status >= 500 && retryable.unwrap_or(true),
            Self::Tool(failure) => failure.retryable,
            Self::Transport { connect, .. } => *connect,
            Self::Refused { .. }
            | Self::Protocol { .. }
            | Self::NotFound { .. }
            | Self::UnknownTool { .. }
            | Self::InvalidArguments { .. }
            | Self::Timeout { .. }
            | Self::Mcp { .. }
            | Self::McpError { .. }
            | Self::File { .. }
            | Self::Setup(_)
            | Self::Confirmation(_)
            | Self::Unconfirmed { .. }
            | Self::ForeignResult { .. } => false,
        }
    }

    /// Whether the server refused the request before running anything: a JSON-RPC parse
    /// error, invalid request, unknown method or invalid params (JSON-RPC 2.0 §5.1). Another
    /// error code (an internal error, a server's own) may come after a tool began to act.
    pub fn refused_unrun(&self) -> bool {
        matches!(
            self,
            Self::McpError {
                code: -32700 | -32600 | -32601 | -32602,
                ..
            }
        )
    }

    /// Whether the server's answer is its protocol's own statement that the same call may be
    /// sent again (issue #31.10): over N-ACT any 5xx (§7: "the executor SHOULD retry") and a
    /// tool failure it marks `retryable`; over OTC a tool failure with `can_retry: true`; over
    /// WoA, whose draft says nothing of retries, only a problem's explicit `retryable: true`.
    /// [`Error::is_retryable`] still has the last word (a 5xx marked `retryable: false` stays
    /// final).
    pub fn server_says_retry(&self, protocol: Protocol) -> bool {
        match (protocol, self) {
            (Protocol::Nact, Self::Status { status, .. }) => *status >= 500,
            (Protocol::Woa, Self::Status { retryable, .. }) => *retryable == Some(true),
            (Protocol::Nact | Protocol::Otc | Protocol::Woa, Self::Tool(failure)) => failure.retryable,
            _ => false,
        }
    }

    /// Whether the request surely never reached the server (a connection that never opened),
    /// so sending it again cannot repeat anything, whatever the tool does.
    pub fn nothing_sent(&self) -> bool {
        matches!(
            self,
            Self::Transport { connect: true, .. } | Self::Mcp { sent: false, .. }
        )
    }

    /// How long the server asked to wait before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status { retry_after, .. } => *retry_after,
            Self::Tool(failure) => failure.retry_after,
            _ => None,
        }
    }

    /// The text to show a model after a failed call, so it can try again: the per-parameter
    /// problems, or the tool's message and prompt. `None` for failures a model cannot fix.
    pub fn prompt_for_model(&self) -> Option<String> {
        match self {
            Self::InvalidArguments { .. } | Self::Confirmation(_) | Self::Unconfirmed { .. } => Some(self.to_string()),
            Self::Tool(failure) => Some(match &failure.prompt {
                Some(prompt) => format!("{}\n{prompt}", failure.message),
                None => failure.message.clone(),
            }),
            _ => None,
        }
    }
}

/// A tool that ran and failed, with the text the server offers the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    /// The tool.
    pub tool: String,
    /// What went wrong, for the user and the model (cleaned).
    pub message: String,
    /// Text for the model's next attempt: OTC `additional_prompt_content`, problem `prompt`.
    pub prompt: Option<String>,
    /// Detail for developers (OTC `developer_message`), when given: logged, never shown (not in
    /// `Display` nor [`Error::prompt_for_model`]); OTC says it "SHOULD NOT be shown to the user or
    /// an AI model".
    pub developer_message: Option<String>,
    /// Whether the tool says a retry may succeed.
    pub retryable: bool,
    /// How long the tool asked to wait first.
    pub retry_after: Option<Duration>,
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Servers often name the tool themselves ("tool `x` failed: …"): say it once.
        let named = format!("`{}`", self.tool);
        let first_words: String = self.message.chars().take(self.tool.len() + 12).collect();
        if first_words.contains(&named) {
            f.write_str(&self.message)?;
        } else {
            write!(f, "tool `{}` failed: {}", self.tool, self.message)?;
        }
        if let Some(prompt) = &self.prompt {
            write!(f, " ({prompt})")?;
        }
        Ok(())
    }
}

fn invalid(tool: &str, problems: &[ParameterError]) -> String {
    Invalid { tool, problems }.to_string()
}

/// The message of invalid arguments: one line per parameter, in words a model can act on.
struct Invalid<'a> {
    tool: &'a str,
    problems: &'a [ParameterError],
}

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the arguments for `{}` do not match its signature; fix them and call it again:",
            self.tool
        )?;
        for p in self.problems {
            if p.parameter.is_empty() {
                write!(f, "\n- {}", p.message)?;
            } else {
                write!(f, "\n- {}: {}", p.parameter, p.message)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn only_json_rpc_refusals_before_running_are_refused_unrun() {
        let answered = |code| Error::McpError {
            server: "http://127.0.0.1:1/mcp".into(),
            code,
            message: "no".into(),
        };
        for code in [-32700, -32600, -32601, -32602] {
            assert!(answered(code).refused_unrun(), "{code}");
            assert!(!answered(code).is_retryable(), "{code}");
        }
        for code in [-32603, -32000, 1] {
            assert!(!answered(code).refused_unrun(), "{code}: may come after the tool acted");
        }
        let lost = Error::Mcp {
            server: "x".into(),
            message: "Transport closed".into(),
            sent: true,
        };
        assert!(!lost.refused_unrun());
    }
}
