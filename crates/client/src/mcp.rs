//! MCP through the official Rust SDK (rmcp): streamable HTTP or a child process over stdio.
//!
//! A session is opened once per server and kept by the [`crate::Client`] for later calls
//! (stdio servers are processes; starting one per call would be slow and lose their state).
//! HTTP sessions use the client's guarded reqwest client, so the SSRF guard, redirect checks and
//! no-proxy rule hold for MCP too. MCP lists only current tools and has no retry signal, so
//! calls are not retried; toolhost's `_meta` `toolhost/version` pins the listed version.
#![allow(deprecated)] // MCP logging (SEP-2577)

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, JsonObject, MetaObject, PaginatedRequestParams, RequestMetaObject};
use rmcp::model::{ClientConfig, LoggingMessageNotificationParam, ProgressNotificationParam};
#[allow(deprecated)] // Sampling and roots (SEP-2577): still what servers ask, and relayed.
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt as _;

use crate::asking::Askers;
use crate::client::CallContext;
use crate::discover::{Found, Limits};
use crate::error::{Error, ToolFailure};
use crate::http::{Http, chain};
use crate::model::{Address, Protocol, Source, Tool};
use crate::relay::Calls;
use crate::{schema, text};

/// toolhost's `_meta` key for a tool's semantic version (docs/protocols.md §6).
pub const VERSION_META: &str = "toolhost/version";

/// `URLElicitationRequiredError` (MCP 2025-11-25): what toolhost answers a call that needs a
/// human's confirmation.
const URL_ELICITATION_REQUIRED: i32 = -32042;

/// How much of a stdio server's stderr is kept for error messages.
const STDERR_TAIL: usize = 2000;

/// The variables of this process a `stdio:` server started with [`ChildEnv::Cleared`] keeps:
/// where programs, home and temporary files are, locale and time zone, and where the system's
/// CA certificates are; nothing that carries a credential (no proxy URLs, no tokens).
pub const KEPT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_RUNTIME_DIR",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "SYSTEMROOT",
];

/// The environment a `stdio:` server is started with.
#[derive(Debug, Clone, Default)]
pub enum ChildEnv {
    /// This process's whole environment: a command the user typed (the client's commands).
    #[default]
    Inherit,
    /// Only [`KEPT_ENV`] and the locale's `LC_*` from this process, and these variables: a
    /// server started by toolhost serve, which must not read the server's secrets and keys
    /// from its environment (issue #30.1).
    Cleared(Vec<(String, toolhost_core::Secret)>),
}

impl ChildEnv {
    fn apply(&self, command: &mut tokio::process::Command) {
        let Self::Cleared(given) = self else {
            return;
        };
        command.env_clear();
        for (name, value) in std::env::vars_os() {
            let kept = name
                .to_str()
                .is_some_and(|n| KEPT_ENV.contains(&n) || n.starts_with("LC_"));
            if kept {
                command.env(name, value);
            }
        }
        for (name, value) in given {
            command.env(name, value.expose());
        }
    }
}

/// The client side of a session: it hears `notifications/tools/list_changed` (counted in
/// `changes`, which the server's federation reads the listing again on), passes a call's
/// progress and log messages to that call ([`crate::relay`]), and relays what the server asks
/// during a call (sampling, elicitation, roots) to the call's caller (`asking.rs`).
#[derive(Debug, Clone)]
pub(crate) struct Listener {
    pub changes: Arc<tokio::sync::watch::Sender<u64>>,
    pub calls: Arc<Calls>,
    pub askers: Askers,
}

#[allow(deprecated)] // Sampling and roots (SEP-2577).
impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ().get_info();
        // Declared so that servers ask at all; a question while no caller can answer it is
        // refused with an error (`asking.rs`).
        info.capabilities = serde_json::from_value(serde_json::json!({
            "sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {},
        }))
        .unwrap_or_default();
        info
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.calls.progress(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.calls.log(params);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.askers.elicit(request).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.askers.sample(params).await
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        self.askers.roots().await
    }
}

