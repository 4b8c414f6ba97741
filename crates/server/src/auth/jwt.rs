//! Bearer JWTs: HS256 with a shared secret (OTC's scheme), RS256/ES256 with keys from a PEM
//! file, a JWKS file or a JWKS URL (fetched, cached, and fetched again on an unknown `kid` at a
//! bounded rate). Algorithms are pinned per issuer: the token's `alg` is only checked against
//! that list, never trusted. `exp` is required; so are `iss` and `aud` when configured. A JWKS
//! URL is fetched in a task of its own: no request with a known key waits for it, and no probe
//! or cancelled request cancels it.

use std::collections::BTreeSet;
use std::str::FromStr;
use std::time::{Duration, Instant};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::Refusal;

/// How long a fetched JWKS is trusted before it is fetched again.
const JWKS_TTL: Duration = Duration::from_secs(600);
/// At most one extra fetch per this interval when a token names an unknown `kid`, so forged
/// tokens cannot make the server hammer the key endpoint.
const REFETCH_INTERVAL: Duration = Duration::from_secs(30);
/// How long a request whose key is not in hand waits for a fetch of the key set.
const FETCH_WAIT: Duration = Duration::from_secs(10);
/// Clock skew tolerated on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 30;

/// What every issuer's tokens are held to beside their own settings (issue #31.4).
#[derive(Debug, Clone, Default)]
pub struct TokenPolicy {
    /// The audience a present `aud` must name when the issuer configures none: the server's
    /// public URL. With neither, a token that carries `aud` is refused (OTC: "if the aud claim
    /// is present, the server MUST validate it").
    pub audience: Option<String>,
    /// The longest a token may live (`exp` − `iat`, or `exp` − now without `iat`); `None`: not
    /// enforced (`serve` warns at start). OTC recommends short-lived tokens.
    pub max_lifetime: Option<Duration>,
}

/// One trusted token issuer.
pub struct Issuer {
    iss: Option<String>,
    aud: Option<String>,
    algorithms: Vec<Algorithm>,
    keys: Keys,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer")
            .field("iss", &self.iss)
            .field("aud", &self.aud)
            .field("algorithms", &self.algorithms)
            .finish_non_exhaustive()
    }
}

enum Keys {
    /// A shared secret or a public key from a PEM file: one key, whatever the `kid`.
    Single(DecodingKey),
    /// A key set from a file, by `kid`.
    Set(JwkSet),
    /// A key set from a URL, cached and fetched in the background.
    Remote(std::sync::Arc<Remote>),
}

/// A JWKS URL and what is known of it. Fetches run in their own task (issue #21.6): no lock is
/// held while the key endpoint answers, a request whose key is known never waits for one, and
/// nothing a request or a probe does can cancel a fetch half-way.
struct Remote {
    url: String,
    http: reqwest::Client,
    /// The last key set fetched.
    current: arc_swap::ArcSwapOption<Fetched>,
    /// When a fetch was last started, and whether one runs now.
    tried: std::sync::Mutex<(Option<Instant>, bool)>,
    /// Why the last fetch failed, if it did.
    error: std::sync::Mutex<Option<String>>,
    /// Bumped when a fetch ends, for those waiting on it.
    generation: tokio::sync::watch::Sender<u64>,
}

struct Fetched {
    set: JwkSet,
    at: Instant,
}

impl Remote {
    fn new(url: String, http: reqwest::Client) -> Self {
        Self {
            url,
            http,
            current: arc_swap::ArcSwapOption::empty(),
            tried: std::sync::Mutex::new((None, false)),
            error: std::sync::Mutex::new(None),
            generation: tokio::sync::watch::channel(0).0,
        }
    }

    fn fresh(&self) -> Option<std::sync::Arc<Fetched>> {
        self.current.load_full().filter(|f| f.at.elapsed() < JWKS_TTL)
    }

    /// Starts a fetch in the background unless one runs or was started within
    /// `REFETCH_INTERVAL` (so neither forged tokens nor a failing endpoint make the server
    /// hammer it). A receiver to wait on when a fetch runs now.
    fn refresh(self: &std::sync::Arc<Self>) -> Option<tokio::sync::watch::Receiver<u64>> {
        let receiver = self.generation.subscribe();
        let mut tried = self.tried.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if tried.1 {
            return Some(receiver);
        }
        if tried.0.is_some_and(|t| t.elapsed() < REFETCH_INTERVAL) {
            return None;
        }
        *tried = (Some(Instant::now()), true);
        drop(tried);
        let this = std::sync::Arc::clone(self);
        tokio::spawn(async move {
            let result = fetch(&this.http, &this.url).await;
            match result {
                Ok(set) => {
                    this.current.store(Some(std::sync::Arc::new(Fetched {
                        set,
                        at: Instant::now(),
                    })));
                    *this.error.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
                }
                Err(e) => {
                    tracing::warn!(url = %this.url, "failed to fetch the JWKS: {e}");
                    *this.error.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                }
            }
            this.tried.lock().unwrap_or_else(std::sync::PoisonError::into_inner).1 = false;
            this.generation.send_modify(|g| *g += 1);
        });
        Some(receiver)
    }

