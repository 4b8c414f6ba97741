//! The rmcp `ServerHandler`: a cheap clone of the shared state, made per request in stateless
//! mode (DEPENDENCIES.md §3 gotcha 5).

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool as McpTool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use toolhost_core::confirm::{Presented, Status as ConfirmStatus};
use toolhost_core::{Access, CallContext, Disclosure, Error, Invocation, TaskSupport, VersionSelector};

use super::{
    VERSION_META, completion, content, convert, disclosure, elicit, error, logging, progress, prompts, resources,
    resume, skills, subscriptions, tasks,
};
use crate::State;
use crate::auth::Caller;

/// Serves the engine's catalog over MCP.
#[derive(Debug, Clone)]
pub struct Handler {
    state: Arc<State>,
    /// Over stdio the client is the local process that started us: no HTTP auth applies.
    local: bool,
    /// This session's resource subscriptions (a fresh set per session: [`Handler::for_session`]).
    subscriptions: Arc<subscriptions::Subscriptions>,
    /// This session's log level (`logging/setLevel`).
    log_level: Arc<logging::Level>,
    /// The tools this session found with `search_tools` (issue #42.3).
    found: Arc<disclosure::Found>,
    /// The sessions' resumable request streams, with sessions on (`resume.rs`).
    streams: Option<Arc<resume::Streams>>,
}

impl Handler {
    /// A handler for MCP over HTTP, where the auth layer has identified the caller.
    pub fn new(state: Arc<State>) -> Self {
        Self {
            state,
            local: false,
            subscriptions: Arc::default(),
            log_level: Arc::default(),
            found: Arc::default(),
            streams: None,
        }
    }

    /// The same handler, letting go of long calls' connections in `streams` (sessions only).
    pub(crate) fn resumable_in(mut self, streams: Arc<resume::Streams>) -> Self {
        self.streams = Some(streams);
        self
    }

    /// This handler for a new session (or, stateless, a new request): its own subscriptions.
    pub fn for_session(&self) -> Self {
        Self {
            subscriptions: Arc::default(),
            log_level: Arc::default(),
            found: Arc::default(),
            ..self.clone()
        }
    }

    /// Whether updates can reach the client: over stdio, or with sessions.
    fn can_notify(&self) -> bool {
        self.local || self.state.config.mcp.sessions
    }

    /// A handler for MCP over stdio.
    pub fn local(state: Arc<State>) -> Self {
        Self {
            state,
            local: true,
            subscriptions: Arc::default(),
            log_level: Arc::default(),
            found: Arc::default(),
            streams: None,
        }
    }

    /// Who is calling, as every adapter says it; over stdio nobody, and everything is seen.
    fn call_context(&self, context: &RequestContext<RoleServer>) -> CallContext {
        if self.local {
            return CallContext {
                access: Access::All,
                ..CallContext::default()
            };
        }
        call_context(self.caller(context))
    }

    /// The caller the auth layer recorded for this request (none over stdio).
    fn caller<'c>(&self, context: &'c RequestContext<RoleServer>) -> Option<&'c Caller> {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
    }
}

impl Handler {
    /// Whose tasks this request may see: the caller the auth layer recorded (over stdio, the
    /// one local client).
    fn owner(&self, context: &RequestContext<RoleServer>) -> String {
        if self.local {
            return "local".to_owned();
        }
        self.caller(context)
            .map_or_else(|| "anonymous".to_owned(), |c| c.id.clone().into_owned())
    }

    /// Lets go of this call's connection after the time its tool's `release_after_ms` says,
    /// where the client can resume: a session's stream, with a client of 2025-11-25 or later
    /// (SEP-1699; an older client may not reconnect). Dropping the guard cancels it.
    fn release(&self, context: &RequestContext<RoleServer>, name: &str, access: &Access) -> Option<resume::Release> {
        let streams = self.streams.as_ref()?;
        let delay = self.state.engine.catalog().find_for(name, access)?.release_after?;
        let version = context.peer.peer_info()?.protocol_version.clone();
        if version.as_str() < rmcp::model::ProtocolVersion::V_2025_11_25.as_str() || per_request(context) {
            return None;
        }
        let parts = context.extensions.get::<axum::http::request::Parts>()?;
        let session = parts.headers.get("mcp-session-id")?.to_str().ok()?;
        Some(streams.release_after(session.into(), context.id.to_string(), delay))
    }

