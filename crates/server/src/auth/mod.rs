//! Inbound authentication and per-tool access, for every protocol at once (issue #7).
//!
//! The middleware ([`crate::front`]) reads the caller's credentials — `OTC-API-Key: <key>` or
//! `Authorization: Bearer <api key or JWT>` — and puts a [`Caller`] in the request's extensions.
//! Adapters read it for the caller's [`Access`]: a tool the caller may not see is absent from
//! every listing and, when called, answers exactly as an unknown tool does.
//!
//! With no keys and no issuers configured, authentication is off and every caller sees
//! everything (the local default). Failures are 401 with `WWW-Authenticate`, in each protocol's
//! error shape; MCP's points at the protected-resource metadata (RFC 9728) as the MCP
//! authorization spec asks.

mod jwt;
mod keys;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::HeaderMap;
use toolhost_core::Access;

pub use jwt::{Issuer, KeySource, TokenPolicy};
pub use keys::{ApiKey, hash as hash_key};

/// Who is calling and what they may see.
#[derive(Debug, Clone)]
pub struct Caller {
    /// A stable id for limits and logs: `key:<name>`, `jwt:<iss>:<sub>`, or `anonymous`.
    pub id: std::borrow::Cow<'static, str>,
    /// The tools this caller may see and call.
    pub access: Access,
    /// The verified JWT the caller presented, which tools may forward on its behalf.
    pub token: Option<toolhost_core::Secret>,
    /// The JWT's `sub`, or the API key's name.
    pub subject: Option<String>,
    /// The verified JWT's claims, for templates (`{{caller.email}}`).
    pub claims: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    /// The secrets and tokens the operator grants this caller for tools' requirements.
    pub grants: Option<Arc<Grants>>,
}

/// What the operator grants one caller (`[[auth.callers]]`): values for tools'
/// `requirements.secrets` and `requirements.authorization`, met on every protocol as OTC's
/// `context` meets them (which wins where a call brings its own). `Debug` never shows a value.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// By requirement id.
    pub secrets: std::collections::HashMap<String, toolhost_core::Secret>,
    /// By provider id.
    pub authorization: std::collections::HashMap<String, toolhost_core::Secret>,
}

/// Who a grant is for: a JWT's subject within its issuer, or an API key by name (never mistaken
/// for each other).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Grantee {
    /// A verified JWT's `sub`, from the `[[auth.jwt]]` entry configured with this `issuer`
    /// (`None`: the entry without one). OIDC subjects are unique only within their issuer, so
    /// another tenant's `alice` is another grantee (issue #30.4).
    Subject {
        /// The verifying entry's configured `issuer`.
        issuer: Option<String>,
        /// The token's `sub`.
        subject: String,
    },
    /// A configured API key's name.
    ApiKey(String),
}

impl Caller {
    /// The caller when authentication is off: sees everything.
    pub fn anonymous() -> Self {
        Self {
            id: "anonymous".into(),
            access: Access::All,
            token: None,
            subject: None,
            claims: None,
            grants: None,
        }
    }

    fn with_scopes(id: String, scopes: BTreeSet<String>) -> Self {
        Self {
            id: id.into(),
            access: Access::Scopes(Arc::new(scopes)),
            token: None,
            subject: None,
            claims: None,
            grants: None,
        }
    }

    /// An API key's caller: its name is the subject; the key itself is never forwarded.
    fn of_key(key: &keys::ApiKey) -> Self {
        let mut caller = Self::with_scopes(format!("key:{}", key.name), key.scopes.clone());
        caller.subject = Some(key.name.clone());
        caller
    }

    /// The call context of this caller: what it may see, and who it is for tools that act on
    /// its behalf.
    pub fn context(&self) -> toolhost_core::CallContext {
        toolhost_core::CallContext {
            access: self.access.clone(),
            caller_token: self.token.clone(),
            caller_subject: self.subject.clone(),
            caller_claims: self.claims.clone(),
            user_id: self.end_user(),
            principal: Some(self.id.to_string()),
            secrets: self.grants.as_ref().map(|g| g.secrets.clone()).unwrap_or_default(),
            authorization: self
                .grants
                .as_ref()
                .map(|g| g.authorization.clone())
                .unwrap_or_default(),
            ..toolhost_core::CallContext::default()
        }
    }