    /// Waits for the fetch `receiver` watches to end, at most `limit`.
    async fn wait(receiver: Option<tokio::sync::watch::Receiver<u64>>, limit: Duration) {
        if let Some(mut receiver) = receiver {
            let _ = tokio::time::timeout(limit, receiver.changed()).await;
        }
    }
}

/// Where an issuer's keys come from (one of them).
#[derive(Debug, Clone)]
pub enum KeySource {
    /// An HS256 shared secret.
    Secret(Vec<u8>),
    /// A PEM public key (RSA or EC) in a file.
    PemFile(std::path::PathBuf),
    /// A JWKS document in a file.
    JwksFile(std::path::PathBuf),
    /// A JWKS document at a URL.
    JwksUrl(String),
}

impl Issuer {
    /// An issuer from its settings; says what is wrong with them.
    pub fn new(
        iss: Option<String>,
        aud: Option<String>,
        algorithms: &[String],
        source: KeySource,
    ) -> Result<Self, String> {
        let name = iss.clone().unwrap_or_else(|| "(any issuer)".to_owned());
        if algorithms.is_empty() {
            return Err(format!(
                "issuer {name}: list the accepted `algorithms`, e.g. [\"RS256\"]; a token's own `alg` is never trusted"
            ));
        }
        let algorithms: Vec<Algorithm> = algorithms
            .iter()
            .map(|a| {
                Algorithm::from_str(a).map_err(|_| {
                    format!("issuer {name}: unknown algorithm `{a}`; use HS256, RS256, ES256 and the like")
                })
            })
            .collect::<Result<_, _>>()?;
        let hmac = |a: &Algorithm| matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512);
        let keys =
            match source {
                KeySource::Secret(secret) => {
                    if !algorithms.iter().all(hmac) {
                        return Err(format!(
                            "issuer {name}: a shared secret only verifies HS256/HS384/HS512"
                        ));
                    }
                    if secret.len() < 32 {
                        return Err(format!(
                            "issuer {name}: the HS256 secret has {} bytes; use at least 32",
                            secret.len()
                        ));
                    }
                    Keys::Single(DecodingKey::from_secret(&secret))
                }
                other => {
                    if algorithms.iter().any(hmac) {
                        return Err(format!(
                            "issuer {name}: HS* algorithms need a shared secret, not public keys; pin RS256/ES256 here"
                        ));
                    }
                    match other {
                        KeySource::PemFile(path) => {
                            let pem = std::fs::read(&path)
                                .map_err(|e| format!("issuer {name}: failed to read {}: {e}", path.display()))?;
                            let key = DecodingKey::from_rsa_pem(&pem)
                                .or_else(|_| DecodingKey::from_ec_pem(&pem))
                                .map_err(|_| {
                                    format!(
                                        "issuer {name}: {} is not an RSA or EC public key in PEM",
                                        path.display()
                                    )
                                })?;
                            Keys::Single(key)
                        }
                        KeySource::JwksFile(path) => {
                            let text = std::fs::read_to_string(&path)
                                .map_err(|e| format!("issuer {name}: failed to read {}: {e}", path.display()))?;
                            Keys::Set(serde_json::from_str(&text).map_err(|e| {
                                format!("issuer {name}: {} is not a JWKS document: {e}", path.display())
                            })?)
                        }
                        KeySource::JwksUrl(url) => {
                            let http = reqwest::Client::builder()
                                .timeout(Duration::from_secs(10))
                                .build()
                                .map_err(|e| e.to_string())?;
                            Keys::Remote(std::sync::Arc::new(Remote::new(url, http)))
                        }
                        KeySource::Secret(_) => unreachable!("handled above"),
                    }
                }
            };
        Ok(Self {
            iss,
            aud,
            algorithms,
            keys,
        })
    }

    /// The issuer's identifier, if configured.
    pub fn issuer(&self) -> Option<&str> {
        self.iss.as_deref()
    }

    /// Whether the issuer configures the audience its tokens must name.
    pub fn has_audience(&self) -> bool {
        self.aud.is_some()
    }

    fn validation(&self, alg: Algorithm, policy: &TokenPolicy) -> Validation {
        let mut v = Validation::new(alg);
        v.algorithms.clone_from(&self.algorithms);
        v.leeway = LEEWAY_SECS;
        v.validate_nbf = true;
        // A configured issuer or audience is required, not only checked when present: a token
        // without `aud` is not for this server (RFC 7519 §4.1.3, RFC 9068 §4; issue #21.5).
        let mut required = vec!["exp"];
        match &self.iss {
            Some(iss) => {
                v.set_issuer(&[iss]);
                required.push("iss");
            }
            None => v.iss = None,
        }
        // Without a configured audience a present `aud` is still validated (OTC): against the
        // public URL when there is one (with or without a trailing `/`), else it is refused.
        match (&self.aud, &policy.audience) {
            (Some(aud), _) => {
                v.set_audience(&[aud]);
                required.push("aud");
            }
            (None, Some(url)) => v.set_audience(&[
                url.trim_end_matches('/').to_owned(),
                format!("{}/", url.trim_end_matches('/')),
            ]),
            (None, None) => v.validate_aud = true,
        }
        v.set_required_spec_claims(&required);
        v
    }

    /// The key for a token's `kid`, fetching the JWKS again (rate-limited) if it is unknown.
    async fn key(&self, kid: Option<&str>) -> Result<DecodingKey, Refusal> {
        let from_set = |set: &JwkSet| -> Option<DecodingKey> {
            let jwk = match kid {
                Some(kid) => set.find(kid)?,
                None if set.keys.len() == 1 => set.keys.first()?,
                None => return None,
            };
            DecodingKey::from_jwk(jwk).ok()
        };
        let unknown = || Refusal::Invalid("the token's key (`kid`) is not one this server trusts".to_owned());
        match &self.keys {
            Keys::Single(key) => Ok(key.clone()),
            Keys::Set(set) => from_set(set).ok_or_else(unknown),
            Keys::Remote(remote) => {
                if let Some(key) = remote.fresh().and_then(|f| from_set(&f.set)) {
                    return Ok(key);
                }
                // Stale, or a key it does not have (a rotation): fetch in the background. A
                // known key, even from a stale set, serves at once (keys rotate slowly, and the
                // endpoint may be down); only a key not in hand waits for the fetch.
                let fetching = remote.refresh();
                let known = remote.current.load_full().and_then(|f| from_set(&f.set));
                if let Some(key) = known {
                    return Ok(key);
                }
                Remote::wait(fetching, FETCH_WAIT).await;
                remote
                    .current
                    .load_full()
                    .and_then(|f| from_set(&f.set))
                    .ok_or_else(unknown)
            }
        }
    }

    /// The URL of the issuer's key set, when it comes from one.
    pub(super) fn jwks_url(&self) -> Option<&str> {
        match &self.keys {
            Keys::Remote(remote) => Some(&remote.url),
            _ => None,
        }
    }

    /// For keys from a URL, for readiness: whether a fresh key set is in hand (fetching one, at
    /// the refetch rate, when it is not). Keys not from a URL are always in hand.
    pub(super) async fn check(&self) -> Result<(), String> {
        let Keys::Remote(remote) = &self.keys else {
            return Ok(());
        };
        if remote.fresh().is_none() {
            // The probe may wait for the fetch, or be cancelled: the fetch runs on regardless.
            Remote::wait(remote.refresh(), FETCH_WAIT).await;
        }
        let error = remote
            .error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match (remote.fresh(), error) {
            (Some(_), _) => Ok(()),
            (None, Some(e)) => Err(e),
            (None, None) => Err("no key set fetched yet".to_owned()),
        }
    }
}

