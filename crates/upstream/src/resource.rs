//! A federated resource (issue #39.5): one URI or template of an MCP upstream, imported into a
//! toolkit's `resources:` with a pin, read from the upstream when a client reads it.
//!
//! Before each read the upstream's resource listing (read at most once a [`LISTING_TTL`] per
//! upstream, and again after a reload) is compared with the pin, as a tool's is: a resource the
//! upstream changed (its name, title, description, media type) or no longer lists is
//! **withdrawn** — left out of listings once seen, every read failing with `upstream_changed`
//! or `upstream_missing`, logged at `warn` — until an operator re-imports it. What a read
//! gives is bounded (`max_response_bytes`) and scrubbed of the server's secrets: text has them
//! taken out, bytes holding one are not passed on at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use toolhost_client::resources::{Contents, Listed};
use toolhost_core::catalog::resource::Content;
use toolhost_core::{BoxFuture, ReadContents, ResourceReader, ToolFailure};

use crate::def::Def;
use crate::{LISTING_TTL, State, Upstream};

/// The most resources and templates of one upstream read for the pin check (as `import tools`).
pub const MAX_LISTED: usize = 1000;

/// The resource listing of an upstream, when it was read, and the reload count then.
pub(crate) type ResourceRead = (Instant, Arc<Listed>);

/// One imported resource or template.
#[derive(Debug)]
pub(crate) struct Reader {
    upstream: Arc<Upstream>,
    /// The upstream's URI or template.
    uri: String,
    template: bool,
    pin: String,
    max_bytes: usize,
    state: AtomicU8,
}

impl Reader {
    pub(crate) fn new(upstream: Arc<Upstream>, def: &Def, max_bytes: u64) -> Result<Self, Vec<String>> {
        let (uri, template) = match (&def.resource, &def.resource_template) {
            (Some(uri), None) if def.tool.is_empty() => (uri.clone(), false),
            (None, Some(template)) if def.tool.is_empty() => (template.clone(), true),
            _ => {
                return Err(vec![
                    "a federated resource gives exactly one of `resource` and `resource_template`, and no `tool`"
                        .to_owned(),
                ]);
            }
        };
        Ok(Self {
            upstream,
            uri,
            template,
            pin: def.pin.clone(),
            max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
            state: AtomicU8::new(State::Ok as u8),
        })
    }

    /// Judges the resource against `listed`, logging a change of standing.
    fn judge(&self, listed: &Listed) -> State {
        let found = listed
            .resources
            .iter()
            .find(|r| r.uri == self.uri && r.template == self.template);
        let state = match found {
            None => State::Missing,
            Some(r) if r.pin() != self.pin => State::Changed,
            Some(_) => State::Ok,
        };
        let before = State::from_u8(self.state.swap(state as u8, Ordering::Relaxed));
        if before != state {
            if state == State::Ok {
                tracing::info!(upstream = %self.upstream.shown, resource = %self.uri, "the upstream resource is as pinned again; served");
            } else {
                tracing::warn!(upstream = %self.upstream.shown, resource = %self.uri, state = state.name(), pinned = %self.pin, "an upstream resource is withdrawn: its reads fail until the upstream is back as pinned, or it is imported again (toolhost import tools)");
            }
        }
        state
    }

    /// The upstream's resource listing, read again when older than [`LISTING_TTL`] or after a
    /// reload.
    async fn listed(&self) -> Result<Arc<Listed>, ToolFailure> {
        let upstream = &self.upstream;
        let mut held = upstream.resources.lock().await;
        if let Some((at, listed)) = held.as_ref()
            && at.elapsed() < LISTING_TTL
            && !upstream.resources_stale.load(Ordering::SeqCst)
        {
            return Ok(Arc::clone(listed));
        }
        upstream.resources_stale.store(false, Ordering::SeqCst);
        let bearer = upstream.listing_token().await.map_err(|e| self.unavailable(&e))?;
        let listed = upstream
            .client
            .mcp_resources(&upstream.source, bearer.as_ref(), MAX_LISTED)
            .await
            .map_err(|e| self.unavailable(&e))?;
        let listed = Arc::new(listed);
        *held = Some((Instant::now(), Arc::clone(&listed)));
        Ok(listed)
    }

    fn unavailable(&self, error: &toolhost_client::Error) -> ToolFailure {
        let detail = self.upstream.scrubber.scrub(&crate::call::told(&self.upstream, error));
        tracing::warn!(upstream = %self.upstream.shown, resource = %self.uri, error = %detail, "reading an upstream resource failed");
        if matches!(error, toolhost_client::Error::McpError { .. }) && error.refused_unrun() {
            return ToolFailure::permanent("the service behind this resource refused to read it")
                .with_code("upstream_refused")
                .with_developer_message(detail);
        }
        ToolFailure::temporary(
            "the service behind this resource is unavailable; try again",
            Some(Duration::from_secs(1)),
        )
        .with_code("upstream_unavailable")
        .with_developer_message(detail)
    }

    async fn read_now(&self, uri: &str) -> Result<ReadContents, ToolFailure> {
        let listed = self.listed().await?;
        match self.judge(&listed) {
            State::Ok | State::Unreachable => {}
            State::Missing => {
                return Err(ToolFailure::temporary(
                    "the service behind this resource does not offer it at the moment; try again later",
                    Some(Duration::from_secs(60)),
                )
                .with_code("upstream_missing")
                .with_developer_message(format!("{} lists no resource `{}`", self.upstream.name, self.uri)));
            }
            State::Changed => {
                return Err(ToolFailure::permanent(
                    "this resource is unavailable: the service behind it changed it, and it must be reviewed before it is used again",
                )
                .with_code("upstream_changed")
                .with_developer_message(format!(
                    "{} changed the resource `{}` since it was pinned ({}); re-import it with `toolhost import tools`",
                    self.upstream.name, self.uri, self.pin
                )));
            }
        }
        let upstream = &self.upstream;
        let bearer = upstream.listing_token().await.map_err(|e| self.unavailable(&e))?;
        let read = upstream
            .client
            .read_resource(&upstream.source, bearer.as_ref(), uri, self.max_bytes)
            .await
            .map_err(|e| {
                upstream.resources_stale.store(true, Ordering::SeqCst);
                self.unavailable(&e)
            })?;
        let scrubber = &upstream.scrubber;
        read.into_iter()
            .map(|contents| match contents {
                Contents::Text { mime_type, text } => Ok((mime_type, Content::Text(scrubber.scrub(&text)))),
                Contents::Blob { mime_type, bytes } => {
                    // Bytes cannot be scrubbed without breaking them: holding a secret, they
                    // are not passed on.
                    let lossy = String::from_utf8_lossy(&bytes);
                    if scrubber.scrub(&lossy) != lossy {
                        tracing::warn!(upstream = %upstream.shown, resource = %uri, "an upstream resource's bytes held one of the server's secrets; not passed on");
                        return Err(ToolFailure::permanent("the service behind this resource answered with what may not be passed on")
                            .with_code("upstream_refused"));
                    }
                    Ok((mime_type, Content::Blob(bytes)))
                }
            })
            .collect()
    }
}

impl ResourceReader for Reader {
    fn read<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<ReadContents, ToolFailure>> {
        Box::pin(self.read_now(uri))
    }

    fn withdrawn(&self) -> Option<&'static str> {
        let state = State::from_u8(self.state.load(Ordering::Relaxed));
        state.withdraws().then(|| state.name())
    }
}