/// An open MCP session.
pub(crate) struct Session {
    label: String,
    /// The server's URL (none over stdio): a confirmation's result URI must be on its origin.
    url: Option<url::Url>,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Listener>>>,
    stderr: Option<Arc<Mutex<String>>>,
    /// The calls running on the session, for what the server says of them.
    calls: Arc<Calls>,
    /// The calls in flight that the server's questions are relayed to.
    askers: Askers,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("server", &self.label)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Opens a session with `source` within `timeout`; a `stdio:` server is started with `env`.
    pub async fn open(
        http: &Http,
        source: &Source,
        bearer: Option<&toolhost_core::Secret>,
        timeout: Duration,
        env: &ChildEnv,
        listener: Listener,
    ) -> Result<Self, Error> {
        let label = source.to_string();
        let calls = Arc::clone(&listener.calls);
        let askers = listener.askers.clone();
        // Nothing of a call is sent before the session is open.
        let failed = |message: String| Error::Mcp {
            server: label.clone(),
            message,
            sent: false,
        };
        let (service, stderr) = match source {
            Source::Url(url) => {
                http.guard().check_url(url).await?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let headers = http.credentials_with(url, bearer)?;
                config.custom_headers = headers.into_iter().filter_map(|(k, v)| Some((k?, v))).collect();
                let transport = StreamableHttpClientTransport::with_client(http.reqwest().clone(), config);
                let service = tokio::time::timeout(timeout, listener.serve(transport))
                    .await
                    .map_err(|_| failed(format!("no answer to `initialize` within {} ms", timeout.as_millis())))?
                    .map_err(|e| failed(text::plain_error(&chain(&e))))?;
                (service, None)
            }
            Source::Command { program, args } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                env.apply(&mut command);
                let (process, child_stderr) = TokioChildProcess::builder(command)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| failed(format!("failed to start `{program}`: {e}")))?;
                let tail = child_stderr.map(keep_tail);
                let started = tokio::time::timeout(timeout, listener.serve(process)).await;
                let with_stderr = |message: String| match &tail {
                    Some(tail) => {
                        let text = tail.lock().map(|t| t.clone()).unwrap_or_default();
                        if text.trim().is_empty() {
                            failed(message)
                        } else {
                            failed(format!(
                                "{message}; its stderr ends: {}",
                                text::one_line(&text, STDERR_TAIL)
                            ))
                        }
                    }
                    None => failed(message),
                };
                let service = started
                    .map_err(|_| with_stderr(format!("no answer to `initialize` within {} ms", timeout.as_millis())))?
                    .map_err(|e| with_stderr(text::plain_error(&chain(&e))))?;
                (service, tail)
            }
        };
        Ok(Self {
            url: match source {
                Source::Url(url) => Some(url.clone()),
                Source::Command { .. } => None,
            },
            label,
            peer: service.peer().clone(),
            service: tokio::sync::Mutex::new(Some(service)),
            stderr,
            calls,
            askers,
        })
    }

    /// Every tool, following `nextCursor` (bounded).
    pub async fn tools(&self, source: &Source, limits: Limits, timeout: Duration) -> Result<Found, Error> {
        let mut found = Found::default();
        let mut cursor: Option<String> = None;
        for _ in 0..limits.max_pages {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let page = tokio::time::timeout(timeout, self.peer.list_tools(Some(params)))
                .await
                .map_err(|_| self.error(format!("no answer to `tools/list` within {} ms", timeout.as_millis())))?
                .map_err(|e| self.error(text::plain_error(&chain(&e))))?;
            for listed in page.tools {
                if found.tools.len() >= limits.max_tools {
                    found
                        .skipped
                        .push(format!("stopped after {} tools (the limit)", limits.max_tools));
                    return Ok(found);
                }
                match tool(source, listed) {
                    Ok(t) => found.tools.push(t),
                    Err(why) => found.skipped.push(why),
                }
            }
            match page.next_cursor {
                Some(next) if Some(&next) == cursor.as_ref() => {
                    return Err(self.error("the listing returned the same cursor twice".to_owned()));
                }
                Some(next) => cursor = Some(next),
                None => return Ok(found),
            }
        }
        Err(self.error(format!("the listing did not end within {} pages", limits.max_pages)))
    }

    /// One `tools/call`: `structuredContent` when the tool gives it, else its text; its content
    /// blocks as they are when `context.blocks`. What the server says of the call while it runs
    /// goes to `context.notes`; what it asks meanwhile to `context.ask`, the caller's, when there
    /// is one.
    pub async fn call(
        &self,
        tool: &Tool,
        pin: Option<&Value>,
        input: &Map<String, Value>,
        timeout: Duration,
        context: &CallContext,
    ) -> Result<Value, Error> {
        let _asking = context
            .ask
            .as_ref()
            .map(|ask| self.askers.register(&tool.name, Arc::clone(ask)));
        let mut params = CallToolRequestParams::new(tool.name.clone()).with_arguments(input.clone());
        let mut meta = match pin {
            Some(Value::Object(meta)) => meta.clone(),
            _ => Map::new(),
        };
        // The confirmation a human gave the call (issue #40), by its id: toolhost's own member,
        // read on every protocol version.
        if let Some(confirmation) = &context.confirmation {
            meta.insert(
                crate::confirm::MCP_KEY.to_owned(),
                Value::String(confirmation.id.clone()),
            );
        }
        if !meta.is_empty() {
            params.meta = Some(RequestMetaObject(MetaObject(meta)));
        }
        let result = tokio::time::timeout(
            timeout,
            crate::relay::call_tool(&self.peer, &self.calls, params, context),
        )
        .await
        .map_err(|_| Error::Timeout {
            tool: tool.name.clone(),
            timeout,
        })?
        .map_err(|e| match e {
            // URL elicitation required (2025-11-25): a confirmation by a human, nothing ran.
            rmcp::ServiceError::McpError(data)
                if data.code.0 == URL_ELICITATION_REQUIRED
                    && let Some(held) = data
                        .data
                        .as_ref()
                        .and_then(|d| crate::confirm::Confirmation::from_mcp(&tool.name, self.url.as_ref(), d)) =>
            {
                Error::Confirmation(Box::new(held))
            }
            // The server answered, with a JSON-RPC error: not a lost connection.
            rmcp::ServiceError::McpError(data) => Error::McpError {
                server: self.label.clone(),
                code: data.code.0,
                message: text::clean(&data.message, 2000),
            },
            other => self.error(text::plain_error(&chain(&other))),
        })?;
        let texts: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        if result.is_error == Some(true) {
            let message = texts.join("\n");
            return Err(Error::Tool(Box::new(ToolFailure {
                tool: tool.name.clone(),
                message: if message.trim().is_empty() {
                    "the tool failed without saying why".to_owned()
                } else {
                    text::clean(&message, 4000)
                },
                prompt: None,
                developer_message: None,
                retryable: false,
                retry_after: None,
            })));
        }
        if context.blocks {
            return serde_json::to_value(&result.content).map_err(|e| self.error(e.to_string()));
        }
        if let Some(structured) = result.structured_content {
            return Ok(structured);
        }
        if texts.len() == result.content.len() {
            return Ok(Value::String(texts.join("\n")));
        }
        serde_json::to_value(&result.content).map_err(|e| self.error(e.to_string()))
    }

    /// The server's side of the session, for requests beside calls (resources).
    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Whether the session can still carry calls: its transport has not closed.
    pub fn is_alive(&self) -> bool {
        !self.peer.is_transport_closed()
    }

    /// Ends the session: the HTTP session is deleted, the child process told to stop.
    pub async fn close(&self) {
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = service.close_with_timeout(Duration::from_secs(2)).await;
        }
    }

    pub(crate) fn error(&self, message: String) -> Error {
        let tail = self
            .stderr
            .as_ref()
            .and_then(|t| t.lock().ok().map(|t| t.clone()))
            .filter(|t| !t.trim().is_empty());
        Error::Mcp {
            server: self.label.clone(),
            message: match tail {
                Some(tail) => format!("{message}; its stderr ends: {}", text::one_line(&tail, STDERR_TAIL)),
                None => message,
            },
            sent: true,
        }
    }
}

