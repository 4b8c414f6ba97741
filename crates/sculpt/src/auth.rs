//! Outbound authentication: bearer tokens, basic auth, API keys in a header or the query, and
//! OAuth 2.0 client credentials (RFC 6749 §4.4) with the token cached and refreshed before it
//! expires.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use toolhost_core::{Secret, ToolFailure};

use crate::failure::{self, Scrubber};
use crate::reference::Scope;
use crate::send;
use crate::template::Template;

/// Cached tokens per distinct client credentials kept at most; past it the cache starts over.
const MAX_CACHED_TOKENS: usize = 1024;
/// The largest token endpoint answer read; a token response is a few hundred bytes.
const MAX_TOKEN_RESPONSE: u64 = 64 * 1024;
/// A token's lifetime when the endpoint gives none.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// The longest a token is kept, whatever `expires_in` says (a huge one would overflow).
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// One way to authenticate a step's request.
#[derive(Debug)]
pub(crate) enum Auth {
    Bearer(Template),
    Basic { username: Template, password: Template },
    Header { name: HeaderName, value: Template },
    Query { name: String, value: Template },
    OAuth2(OAuth2),
}

/// What applying auth adds to a request.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Query parameters to append.
    pub query: Vec<(String, String)>,
    /// The access token used, when OAuth 2.0 supplied one (to invalidate it on a 401).
    pub token: Option<Secret>,
}

impl Auth {
    /// Every template, for load-time dependency and secret checks.
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            Self::Bearer(t) | Self::Header { value: t, .. } | Self::Query { value: t, .. } => vec![t],
            Self::Basic { username, password } => vec![username, password],
            Self::OAuth2(o) => vec![&o.client_id, &o.client_secret],
        }
    }

    /// The OAuth 2.0 token endpoint, when this auth has one.
    pub fn token_url(&self) -> Option<&Url> {
        match self {
            Self::OAuth2(o) => Some(&o.token_url),
            _ => None,
        }
    }

    /// Adds credentials to `headers` (or returns query parameters), remembering every secret
    /// sent in `scrubber`.
    pub async fn apply(
        &self,
        client: &reqwest::Client,
        scope: &Scope<'_>,
        headers: &mut HeaderMap,
        scrubber: &mut Scrubber,
        deadline: Instant,
    ) -> Result<Applied, ToolFailure> {
        let mut applied = Applied::default();
        let text = |t: &Template| {
            t.text(scope, |s, out| out.push_str(s)).ok_or_else(|| {
                if t.references()
                    .any(|r| matches!(r, crate::reference::Reference::Caller { token: true }))
                {
                    // A tool that acts as the caller needs the caller's own token.
                    return missing_caller_token();
                }
                ToolFailure::permanent("the upstream credentials are not available for this call")
                    .with_code(failure::AUTH)
                    .with_developer_message(format!("an auth value refers to `{}`, which has no value", t.shape()))
            })
        };
        match self {
            Self::Bearer(token) => {
                let token = text(token)?;
                scrubber.add(&token);
                headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {token}"))?);
            }
            Self::Basic { username, password } => {
                let (user, password) = (text(username)?, text(password)?);
                let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                scrubber.add(&password);
                scrubber.add(&encoded);
                headers.insert(AUTHORIZATION, sensitive(&format!("Basic {encoded}"))?);
            }
            Self::Header { name, value } => {
                let value = text(value)?;
                scrubber.add(&value);
                headers.insert(name.clone(), sensitive(&value)?);
            }
            Self::Query { name, value } => {
                let value = text(value)?;
                scrubber.add(&value);
                applied.query.push((name.clone(), value));
            }
            Self::OAuth2(oauth) => {
                let token = oauth.token(client, scope, scrubber, deadline).await?;
                scrubber.add(token.expose());
                headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {}", token.expose()))?);
                applied.token = Some(token);
            }
        }
        Ok(applied)
    }

    /// Forgets `token` after the upstream refused it, so the next request fetches a new one.
    pub fn invalidate(&self, token: &Secret) {
        if let Self::OAuth2(oauth) = self {
            oauth.invalidate(token);
        }
    }
}