    /// The agents served as prompts here: at an agent's endpoint that agent, else the catalog's.
    fn agents(&self, catalog: &Arc<toolhost_core::Catalog>) -> Vec<Arc<toolhost_core::catalog::Agent>> {
        match &self.state.agent {
            Some(serving) => vec![Arc::clone(&serving.agent)],
            None => catalog.agents().to_vec(),
        }
    }
}

/// How one call's questions reach the client (`elicit.rs`).
enum Asking {
    /// 2026-07-28: input-required results; the state is bound to these bytes.
    Rounds(Arc<elicit::Rounds>, Vec<u8>),
    /// A session's client, asked directly; or a stateless one, which cannot be.
    Direct,
}

impl Handler {
    /// Sets how `call_context`'s questions reach the client, by the client's era.
    fn asking(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &str,
        call_context: &mut CallContext,
        request: &CallToolRequestParams,
    ) -> Result<Asking, ErrorData> {
        let capabilities = context.client_capabilities().unwrap_or_default();
        if per_request(context) {
            let binding = elicit::binding(tool, call_context.caller_subject.as_deref(), request.arguments.as_ref());
            let rounds = Arc::new(elicit::Rounds::open(
                &self.state.seal,
                &binding,
                capabilities,
                request.input_responses.clone(),
                // A confirmation's state is the approval's (`approval.rs`), not a question's.
                request
                    .request_state
                    .as_deref()
                    .filter(|s| !super::approval::is_sealed(s)),
            )?);
            call_context.ask = Some(Arc::clone(&rounds) as Arc<dyn toolhost_core::Ask>);
            return Ok(Asking::Rounds(rounds, binding));
        }
        call_context.ask = Some(if self.can_notify() {
            Arc::new(elicit::Session {
                peer: context.peer.clone(),
                capabilities,
            })
        } else {
            elicit::stateless()
        });
        Ok(Asking::Direct)
    }
}

/// Whether the request is of 2026-07-28 or later, whose metadata comes with each request and
/// whose questions are input-required results.
fn per_request(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

/// Why a stateless server keeps no subscriptions (the capability is not declared there).
fn no_subscriptions() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "resources/subscribe: this server is stateless and has no stream to send updates on; \
         re-read resources when their ttlMs runs out, use a server started with --mcp-sessions, \
         or protocol 2026-07-28's subscriptions/listen",
        None,
    )
}

/// What a call over MCP's HTTP transport runs with: the caller the auth layer recorded (none:
/// a caller who brings nothing and sees only public tools).
pub(super) fn call_context(caller: Option<&Caller>) -> CallContext {
    CallContext {
        access: caller.map_or_else(|| Access::Scopes(Arc::default()), |c| c.access.clone()),
        ..caller.map(Caller::context).unwrap_or_default()
    }
}