/// Reads a child's stderr in the background, keeping the last [`STDERR_TAIL`] bytes: enough to
/// say why a server failed to start, without echoing its logs to our terminal.
fn keep_tail(mut stderr: tokio::process::ChildStderr) -> Arc<Mutex<String>> {
    let tail = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&tail);
    tokio::spawn(async move {
        let mut buffer = [0u8; 1024];
        while let Ok(n) = stderr.read(&mut buffer).await {
            if n == 0 {
                break;
            }
            if let Ok(mut text) = sink.lock() {
                text.push_str(&String::from_utf8_lossy(&buffer[..n]));
                if text.len() > STDERR_TAIL * 2 {
                    let cut = text.len() - STDERR_TAIL;
                    let cut = (cut..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(cut);
                    text.replace_range(..cut, "");
                }
            }
        }
    });
    tail
}

/// A listed tool → our tool; `Err` says why it was skipped.
fn tool(source: &Source, listed: rmcp::model::Tool) -> Result<Tool, String> {
    let definition = serde_json::to_value(&listed).map_err(|e| format!("skipped an unreadable tool ({e})"))?;
    let name = listed.name.to_string();
    if !text::is_plain_name(&name) {
        return Err(format!(
            "skipped a tool whose name is not plain text: `{}`",
            text::one_line(&name, 80)
        ));
    }
    let input_schema = Value::Object(JsonObject::clone(&listed.input_schema));
    let inputs = schema::parameters(&input_schema);
    if let Some(bad) = inputs.iter().find(|p| !text::is_plain_name(&p.name)) {
        return Err(format!(
            "skipped `{name}`: the parameter `{}` is not plain text",
            text::one_line(&bad.name, 80)
        ));
    }
    let output_schema = listed
        .output_schema
        .as_ref()
        .map(|s| Value::Object(JsonObject::clone(s)));
    let version = listed
        .meta
        .as_ref()
        .and_then(|m| m.0.get(VERSION_META))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let pin = version.as_ref().map(|v| serde_json::json!({ VERSION_META: v }));
    Ok(Tool {
        title: listed
            .title
            .as_deref()
            .or_else(|| listed.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .map(|t| text::one_line(t, 200)),
        description: text::clean(listed.description.as_deref().unwrap_or_default(), text::MAX_DESCRIPTION),
        versions: version.iter().cloned().collect(),
        version,
        version_number: None,
        outputs: output_schema.as_ref().map(schema::outputs).unwrap_or_default(),
        inputs,
        input_schema,
        output_schema,
        protocol: Protocol::Mcp,
        endpoint: source.clone(),
        address: Address::Mcp { pin },
        name,
        definition,
        history: Vec::new(),
        compiled: Default::default(),
    })
}
