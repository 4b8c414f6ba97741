//! toolhost-sculpt: the `http` backend kind, which sculpts one tool out of one or more upstream
//! HTTP calls (N-ACT §3.1.1 "tool sculpting").
//!
//! A catalog version says `backend: { kind: http, base_url, steps: [...], outputs: {...} }`.
//! Each step is one HTTP request built from the tool's inputs, secrets and earlier steps'
//! results; steps that do not depend on each other run in parallel; outputs pick fields by path
//! or compute them with jq (jaq). Everything is parsed, checked and compiled once, when the
//! catalog loads ([`Factory`] implements core's [`BackendFactory`]); a call only renders
//! compiled templates and runs compiled filters.
//!
//! Core knows no HTTP, so this crate is where reqwest lives; the `toolhost` binary registers
//! [`Factory`] on its loader under the kind `http`.

mod auth;
mod build;
mod config;
mod failure;
mod jq;
mod lint;
mod multipart;
pub mod reason;
mod reference;
mod run;
pub mod secrets;
mod send;
mod style;
mod template;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use toolhost_core::{Backend, BackendFactory, Secret, Signature};

pub use auth::{TokenSource, missing_caller_token, share_tokens};
pub use failure::Scrubber;
pub use run::TRY;
pub use secrets::SecretSource;

/// The kind name the `toolhost` binary registers this backend under.
pub const KIND: &str = "http";

/// The default largest upstream response body, when a backend sets no `max_response_bytes`.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1024 * 1024;

/// Why a [`Factory`] could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The HTTP client could not be built (e.g. the TLS roots could not be loaded).
    #[error("failed to build the HTTP client for sculpted tools: {0}")]
    Client(String),
}

/// The factory of `kind: http` backends: holds the shared HTTP client, the server's secrets and
/// the jq runner, and compiles each catalog version's `backend:` block into a backend.
#[derive(Clone)]
pub struct Factory {
    shared: Arc<Shared>,
    check_secrets: bool,
    dry_run: bool,
    /// The server secret names read by the backends built while `check_secrets` is off.
    unchecked: Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

/// What every backend built by one factory shares.
pub(crate) struct Shared {
    pub client: reqwest::Client,
    pub jq: jq::Runner,
    /// The server's secrets: what templates may name.
    pub secrets: HashMap<String, Secret>,
}

impl std::fmt::Debug for Factory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.shared.secrets.keys().collect();
        names.sort();
        f.debug_struct("Factory")
            .field("secrets", &names)
            .field("check_secrets", &self.check_secrets)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl Factory {
    /// A factory whose backends may use `secrets` (the server's `[secrets]`, resolved).
    pub fn new(secrets: HashMap<String, Secret>) -> Result<Self, Error> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
            .redirect(send::redirect_policy())
            // Steps bound their own time; this only stops a dead peer from holding a socket.
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Client(e.without_url().to_string()))?;
        Ok(Self::with_client(client, secrets))
    }

    /// A factory using this HTTP client (for tests and benchmarks that compare against it).
    pub fn with_client(client: reqwest::Client, secrets: HashMap<String, Secret>) -> Self {
        Self {
            shared: Arc::new(Shared {
                client,
                jq: jq::Runner::new(),
                secrets,
            }),
            check_secrets: true,
            dry_run: false,
            unchecked: Arc::default(),
        }
    }

    /// A factory for `toolhost check`, which has no server config: `{{secret.NAME}}` is not
    /// checked against the server's secrets (every other rule is).
    pub fn for_checking() -> Result<Self, Error> {
        let mut factory = Self::new(HashMap::new())?;
        factory.check_secrets = false;
        Ok(factory)
    }

    /// Backends of this factory send only GET and HEAD requests; any other step stops the call
    /// before it is sent (`toolhost try --dry-run`).
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// The server secrets (`{{secret.NAME}}`) the backends built so far read, when their names
    /// are not checked ([`Factory::for_checking`]): what a config's `[secrets]` must give.
    pub fn unchecked_secrets(&self) -> Vec<String> {
        self.unchecked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The HTTP client every backend of this factory sends with.
    pub fn client(&self) -> &reqwest::Client {
        &self.shared.client
    }
}

impl BackendFactory for Factory {
    fn build(&self, config: &Map<String, Value>, signature: &Signature<'_>) -> Result<Arc<dyn Backend>, Vec<String>> {
        let def = config::parse(config)?;
        if !self.check_secrets {
            let mut read = secrets::referenced(config.values());
            read.retain(|name| !signature.requirements.secrets.contains(name));
            self.unchecked
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(read);
        }
        let secrets = build::SecretNames {
            server: &self.shared.secrets,
            check: self.check_secrets,
        };
        let warnings = lint::warnings(&def);
        let mut recipe = build::recipe(def, signature, &secrets)?;
        recipe.warnings = warnings;
        Ok(Arc::new(run::Sculpted::new(
            recipe,
            Arc::clone(&self.shared),
            self.dry_run,
        )))
    }
}