    /// The end user a call is for, when the caller is one: a JWT's subject (an API key names a
    /// client, not a user). It meets a tool's `requirements.user_id` on every protocol; OTC's
    /// own `context.user_id` wins where it is given.
    pub fn end_user(&self) -> Option<String> {
        self.token.as_ref().and(self.subject.clone())
    }
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    /// The caller the auth layer recorded. A route outside that layer would have none; it then
    /// sees nothing, rather than everything.
    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Caller>().cloned().unwrap_or_else(|| Caller {
            id: "unauthenticated".into(),
            access: Access::Scopes(Arc::default()),
            token: None,
            subject: None,
            claims: None,
            grants: None,
        }))
    }
}

/// Checks credentials against the configured API keys and JWT issuers.
#[derive(Debug, Default)]
pub struct Authenticator {
    keys: Vec<ApiKey>,
    issuers: Vec<Issuer>,
    grants: std::collections::HashMap<Grantee, Arc<Grants>>,
    /// Provider ids of `requirements.authorization` that a caller's own verified JWT meets.
    token_authorization: Vec<String>,
    /// The scope that lets a caller read `/metrics` (`None`: [`OPERATOR_SCOPE`]).
    operator_scope: Option<String>,
    /// The audience and lifetime every JWT is held to (issue #31.4).
    policy: jwt::TokenPolicy,
}

/// The scope that lets a caller read what concerns every caller and every tool (`/metrics`:
/// hidden tools' names, other callers' outcomes) when no other is configured.
pub const OPERATOR_SCOPE: &str = "toolhost:operator";

/// Why a request's credentials were refused; the text goes to the caller, so it names no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No credentials were sent.
    Missing,
    /// The credentials were sent but are not valid.
    Invalid(String),
}

impl Authenticator {
    /// An authenticator for these keys and issuers.
    pub fn new(keys: Vec<ApiKey>, issuers: Vec<Issuer>) -> Self {
        Self {
            keys,
            issuers,
            grants: std::collections::HashMap::new(),
            token_authorization: Vec::new(),
            operator_scope: None,
            policy: jwt::TokenPolicy::default(),
        }
    }

    /// The same, with `scope` as the operator scope (see [`Authenticator::is_operator`]).
    #[must_use]
    pub fn with_operator_scope(mut self, scope: Option<String>) -> Self {
        self.operator_scope = scope;
        self
    }

    /// The scope operators hold.
    pub fn operator_scope(&self) -> &str {
        self.operator_scope.as_deref().unwrap_or(OPERATOR_SCOPE)
    }

    /// Whether `caller` may read what concerns every caller and tool (`/metrics`): everyone when
    /// authentication is off, else a caller holding the operator scope (issue #30.8).
    pub fn is_operator(&self, caller: &Caller) -> bool {
        match &caller.access {
            Access::All => true,
            Access::Scopes(scopes) => scopes.contains(self.operator_scope()),
        }
    }