/// A `tools/call`: of `name` with `arguments`, at the version `pinned` names (the value of
/// `_meta."toolhost/version"`, if any), answered as a result or a JSON-RPC error. The handler
/// and the stateless fast path ([`super::fast`]) both answer through it, and so does a task's
/// run (`in_task`), where a fault of the server is an error rather than a tool error.
pub(super) async fn call(
    state: &State,
    context: CallContext,
    name: String,
    arguments: Option<rmcp::model::JsonObject>,
    pinned: Option<&serde_json::Value>,
    in_task: bool,
    doorway: super::approval::Doorway,
) -> Result<CallToolResponse, ErrorData> {
    if name == disclosure::SEARCH_TOOL && disclosure::of(state) == Disclosure::Search {
        return Ok(disclosure::search(state, &context, arguments.as_ref()).into());
    }
    let version = match pinned {
        None => VersionSelector::Latest,
        // The same forms as OTC's `@x` / `@x.y.z`; a bare number too, as JSON allows it.
        Some(v) => {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) if n.is_u64() => n.to_string(),
                other => other.to_string(),
            };
            match VersionSelector::pin(&text) {
                Ok(selector) => selector,
                Err(why) => return Ok(convert::failure(format!("`_meta.{VERSION_META}`: {why}")).into()),
            }
        }
    };
    let invocation = Invocation {
        tool: name,
        version,
        input: arguments.unwrap_or_default(),
        context,
    };
    let holds = doorway.mrtr && matches!(invocation.context.confirmation, Some(Presented::Id(_)));
    let deadline = tokio::time::Instant::now() + super::approval::hold();
    // Only a held retry needs the invocation again: every other call gives it away.
    let mut once = Some(invocation);
    let mut kept = None;
    loop {
        let attempt = match once.take() {
            Some(invocation) if holds => {
                kept = Some(invocation.clone());
                invocation
            }
            Some(invocation) => invocation,
            None => kept
                .clone()
                .unwrap_or_else(|| unreachable!("kept when the call may be held")),
        };
        match crate::calls::invoke(state, crate::calls::Protocol::Mcp, attempt).await {
            Ok(mut outcome) => {
                let output = std::mem::take(&mut outcome.output);
                return Ok(content::success(outcome.version(), output).into());
            }
            // A retry that presents a pending confirmation is held while the human decides
            // (the flow has the client retry right after consent), then answered.
            Err(Error::Confirmation { answer, .. })
                if holds && answer.status == ConfirmStatus::Pending && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            Err(Error::Confirmation { answer, .. }) => {
                return super::approval::answer(&state.seal, &answer, doorway);
            }
            Err(e) if in_task => return error::in_task(e).map(Into::into),
            Err(e) => return error::answer(e).map(Into::into),
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let info = Implementation::new(self.state.config.server_name.clone(), env!("CARGO_PKG_VERSION"));
        // An agent's endpoint (issue #33): its procedure is the server's instructions, and the
        // one prompt, so that clients show it to the model as the designer wrote it.
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_completions()
            .enable_skills()
            .build();
        tasks::declare(&mut capabilities);
        if self.can_notify()
            && disclosure::of(&self.state) == Disclosure::Search
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        // Subscriptions and log messages reach a 2026-07-28 client on its own streams
        // (`subscriptions/listen`, each request's response), stateless or not; an older client
        // is told of them only where it has a session ([`Handler::initialize`]).
        if let Some(resources) = capabilities.resources.as_mut() {
            resources.subscribe = Some(true);
        }
        capabilities.logging = Some(rmcp::model::JsonObject::default());
        if let Some(serving) = &self.state.agent {
            return ServerConfig::new(capabilities)
                .with_server_info(info)
                .with_instructions(serving.agent.procedure.clone());
        }
        ServerConfig::new(capabilities)
            .with_server_info(info)
            .with_instructions("Tools from a toolhost catalog. Arguments are checked against each tool's inputSchema; an error result says which argument to fix.")
    }

    /// The `initialize` of a client before 2026-07-28: without a session (stateless, over
    /// HTTP) there is no stream to send log messages or updates on between requests, so
    /// neither `logging` nor `subscribe` is declared to it.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if !self.can_notify() {
            result.capabilities.logging = None;
            if let Some(resources) = result.capabilities.resources.as_mut() {
                resources.subscribe = None;
            }
        }
        Ok(result)
    }

    /// `subscriptions/listen` (2026-07-28) accepts updates of resources; lists are read
    /// fresh (their `ttlMs`), so no `list_changed` is offered.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::default();
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .as_ref()
            .map(|uris| uris.iter().take(subscriptions::MAX_SUBSCRIPTIONS).cloned().collect());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = self.call_context(context.request_context());
        subscriptions::listen(&self.state.engine, caller, context).await;
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.call_context(&context);
        if disclosure::of(&self.state) == Disclosure::Search {
            let found = self.can_notify().then_some(&*self.found);
            let mut result = ListToolsResult::with_all_items(disclosure::listed(&self.state, &caller, found));
            result.cache_scope = Some(CacheScope::Private);
            return Ok(result);
        }
        let built = self.state.view::<super::Tools>();
        let tools = if matches!(caller.access, Access::All) && caller.meets_none() && !built.catalog.any_withdrawn() {
            built.view.listed()
        } else {
            built
                .catalog
                .tools()
                .iter()
                .filter(|t| t.listed_to(&caller))
                .filter_map(|t| built.view.get(&t.name).cloned())
                .collect()
        };
        let mut result = ListToolsResult::with_all_items(tools);
        // No `ttlMs` on tools: clients that honour it (rmcp's) would keep calling, pinning and
        // verifying against a listing a reload replaced, and a stateless server sends no
        // `list_changed`. What the tools are is read fresh each time.
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    /// The tool rmcp checks `Mcp-Param-*` headers against. A tool the caller may not see is
    /// unknown here too, so a header check cannot tell it apart from a tool that does not exist
    /// (issue #21.11); the caller is the one [`super::CALLER_ACCESS`] holds for this request.
    fn get_tool(&self, name: &str) -> Option<McpTool> {
        let searching = disclosure::of(&self.state) == Disclosure::Search;
        if searching && name == disclosure::SEARCH_TOOL {
            return Some(disclosure::search_tool().clone());
        }
        if !self.local {
            let access = super::CALLER_ACCESS
                .try_with(Clone::clone)
                .unwrap_or_else(|_| Access::Scopes(Arc::default()));
            self.state.engine.catalog().find_for(name, &access)?;
        }
        self.state.view::<super::Tools>().view.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp moves the request's `_meta` into the context.
        let pinned = request
            .meta
            .as_ref()
            .and_then(|m| m.0.get(VERSION_META))
            .or_else(|| context.meta.0.get(VERSION_META));
        let name = request.name.to_string();
        let searching = disclosure::of(&self.state) == Disclosure::Search;
        // A session knows only what it found (stateless clients may call anything listable).
        if searching && self.can_notify() && !disclosure::callable(&self.state, &self.found, &name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{name}` in this session: this server lists its tools by search; call `{}` with what you want to do, then call a tool it found",
                    disclosure::SEARCH_TOOL
                ),
                None,
            ));
        }
        let mut call_context = self.call_context(&context);
        let asking = self.asking(&context, &name, &mut call_context, &request)?;
        let doorway = super::approval::Doorway {
            mrtr: context
                .protocol_version()
                .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str()),
            url: context
                .client_capabilities()
                .map(|c| c.elicitation.is_some_and(|e| e.url.is_some())),
        };
        if super::approval::cancelled(request.request_state.as_deref(), request.input_responses.as_ref()) {
            return Ok(super::approval::cancelled_result().into());
        }
        let meta_id = request
            .meta
            .as_ref()
            .and_then(|m| m.0.get(super::CONFIRMATION_META))
            .or_else(|| context.meta.0.get(super::CONFIRMATION_META))
            .and_then(serde_json::Value::as_str);
        call_context.confirmation =
            super::approval::presented(&self.state.seal, request.request_state.as_deref(), meta_id, doorway)?;
        let support = tasks::support(&self.state, &name, &call_context.access);
        if support.mode.allowed() {
            let declared = context.client_capabilities().is_some_and(|c| c.supports_tasks());
            if declared {
                let owner = self.owner(&context);
                let first = match &asking {
                    Asking::Rounds(rounds, binding) if support.ask_first => Some((Arc::clone(rounds), binding.clone())),
                    Asking::Rounds(..) | Asking::Direct => None,
                };
                let run = tasks::Run {
                    context: call_context,
                    name,
                    arguments: request.arguments,
                    pinned: pinned.cloned(),
                    capabilities: context.client_capabilities().unwrap_or_default(),
                    first,
                };
                return tasks::start(&self.state, &owner, support.timeout, run).await;
            }
            if support.mode == TaskSupport::Required {
                return Err(tasks::required());
            }
        }
        let _release = self.release(&context, &name, &call_context.access);
        let started = std::time::Instant::now();
        // The level this request carries (2026-07-28, SEP-2575: messages go on the request's
        // own stream, so a stateless server sends them too), else the session's.
        let requested = context.meta.log_level().map(logging::Level::at);
        let level = match &requested {
            Some(level) => Some(level),
            // Nothing to relay, and no reporter to build, until the client sets a level.
            None => (self.can_notify() && self.log_level.is_set()).then_some(&*self.log_level),
        };
        let relay = progress::Relay {
            peer: &context.peer,
            token: context.meta.get_progress_token(),
            level,
            tool: &name,
        };
        let response = relay
            .run(&mut call_context, |call_context| {
                call(
                    &self.state,
                    call_context,
                    name.clone(),
                    request.arguments,
                    pinned,
                    false,
                    doorway,
                )
            })
            .await?;
        if searching
            && name == disclosure::SEARCH_TOOL
            && self.can_notify()
            && let CallToolResponse::Complete(result) = &response
            && self.found.record(result)
        {
            // The session's listing grew: say so, as MCP asks of a server that declares
            // `listChanged` (best effort: a client that went away misses nothing it needs).
            let _ = context.peer.notify_tool_list_changed().await;
        }
        if let Asking::Rounds(rounds, binding) = &asking
            && let CallToolResponse::Complete(result) = &response
        {
            if let Some(asked) = rounds.input_required(&self.state.seal, binding) {
                return Ok(CallToolResponse::InputRequired(asked));
            }
            // A question the client cannot be asked, without an answer of the tool's own.
            if result.is_error == Some(true)
                && let Some(capability) = rounds.missing()
            {
                return Err(elicit::missing_capability(capability));
            }
        }
        if let Some(level) = level
            && let CallToolResponse::Complete(result) = &response
        {
            level
                .call_outcome(&context.peer, &name, started.elapsed(), result)
                .await;
        }
        Ok(response)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        tasks::get(&self.state, &self.owner(&context), &request.task_id).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::update(
            &self.state,
            &self.owner(&context),
            &request.task_id,
            &request.input_responses,
        )
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(&self.state, &self.owner(&context), &request.task_id).await
    }

    #[allow(deprecated)] // MCP logging (SEP-2577)
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.can_notify() {
            return Err(logging::stateless());
        }
        self.log_level.set(request.level);
        Ok(())
    }

    // Prompts: the agents the caller may use (at an agent's endpoint, that agent alone);
    // resources: the catalog's documents, tools and agents; completion for both.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        Ok(prompts::list(
            self.agents(&catalog).iter(),
            &self.call_context(&context),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let catalog = self.state.engine.catalog();
        let caller = self.call_context(&context);
        let agents = self.agents(&catalog);
        let agent = agents
            .iter()
            .find(|a| a.name == request.name && a.allows(&caller.access))
            .ok_or_else(|| prompts::unknown(&request.name))?;
        let mut arguments = request.arguments.unwrap_or_default();
        // A 2026-07-28 client that can be asked is asked for the arguments it left out.
        let capabilities = context.client_capabilities().unwrap_or_default();
        if per_request(&context) && elicit::declared(&capabilities, toolhost_core::Capability::ElicitForm) {
            if let Some(answer) = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get(prompts::ARGUMENTS_KEY))
            {
                prompts::take_answer(agent, &mut arguments, answer);
            }
            if let Some(asked) = prompts::ask_missing(agent, &arguments) {
                return Ok(GetPromptResponse::InputRequired(asked));
            }
        }
        prompts::get(agent, &catalog, &caller, Some(arguments)).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        let caller = self.call_context(&context);
        let mut result = resources::list(&catalog, &caller);
        result
            .resources
            .extend(skills::resources(&self.agents(&catalog), &caller));
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        Ok(resources::templates(&catalog, &self.call_context(&context)))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let catalog = self.state.engine.catalog();
        let caller = self.call_context(&context);
        if request.uri.starts_with(skills::SCHEME) {
            let skill = skills::find(&self.agents(&catalog), &caller, &request.uri)
                .ok_or_else(|| resources::not_found(&request.uri))?;
            return Ok(resources::answer(skill.contents(), CacheScope::Private).into());
        }
        resources::read(&catalog, &caller, &request.uri).await.map(Into::into)
    }

    // Skills: the agents the caller may use, each a SKILL.md (SEP-2640).
    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        Ok(skills::list(&self.agents(&catalog), &self.call_context(&context)))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        skills::get(&self.agents(&catalog), &self.call_context(&context), &request.uri)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.can_notify() {
            return Err(no_subscriptions());
        }
        let caller = self.call_context(&context);
        self.subscriptions
            .subscribe(&self.state.engine, caller, context.peer.clone(), &request.uri)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.can_notify() {
            return Err(no_subscriptions());
        }
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        let agents = self.agents(&catalog);
        completion::complete(&catalog, agents.iter(), &self.call_context(&context), &request)
    }
}