async fn fetch(http: &reqwest::Client, url: &str) -> Result<JwkSet, String> {
    let response = http.get(url).send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    response.json::<JwkSet>().await.map_err(|e| e.to_string())
}

/// A token one of the configured issuers verified.
#[derive(Debug)]
pub(super) struct Verified {
    /// The caller id: `jwt:<iss>:<sub>`, the issuer as configured (see [`identity`]).
    pub id: String,
    pub scopes: BTreeSet<String>,
    pub claims: Value,
    /// The `issuer` of the `[[auth.jwt]]` entry whose key verified the token (`None`: an entry
    /// without one). Subjects are unique only within their issuer (OIDC Core §2), so grants are
    /// keyed on this and the subject, never on the subject alone (issue #30.4).
    pub issuer: Option<String>,
}

/// Verifies `token` against the issuers it may come from.
pub(super) async fn verify(issuers: &[Issuer], policy: &TokenPolicy, token: &str) -> Result<Verified, Refusal> {
    let malformed = || Refusal::Invalid("the bearer token is neither a known API key nor a well-formed JWT".to_owned());
    let header = jsonwebtoken::decode_header(token).map_err(|_| malformed())?;
    // The unverified `iss` only picks which issuer's keys to try; the signature decides.
    let claimed_iss = jsonwebtoken::dangerous::insecure_decode::<Value>(token)
        .ok()
        .and_then(|t| t.claims.get("iss").and_then(Value::as_str).map(str::to_owned));
    let mut last = Refusal::Invalid("the token's issuer is not one this server trusts".to_owned());
    for (index, issuer) in issuers
        .iter()
        .enumerate()
        .filter(|(_, i)| i.iss.is_none() || i.iss == claimed_iss)
    {
        if !issuer.algorithms.contains(&header.alg) {
            last = Refusal::Invalid(format!("tokens signed with {:?} are not accepted", header.alg));
            continue;
        }
        let key = match issuer.key(header.kid.as_deref()).await {
            Ok(key) => key,
            Err(e) => {
                last = e;
                continue;
            }
        };
        match jsonwebtoken::decode::<Value>(token, &key, &issuer.validation(header.alg, policy)) {
            Ok(data) => {
                if let Some(refusal) = too_long_lived(&data.claims, policy.max_lifetime) {
                    return Err(refusal);
                }
                let (id, scopes) = identity(
                    &data.claims,
                    (issuer.iss.is_none() && issuers.len() > 1).then_some(index),
                );
                return Ok(Verified {
                    id,
                    scopes,
                    claims: data.claims,
                    issuer: issuer.iss.clone(),
                });
            }
            Err(e) if *e.kind() == ErrorKind::InvalidAudience && issuer.aud.is_none() && policy.audience.is_none() => {
                last = Refusal::Invalid(
                    "the token names an audience (aud) and this server has none to check it against, so it is refused; the operator sets the issuer's `audience` ([[auth.jwt]]) or the server's `public_url`".to_owned(),
                );
            }
            Err(e) => last = Refusal::Invalid(describe(e.kind()).to_owned()),
        }
    }
    Err(last)
}