    /// Holds every JWT to `policy`: a present `aud` checked against the public URL when the
    /// issuer configures no audience, and a longest lifetime.
    #[must_use]
    pub fn with_token_policy(mut self, policy: jwt::TokenPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The longest lifetime a JWT may have, when one is enforced.
    pub fn max_token_lifetime(&self) -> Option<std::time::Duration> {
        self.policy.max_lifetime
    }

    /// The same, granting callers secrets and tokens for tools' requirements, and meeting
    /// `requirements.authorization` of the `token_authorization` provider ids with the caller's
    /// own verified JWT.
    #[must_use]
    pub fn with_grants(
        mut self,
        grants: std::collections::HashMap<Grantee, Grants>,
        token_authorization: Vec<String>,
    ) -> Self {
        self.grants = grants.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
        self.token_authorization = token_authorization;
        self
    }

    /// Adds what the operator grants `caller` (see [`Authenticator::with_grants`]).
    fn grant(&self, mut caller: Caller, grantee: Option<Grantee>) -> Caller {
        let mapped = grantee.and_then(|g| self.grants.get(&g)).cloned();
        caller.grants = match (&caller.token, self.token_authorization.is_empty()) {
            (Some(token), false) => {
                let mut grants = mapped.as_deref().cloned().unwrap_or_default();
                for provider in &self.token_authorization {
                    grants
                        .authorization
                        .entry(provider.clone())
                        .or_insert_with(|| token.clone());
                }
                Some(Arc::new(grants))
            }
            _ => mapped,
        };
        caller
    }

    /// Whether API keys are configured.
    pub fn has_api_keys(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Whether JWT issuers are configured.
    pub fn has_issuers(&self) -> bool {
        !self.issuers.is_empty()
    }

    /// The issuers whose tokens are refused when they carry `aud`: no `audience` of their own,
    /// and no public URL to check it against (issue #31.4).
    pub fn issuers_refusing_aud(&self) -> Vec<String> {
        if self.policy.audience.is_some() {
            return Vec::new();
        }
        self.issuers
            .iter()
            .filter(|i| !i.has_audience())
            .map(|i| i.issuer().unwrap_or("(any issuer)").to_owned())
            .collect()
    }

    /// Whether any credential is required at all.
    pub fn enabled(&self) -> bool {
        !self.keys.is_empty() || !self.issuers.is_empty()
    }

    /// The issuers' identifiers, for the protected-resource metadata.
    pub fn issuer_urls(&self) -> Vec<String> {
        self.issuers
            .iter()
            .filter_map(|i| i.issuer().map(str::to_owned))
            .collect()
    }

    /// The JWKS URLs of the issuers, each with whether its keys are in hand (for `/readyz`),
    /// fetching each at most for `limit`.
    pub async fn check_jwks(&self, limit: std::time::Duration) -> Vec<(String, Result<(), String>)> {
        let checks = self.issuers.iter().filter_map(|issuer| {
            let url = issuer.jwks_url()?.to_owned();
            Some(async move {
                let result = tokio::time::timeout(limit, issuer.check())
                    .await
                    .unwrap_or_else(|_| Err(format!("no key set within {} s", limit.as_secs())));
                (url, result)
            })
        });
        futures_util::future::join_all(checks).await
    }

    /// Authenticates a request from its headers.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        if !self.enabled() {
            return Ok(Caller::anonymous());
        }
        let header = |name| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        let api_key = header("otc-api-key");
        let bearer = header("authorization").and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
        let of_key = |k: &ApiKey| self.grant(Caller::of_key(k), Some(Grantee::ApiKey(k.name.clone())));
        if let Some(key) = api_key {
            return keys::find(&self.keys, key)
                .map(of_key)
                .ok_or_else(|| Refusal::Invalid("the API key is not valid".to_owned()));
        }
        let Some(token) = bearer else {
            return Err(Refusal::Missing);
        };
        if let Some(k) = keys::find(&self.keys, token) {
            return Ok(of_key(k));
        }
        if self.issuers.is_empty() {
            return Err(Refusal::Invalid("the bearer token is not a valid API key".to_owned()));
        }
        jwt::verify(&self.issuers, &self.policy, token).await.map(|verified| {
            let mut caller = Caller::with_scopes(verified.id, verified.scopes);
            caller.token = Some(toolhost_core::Secret::new(token));
            caller.subject = verified
                .claims
                .get("sub")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            if let serde_json::Value::Object(map) = verified.claims {
                caller.claims = Some(Arc::new(map));
            }
            let grantee = caller.subject.clone().map(|subject| Grantee::Subject {
                issuer: verified.issuer,
                subject,
            });
            self.grant(caller, grantee)
        })
    }
}
