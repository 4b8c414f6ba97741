//! `resources/subscribe` and `resources/unsubscribe` (docs/protocols.md §6): a session's
//! subscribed URIs, and after each catalog reload a `notifications/resources/updated` for each
//! whose contents changed (or that went away).
//!
//! `resources/subscribe` only where a notification can reach the client between requests: a
//! session (`--mcp-sessions`) or stdio; a stateless server tells an older client of no
//! `subscribe` and answers it method-not-found. One watcher task per subscribing session waits
//! on the engine's reloads and ends when the session is gone (its handler dropped) or a send
//! fails. A 2026-07-28 client's `subscriptions/listen` stream ([`listen`]) is the request
//! itself, so it needs no session.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::{
    ResourceContents, ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
};
use rmcp::service::{Peer, SubscriptionContext};
use rmcp::{ErrorData, RoleServer};
use toolhost_core::{CallContext, Engine};

use super::resources;

/// The most URIs one session may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// One session's subscriptions: each URI with the contents it had when last seen.
#[derive(Debug, Default)]
pub struct Subscriptions {
    uris: Mutex<BTreeMap<String, Option<ResourceContents>>>,
    watching: std::sync::atomic::AtomicBool,
}

impl Subscriptions {
    /// Subscribes to `uri`, which `caller` must be able to read now; starts the session's
    /// watcher on the first subscription.
    pub fn subscribe(
        self: &Arc<Self>,
        engine: &Arc<Engine>,
        caller: CallContext,
        peer: Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), ErrorData> {
        let catalog = engine.catalog();
        let now = resources::seen(&catalog, &caller, uri).ok_or_else(|| resources::not_found(uri))?;
        {
            let mut uris = self.uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains_key(uri) {
                return Err(ErrorData::invalid_params(
                    format!(
                        "a session subscribes to at most {MAX_SUBSCRIPTIONS} resources; unsubscribe from one first"
                    ),
                    None,
                ));
            }
            uris.insert(uri.to_owned(), Some(now));
        }
        if !self.watching.swap(true, std::sync::atomic::Ordering::AcqRel) {
            tokio::spawn(watch(Arc::downgrade(self), Arc::clone(engine), caller, peer));
        }
        Ok(())
    }

    /// Stops updates for `uri` (nothing happens when it was not subscribed).
    pub fn unsubscribe(&self, uri: &str) {
        self.uris
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(uri);
    }

    /// The subscribed URIs whose contents differ in the engine's catalog now, their contents
    /// updated to what was seen.
    fn changed(&self, engine: &Engine, caller: &CallContext) -> Vec<String> {
        let catalog = engine.catalog();
        let mut uris = self.uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut changed = Vec::new();
        for (uri, seen) in uris.iter_mut() {
            let now = resources::seen(&catalog, caller, uri);
            if now != *seen {
                *seen = now;
                changed.push(uri.clone());
            }
        }
        changed
    }
}

/// A `subscriptions/listen` stream (2026-07-28, stateless or not): after each reload, a
/// `notifications/resources/updated` for each accepted URI whose contents changed (or came or
/// went for `caller`); ends when the client cancels or closes the stream.
pub async fn listen(engine: &Arc<Engine>, caller: CallContext, context: SubscriptionContext) {
    let subscriptions = Subscriptions::default();
    {
        let catalog = engine.catalog();
        let mut uris = subscriptions
            .uris
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            let now = resources::seen(&catalog, &caller, uri);
            uris.insert(uri.clone(), now);
        }
    }
    let mut reloads = engine.reloads();
    loop {
        tokio::select! {
            () = context.cancelled() => return,
            changed = reloads.changed() => {
                if changed.is_err() {
                    return;
                }
                for uri in subscriptions.changed(engine, &caller) {
                    let update = ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri));
                    if context.sink().send(ServerNotification::ResourceUpdatedNotification(update)).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// After each reload, tells `peer` which subscribed resources changed; ends with the session.
async fn watch(subscriptions: Weak<Subscriptions>, engine: Arc<Engine>, caller: CallContext, peer: Peer<RoleServer>) {
    let mut reloads = engine.reloads();
    while reloads.changed().await.is_ok() {
        let Some(subscriptions) = subscriptions.upgrade() else {
            return;
        };
        for uri in subscriptions.changed(&engine, &caller) {
            if peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
            {
                return;
            }
        }
    }
}
