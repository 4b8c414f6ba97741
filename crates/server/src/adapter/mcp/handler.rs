//! The rmcp `ServerHandler`: a cheap clone of the shared state, made per request in stateless
//! mode (DEPENDENCIES.md §3 gotcha 5).

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool as McpTool, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use toolhost_core::{Access, CallContext, Invocation, VersionSelector};

use super::{VERSION_META, completion, content, convert, error, logging, progress, prompts, resources, subscriptions};
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
}

impl Handler {
    /// A handler for MCP over HTTP, where the auth layer has identified the caller.
    pub fn new(state: Arc<State>) -> Self {
        Self {
            state,
            local: false,
            subscriptions: Arc::default(),
            log_level: Arc::default(),
        }
    }

    /// This handler for a new session (or, stateless, a new request): its own subscriptions.
    pub fn for_session(&self) -> Self {
        Self {
            subscriptions: Arc::default(),
            log_level: Arc::default(),
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
    /// The agents served as prompts here: at an agent's endpoint that agent, else the catalog's.
    fn agents(&self, catalog: &Arc<toolhost_core::Catalog>) -> Vec<Arc<toolhost_core::catalog::Agent>> {
        match &self.state.agent {
            Some(serving) => vec![Arc::clone(&serving.agent)],
            None => catalog.agents().to_vec(),
        }
    }
}

/// Why a stateless server keeps no subscriptions (the capability is not declared there).
fn no_subscriptions() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "resources/subscribe: this server is stateless and has no stream to send updates on; \
         re-read resources when their ttlMs runs out, or use a server started with --mcp-sessions",
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
/// and the stateless fast path ([`super::fast`]) both answer through it.
pub(super) async fn call(
    state: &State,
    context: CallContext,
    name: String,
    arguments: Option<rmcp::model::JsonObject>,
    pinned: Option<&serde_json::Value>,
) -> Result<CallToolResult, ErrorData> {
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
                Err(why) => return Ok(convert::failure(format!("`_meta.{VERSION_META}`: {why}"))),
            }
        }
    };
    let invocation = Invocation {
        tool: name,
        version,
        input: arguments.unwrap_or_default(),
        context,
    };
    match crate::calls::invoke(state, crate::calls::Protocol::Mcp, invocation).await {
        Ok(mut outcome) => {
            let output = std::mem::take(&mut outcome.output);
            Ok(content::success(outcome.version(), output))
        }
        Err(e) => error::answer(e),
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
            .build();
        if self.can_notify() {
            if let Some(resources) = capabilities.resources.as_mut() {
                resources.subscribe = Some(true);
            }
            capabilities.logging = Some(rmcp::model::JsonObject::default());
        }
        if let Some(serving) = &self.state.agent {
            return ServerConfig::new(capabilities)
                .with_server_info(info)
                .with_instructions(serving.agent.procedure.clone());
        }
        ServerConfig::new(capabilities)
            .with_server_info(info)
            .with_instructions("Tools from a toolhost catalog. Arguments are checked against each tool's inputSchema; an error result says which argument to fix.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let built = self.state.mcp.get(&self.state.engine);
        let caller = self.call_context(&context);
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
        if !self.local {
            let access = super::CALLER_ACCESS
                .try_with(Clone::clone)
                .unwrap_or_else(|_| Access::Scopes(Arc::default()));
            self.state.engine.catalog().find_for(name, &access)?;
        }
        self.state.mcp.get(&self.state.engine).view.get(name).cloned()
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
        let name = request.name.into_owned();
        let started = std::time::Instant::now();
        let relay = progress::Relay {
            peer: &context.peer,
            token: context.meta.get_progress_token(),
            // Nothing to relay, and no reporter to build, until the client sets a level.
            level: (self.can_notify() && self.log_level.is_set()).then_some(&*self.log_level),
            tool: &name,
        };
        let mut call_context = self.call_context(&context);
        let result = relay
            .run(&mut call_context, |call_context| {
                call(&self.state, call_context, name.clone(), request.arguments, pinned)
            })
            .await?;
        if self.can_notify() {
            self.log_level
                .call_outcome(&context.peer, &name, started.elapsed(), &result)
                .await;
        }
        Ok(result.into())
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
        prompts::get(agent, &catalog, &caller, request.arguments).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        Ok(resources::list(&catalog, &self.call_context(&context)))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let catalog = self.state.engine.catalog();
        Ok(resources::templates(&catalog))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let catalog = self.state.engine.catalog();
        resources::read(&catalog, &self.call_context(&context), &request.uri).map(Into::into)
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