/// The failure of a tool that acts as the caller, called without the caller's token (an API
/// key, or no authentication): nothing is sent.
/// The failure of a call that acts for its caller but came without the caller's token.
pub fn missing_caller_token() -> ToolFailure {
    ToolFailure::permanent(
        "this tool acts on behalf of the calling user and needs their token: call it authenticated with a bearer token (a JWT this server accepts), not an API key",
    )
    .with_code("missing_caller_token")
}

/// A header value marked sensitive, so that http's `Debug` never shows it.
fn sensitive(text: &str) -> Result<HeaderValue, ToolFailure> {
    let mut value = HeaderValue::from_str(text).map_err(|_| {
        ToolFailure::permanent("the upstream credentials cannot be sent in a header")
            .with_code(failure::AUTH)
            .with_developer_message("a credential has characters not allowed in an HTTP header")
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// OAuth 2.0 client credentials and its token cache.
#[derive(Debug)]
pub(crate) struct OAuth2 {
    pub token_url: Url,
    pub client_id: Template,
    pub client_secret: Template,
    pub scopes: Vec<String>,
    pub params: Vec<(String, String)>,
    /// RFC 6749 §2.3.1: HTTP Basic (the default) or form fields.
    pub basic: bool,
    /// RFC 8693 token exchange of the caller's own token, instead of client credentials.
    pub exchange: bool,
}

/// Everything a token depends on: the endpoint, the client's id and secret (a caller's
/// `context.secrets` may differ per call, and one caller's token must never serve another), the
/// scopes and extra parameters. `Debug` never shows it.
#[derive(PartialEq, Eq, Hash)]
struct TokenKey {
    token_url: String,
    client_id: String,
    client_secret: String,
    scopes: Vec<String>,
    params: Vec<(String, String)>,
    /// The caller's token a token exchange swapped (empty for client credentials): one
    /// caller's exchanged token never serves another.
    subject: String,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(<redacted>)")
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Token>>>;

/// The store replicas share tokens through (`--state`), when there is one.
static SHARED: std::sync::OnceLock<Arc<dyn toolhost_core::SharedValues>> = std::sync::OnceLock::new();

/// How long a replica waits for the token another replica is fetching before fetching its own.
const SHARED_FETCH_WAIT: Duration = Duration::from_secs(3);

/// Shares this process's OAuth 2.0 tokens (client credentials and exchanged ones) with the
/// other replicas through `shared`: N replicas fetch one token, not N. Once per process.
pub fn share_tokens(shared: Arc<dyn toolhost_core::SharedValues>) {
    let _ = SHARED.set(shared);
}

impl TokenKey {
    /// The key in the shared store: a SHA-256 of everything the token depends on, so the
    /// store never sees the client secret or the caller's token.
    fn shared_key(&self) -> String {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        for part in [&self.token_url, &self.client_id, &self.client_secret, &self.subject]
            .into_iter()
            .chain(&self.scopes)
            .chain(self.params.iter().flat_map(|(k, v)| [k, v]))
        {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        let digest = toolhost_core::hex(&hasher.finalize());
        format!("toolhost:token:{digest}")
    }
}

/// A token another replica stored, while it is still fresh.
async fn from_shared(shared: &dyn toolhost_core::SharedValues, key: &str) -> Option<Token> {
    let stored = shared.get(key).await?;
    let (until, value) = stored.split_once(':')?;
    let left = until.parse::<u64>().ok()?.checked_sub(toolhost_core::unix_ms())?;
    (!value.is_empty() && left > 0).then(|| Token {
        value: Secret::new(value),
        refresh_at: Instant::now() + Duration::from_millis(left),
    })
}

/// The process's OAuth 2.0 tokens, shared by every tool and kept across catalog and config
/// reloads (issue #12.12): N tools with the same credentials fetch one token, not N.
fn tokens() -> &'static Mutex<HashMap<TokenKey, Slot>> {
    static TOKENS: std::sync::OnceLock<Mutex<HashMap<TokenKey, Slot>>> = std::sync::OnceLock::new();
    TOKENS.get_or_init(Mutex::default)
}

#[derive(Debug, Clone)]
struct Token {
    value: Secret,
    refresh_at: Instant,
}

impl OAuth2 {
    pub fn new(
        token_url: Url,
        client_id: Template,
        client_secret: Template,
        scopes: Vec<String>,
        params: Vec<(String, String)>,
        basic: bool,
    ) -> Self {
        Self {
            token_url,
            client_id,
            client_secret,
            scopes,
            params,
            basic,
            exchange: false,
        }
    }

    /// The same endpoint and client, exchanging the caller's token (RFC 8693).
    pub fn exchanging(mut self) -> Self {
        self.exchange = true;
        self
    }

    fn key(&self, id: &str, secret: &str, subject: &str) -> TokenKey {
        TokenKey {
            token_url: self.token_url.to_string(),
            client_id: id.to_owned(),
            client_secret: secret.to_owned(),
            scopes: self.scopes.clone(),
            params: self.params.clone(),
            subject: subject.to_owned(),
        }
    }

    fn slot(&self, key: TokenKey) -> Slot {
        let mut cache = tokens().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= MAX_CACHED_TOKENS && !cache.contains_key(&key) {
            cache.clear();
        }
        Arc::clone(cache.entry(key).or_default())
    }

    fn invalidate(&self, token: &Secret) {
        let slots: Vec<_> = {
            let cache = tokens().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            cache.iter().map(|(k, v)| (k.shared_key(), Arc::clone(v))).collect()
        };
        for (key, slot) in slots {
            if let Ok(mut held) = slot.try_lock()
                && held.as_ref().is_some_and(|t| &t.value == token)
            {
                *held = None;
                // The other replicas must not hand it out again either.
                if let Some(shared) = SHARED.get().cloned() {
                    tokio::spawn(async move { shared.put(&key, "", Duration::from_millis(1)).await });
                }
            }
        }
    }

    /// A valid token: the cached one, or a new one (one request at a time per credentials,
    /// however many calls wait for it).
    async fn token(
        &self,
        client: &reqwest::Client,
        scope: &Scope<'_>,
        scrubber: &mut Scrubber,
        deadline: Instant,
    ) -> Result<Secret, ToolFailure> {
        let missing = || {
            ToolFailure::permanent("the upstream credentials are not available for this call")
                .with_code(failure::AUTH)
                .with_developer_message("the OAuth 2.0 client id or secret has no value")
        };
        let id = self
            .client_id
            .text(scope, |s, out| out.push_str(s))
            .ok_or_else(missing)?;
        let secret = self
            .client_secret
            .text(scope, |s, out| out.push_str(s))
            .ok_or_else(missing)?;
        scrubber.add(&secret);
        let subject = if self.exchange {
            let Some(token) = scope.context.caller_token.as_ref() else {
                return Err(missing_caller_token());
            };
            scrubber.add(token.expose());
            token.expose().to_owned()
        } else {
            String::new()
        };
        self.cached(client, &id, &secret, &subject, scrubber, deadline).await
    }

    /// The cached token for these credentials (and exchanged `subject`), or a new one.
    async fn cached(
        &self,
        client: &reqwest::Client,
        id: &str,
        secret: &str,
        subject: &str,
        scrubber: &mut Scrubber,
        deadline: Instant,
    ) -> Result<Secret, ToolFailure> {
        let key = self.key(id, secret, subject);
        let shared = SHARED.get().map(|s| (Arc::clone(s), key.shared_key()));
        let slot = self.slot(key);
        let mut held = slot.lock().await;
        if let Some(token) = held.as_ref().filter(|t| Instant::now() < t.refresh_at) {
            return Ok(token.value.clone());
        }
        // Another replica may have one; if another is fetching it, wait for that one a little.
        if let Some((shared, key)) = &shared {
            if let Some(token) = from_shared(shared.as_ref(), key).await {
                *held = Some(token.clone());
                return Ok(token.value);
            }
            if !shared.claim(&format!("{key}:fetching"), SHARED_FETCH_WAIT).await {
                let until = Instant::now() + SHARED_FETCH_WAIT;
                while Instant::now() < until.min(deadline) {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    if let Some(token) = from_shared(shared.as_ref(), key).await {
                        *held = Some(token.clone());
                        return Ok(token.value);
                    }
                }
            }
        }
        let token = self.fetch(client, id, secret, subject, scrubber, deadline).await?;
        if let Some((shared, key)) = &shared {
            let left = token.refresh_at.saturating_duration_since(Instant::now());
            let until = toolhost_core::unix_ms() + left.as_millis() as u64;
            shared
                .put(key, &format!("{until}:{}", token.value.expose()), left)
                .await;
        }
        *held = Some(token.clone());
        Ok(token.value)
    }

    async fn fetch(
        &self,
        client: &reqwest::Client,
        id: &str,
        secret: &str,
        subject: &str,
        scrubber: &mut Scrubber,
        deadline: Instant,
    ) -> Result<Token, ToolFailure> {
        let mut form: Vec<(String, String)> = if self.exchange {
            vec![
                (
                    "grant_type".to_owned(),
                    "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
                ),
                ("subject_token".to_owned(), subject.to_owned()),
                (
                    "subject_token_type".to_owned(),
                    "urn:ietf:params:oauth:token-type:access_token".to_owned(),
                ),
            ]
        } else {
            vec![("grant_type".to_owned(), "client_credentials".to_owned())]
        };
        let scopes = self.scopes.join(" ");
        if !scopes.is_empty() {
            form.push(("scope".to_owned(), scopes));
        }
        form.extend(self.params.iter().cloned());
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::ACCEPT, HeaderValue::from_static("application/json"));
        if self.basic {
            let credentials = basic_credentials(id, secret);
            scrubber.add(&credentials);
            headers.insert(AUTHORIZATION, sensitive(&format!("Basic {credentials}"))?);
        } else {
            form.push(("client_id".to_owned(), id.to_owned()));
            form.push(("client_secret".to_owned(), secret.to_owned()));
        }
        let fail = |retryable: bool, detail: String| {
            let message = "the upstream service did not accept the server's credentials";
            let failure = if retryable {
                ToolFailure::temporary(
                    "the upstream sign-in failed; try again later",
                    Some(failure::DEFAULT_RETRY_AFTER),
                )
            } else {
                ToolFailure::permanent(message)
            };
            let detail = format!("{detail} (token endpoint {})", origin(&self.token_url));
            scrubber.failure(failure.with_code(failure::AUTH).with_developer_message(detail))
        };
        // The one send path of every upstream request: the same deadline, redirect rule and
        // body cap (a token endpoint cannot fill the server's memory).
        let request = send::Request {
            method: reqwest::Method::POST,
            url: self.token_url.clone(),
            headers,
            body: Some(send::Body::Form(form)),
        };
        let policy = send::Policy {
            retries: 0,
            idempotent: false,
            timeout: None,
            max_body: MAX_TOKEN_RESPONSE,
        };
        let (sent, _) = send::send(client, &request, policy, deadline).await;
        let (status, body) = match sent {
            Ok(answer) => (answer.status, answer.body),
            Err(send::Failure::Timeout) => return Err(fail(true, "the OAuth 2.0 token request timed out".to_owned())),
            Err(send::Failure::TooLarge { limit }) => {
                return Err(fail(
                    false,
                    format!("the OAuth 2.0 token endpoint's answer is larger than {limit} bytes"),
                ));
            }
            Err(send::Failure::Connect(e) | send::Failure::Transport(e) | send::Failure::Redirect(e)) => {
                return Err(fail(true, format!("the OAuth 2.0 token request failed: {e}")));
            }
        };
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            let detail = format!(
                "the OAuth 2.0 token endpoint answered {status}: {}",
                // Scrub before cutting, so a cut cannot leave part of a secret behind.
                failure::excerpt(&scrubber.scrub(&text), 300)
            );
            return Err(fail(status.is_server_error() || status.as_u16() == 429, detail));
        }
        let parsed: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let Some(access_token) = parsed.get("access_token").and_then(serde_json::Value::as_str) else {
            return Err(fail(
                false,
                "the OAuth 2.0 token endpoint answered without an `access_token`".to_owned(),
            ));
        };
        let lifetime = parsed
            .get("expires_in")
            .and_then(serde_json::Value::as_f64)
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(DEFAULT_LIFETIME, |s| {
                Duration::from_secs_f64(s.min(MAX_LIFETIME.as_secs_f64()))
            });
        // Refresh a tenth of the lifetime early (at most a minute), so a token never expires
        // while a request carrying it is on its way.
        let early = (lifetime / 10).min(Duration::from_secs(60));
        Ok(Token {
            value: Secret::new(access_token),
            refresh_at: Instant::now() + lifetime - early,
        })
    }
}

/// OAuth 2.0 tokens for calls that are not sculpted steps (an upstream tool server's): client
/// credentials, or an exchange of the caller's token (RFC 8693), with the same requests and the
/// same process-wide cache as a step's `auth: {oauth2: ...}` and `auth: {exchange: ...}`.
#[derive(Debug)]
pub struct TokenSource {
    oauth: OAuth2,
    client_id: String,
    client_secret: Secret,
}

impl TokenSource {
    /// Client credentials at `token_url` (HTTP Basic, RFC 6749 §2.3.1).
    pub fn client_credentials(token_url: Url, client_id: String, client_secret: Secret, scopes: Vec<String>) -> Self {
        let empty = Template::hole_free();
        Self {
            oauth: OAuth2::new(token_url, empty.clone(), empty, scopes, Vec::new(), true),
            client_id,
            client_secret,
        }
    }

    /// The caller's token exchanged at `token_url` (RFC 8693), per caller.
    pub fn exchange(token_url: Url, client_id: String, client_secret: Secret, scopes: Vec<String>) -> Self {
        let mut made = Self::client_credentials(token_url, client_id, client_secret, scopes);
        made.oauth.exchange = true;
        made
    }

    /// A valid token (cached until shortly before it expires); `caller_token` is what an
    /// exchange swaps. A failure never shows a secret.
    pub async fn token(
        &self,
        client: &reqwest::Client,
        caller_token: Option<&Secret>,
        deadline: Instant,
    ) -> Result<Secret, ToolFailure> {
        let mut scrubber = Scrubber::default();
        scrubber.add(self.client_secret.expose());
        let subject = match (self.oauth.exchange, caller_token) {
            (false, _) => "",
            (true, Some(token)) => {
                scrubber.add(token.expose());
                token.expose()
            }
            (true, None) => return Err(missing_caller_token()),
        };
        self.oauth
            .cached(
                client,
                &self.client_id,
                self.client_secret.expose(),
                subject,
                &mut scrubber,
                deadline,
            )
            .await
    }

    /// Forgets `token` (the upstream refused it), so the next call fetches another.
    pub fn invalidate(&self, token: &Secret) {
        self.oauth.invalidate(token);
    }
}

/// The client's credentials for HTTP Basic as RFC 6749 §2.3.1 asks: each of id and secret
/// encoded with `application/x-www-form-urlencoded` (Appendix B: letters, digits and `*-._`
/// as they are, a space as `+`, every other byte as `%XX`), joined by `:`, then Base64.
pub(crate) fn basic_credentials(id: &str, secret: &str) -> String {
    let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", encode(id), encode(secret)))
}

/// `scheme://host:port` of a URL, for messages: never its path or query, which may carry secrets.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::basic_credentials;

    #[test]
    fn basic_credentials_are_form_urlencoded_per_rfc_6749_appendix_b() {
        let decode = |b64: &str| {
            use base64::Engine as _;
            String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap()
        };
        assert_eq!(
            decode(&basic_credentials("my-app.prod_1", "s*cret")),
            "my-app.prod_1:s*cret"
        );
        assert_eq!(decode(&basic_credentials("a b", "p:w/d~é")), "a+b:p%3Aw%2Fd%7E%C3%A9");
        assert_eq!(
            decode(&basic_credentials("1f0e8c2a-7b1d-4e2f-9a3c-5d6e7f8a9b0c", "x")),
            "1f0e8c2a-7b1d-4e2f-9a3c-5d6e7f8a9b0c:x"
        );
    }
}