/// A refusal when `max` is set and the token lives longer: from `iat` (or now, without it) to
/// `exp`, beyond the clock-skew leeway.
fn too_long_lived(claims: &Value, max: Option<Duration>) -> Option<Refusal> {
    let max = max?;
    let exp = claims.get("exp").and_then(Value::as_u64)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let start = claims.get("iat").and_then(Value::as_u64).unwrap_or(now).min(now.max(1));
    let lifetime = exp.saturating_sub(start);
    (lifetime > max.as_secs() + LEEWAY_SECS).then(|| {
        Refusal::Invalid(format!(
            "the token lives {lifetime} s, longer than the {} s this server accepts (max_token_lifetime_secs); ask the issuer for a shorter-lived token",
            max.as_secs()
        ))
    })
}

/// What went wrong, in words that help a client and reveal nothing about keys.
fn describe(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidSignature => "the token's signature is not valid",
        ErrorKind::InvalidIssuer => "the token's issuer (iss) is not accepted",
        ErrorKind::InvalidAudience => "the token is not for this server (aud)",
        ErrorKind::MissingRequiredClaim(_) => "the token has no expiry (exp)",
        ErrorKind::InvalidAlgorithm => "the token's algorithm is not accepted",
        _ => "the token is not valid",
    }
}

/// The caller id, and the scopes granted by `scope` (space-separated) or `scp` (list or string).
/// A token verified by an entry without a configured `issuer` beside others (`unpinned`, its
/// index) may carry any `iss`, among them another entry's: its id names the entry, so it is
/// never mistaken for that issuer's caller (their `call_id` results, their rate bucket).
fn identity(claims: &Value, unpinned: Option<usize>) -> (String, BTreeSet<String>) {
    let text = |k: &str| claims.get(k).and_then(Value::as_str).unwrap_or("");
    let id = match unpinned {
        None => format!("jwt:{}:{}", text("iss"), text("sub")),
        Some(index) => format!("jwt#{index}:{}:{}", text("iss"), text("sub")),
    };
    let mut scopes = BTreeSet::new();
    for claim in ["scope", "scp"] {
        match claims.get(claim) {
            Some(Value::String(s)) => scopes.extend(s.split_whitespace().map(str::to_owned)),
            Some(Value::Array(items)) => scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned)),
            _ => {}
        }
    }
    (id, scopes)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use jsonwebtoken::{EncodingKey, Header};

    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{}/tests/fixtures/auth/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// A JWKS endpoint that answers at once, or after 3 s once `slow` is set.
    async fn jwks(slow: Arc<AtomicBool>) -> String {
        let body = fixture("jwks.json");
        let app = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let (body, slow) = (body.clone(), Arc::clone(&slow));
                async move {
                    if slow.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_secs(3)).await;
                    }
                    ([("content-type", "application/json")], body)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn token(kid: &str) -> String {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(kid.to_owned());
        let exp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 600;
        let claims = serde_json::json!({"iss": "https://rs.example", "sub": "alice", "exp": exp});
        let key = EncodingKey::from_rsa_pem(fixture("rsa-private.pem").as_bytes()).unwrap();
        jsonwebtoken::encode(&header, &claims, &key).unwrap()
    }

    /// Issue #30.4: a token verified by an entry without `issuer`, beside a pinned one, may
    /// claim the pinned issuer's `iss`; it is never taken for that issuer's caller.
    #[tokio::test]
    async fn an_unpinned_issuers_token_is_never_another_issuers_caller() {
        let (pinned, unpinned) = (
            "the-pinned-issuers-secret-of-32-bytes!",
            "the-unpinned-issuers-secret-32-bytes!!",
        );
        let issuers = [
            Issuer::new(
                Some("https://a.example".into()),
                None,
                &["HS256".into()],
                KeySource::Secret(pinned.into()),
            )
            .unwrap(),
            Issuer::new(None, None, &["HS256".into()], KeySource::Secret(unpinned.into())).unwrap(),
        ];
        let exp = toolhost_core::unix_ms() / 1000 + 600;
        let claims = serde_json::json!({"iss": "https://a.example", "sub": "alice", "exp": exp});
        let sign = |secret: &str| {
            jsonwebtoken::encode(
                &Header::new(Algorithm::HS256),
                &claims,
                &EncodingKey::from_secret(secret.as_bytes()),
            )
            .unwrap()
        };
        let real = verify(&issuers, &TokenPolicy::default(), &sign(pinned)).await.unwrap();
        assert_eq!(
            (real.id.as_str(), real.issuer.as_deref()),
            ("jwt:https://a.example:alice", Some("https://a.example"))
        );
        let posing = verify(&issuers, &TokenPolicy::default(), &sign(unpinned))
            .await
            .unwrap();
        assert_eq!(
            (posing.id.as_str(), posing.issuer),
            ("jwt#1:https://a.example:alice", None)
        );
    }

    /// Issue #21.6: while the key endpoint is slow, tokens with a known key are verified at
    /// once; a probe that gives up (is cancelled) does not cancel the fetch it started.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_key_endpoint_stalls_no_valid_caller_and_probes_cancel_no_fetch() {
        let slow = Arc::new(AtomicBool::new(false));
        let url = jwks(Arc::clone(&slow)).await;
        let issuer = Issuer::new(
            Some("https://rs.example".into()),
            None,
            &["RS256".into()],
            KeySource::JwksUrl(url),
        )
        .unwrap();
        let issuers = [issuer];
        assert!(
            verify(&issuers, &TokenPolicy::default(), &token("test-rsa"))
                .await
                .is_ok()
        );
        let Keys::Remote(remote) = &issuers[0].keys else {
            panic!("a JWKS URL")
        };
        // The set has gone stale and the endpoint has become slow.
        let set = remote.current.load_full().unwrap().set.clone();
        let long_ago = Instant::now().checked_sub(JWKS_TTL * 2).unwrap();
        remote.current.store(Some(Arc::new(Fetched { set, at: long_ago })));
        remote.tried.lock().unwrap().0 = long_ago.checked_add(Duration::from_secs(1));
        slow.store(true, Ordering::SeqCst);
        let generation = *remote.generation.borrow();

        // A readiness probe starts a fetch, then is cancelled.
        assert!(
            tokio::time::timeout(Duration::from_millis(50), issuers[0].check())
                .await
                .is_err()
        );
        let started = Instant::now();
        assert!(
            verify(&issuers, &TokenPolicy::default(), &token("test-rsa"))
                .await
                .is_ok()
        );
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "a known key waited {:?}",
            started.elapsed()
        );

        // The fetch the probe started finishes on its own.
        let mut receiver = remote.generation.subscribe();
        let finished = tokio::time::timeout(Duration::from_secs(8), receiver.wait_for(|g| *g > generation)).await;
        assert!(finished.is_ok(), "the fetch was cancelled with the probe");
        assert!(remote.fresh().is_some(), "the key set is fresh again");
    }
}
