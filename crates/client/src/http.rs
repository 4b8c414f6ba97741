//! HTTP for every protocol: one guarded reqwest client, bounded bodies, the catalog cache.

use std::time::{Duration, SystemTime};

use http::header::{ACCEPT, CACHE_CONTROL, HeaderMap, RETRY_AFTER};
use http_cache_semantics::{AfterResponse, BeforeRequest, CacheOptions, CachePolicy};
use serde_json::Value;
use url::Url;

use crate::cache::{Cache, Entry};
use crate::error::Error;
use crate::guard::Guard;
use crate::text;

/// Whether a catalog `GET` may be answered from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// A fresh cached response is used without a request; a stale one is revalidated.
    Cached,
    /// Always ask the server, conditionally when something is cached (for `verify`).
    Revalidate,
}

/// An HTTP answer with its body read (within the limit).
#[derive(Debug)]
pub(crate) struct Reply {
    pub url: Url,
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| format!("the body is not JSON ({e})"))
    }

    /// The body as a short, cleaned line of text, for error messages.
    pub fn snippet(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        if text.trim().is_empty() {
            return "(no body)".to_owned();
        }
        // A web page's markup says nothing a user can act on.
        let html = self
            .headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/html"));
        if html || text.trim_start().starts_with('<') {
            return "a web page, not a tool protocol's answer".to_owned();
        }
        text::one_line(&text, 300)
    }

    /// `Retry-After` as a delay: seconds, or an HTTP date.
    pub fn retry_after(&self) -> Option<Duration> {
        retry_after(&self.headers)
    }
}

/// `Retry-After` of `headers` as a delay: seconds, or an HTTP date.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or_default())
}

/// The HTTP side of a client.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    /// For calls (`POST`): a redirect to another origin is refused, whatever the credentials.
    /// A 307/308 would send the call's body there, OTC's `context` (secrets, authorization
    /// tokens) with it (issue #30.9).
    calls: reqwest::Client,
    guard: Guard,
    cache: Option<Cache>,
    max_body: usize,
    /// Headers for the servers the caller named (see [`crate::Options::headers`]).
    credentials: HeaderMap,
    /// Headers by URL prefix (see [`crate::Options::server_headers`]).
    by_prefix: Vec<(String, HeaderMap)>,
    /// The per-request timeout the clients were built with.
    timeout: Duration,
}

/// A reqwest client that connects only where `guard` allows, with no proxy from the
/// environment (a proxy would connect on our behalf, past the guard).
fn build(guard: &Guard, timeout: Duration, redirect: reqwest::redirect::Policy) -> Result<reqwest::Client, Error> {
    reqwest::Client::builder()
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(guard.clone()))
        .redirect(redirect)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .timeout(timeout)
        .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::Setup(chain(&e)))
}

impl Http {
    /// A client that connects only where `guard` allows, with no proxy from the environment
    /// (a proxy would connect on our behalf, past the guard).
    pub fn new(guard: Guard, cache: Option<Cache>, timeout: Duration, max_body: usize) -> Result<Self, Error> {
        Self::with_credentials(guard, cache, timeout, max_body, &[], &[])
    }

    /// [`Http::new`], sending `headers` to the servers the caller named. With credentials, a
    /// redirect to another origin is refused: it would carry them there, or drop them and fail
    /// in a confusing way.
    pub fn with_credentials(
        guard: Guard,
        cache: Option<Cache>,
        timeout: Duration,
        max_body: usize,
        headers: &[(String, String)],
        servers: &[(Url, Vec<(String, String)>)],
    ) -> Result<Self, Error> {
        let credentials = header_map(headers)?;
        let by_prefix = servers
            .iter()
            .map(|(prefix, headers)| Ok((prefix.to_string(), header_map(headers)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let same_origin = !(credentials.is_empty() && by_prefix.is_empty());
        let redirect = if same_origin {
            guard.redirect_policy_same_origin()
        } else {
            guard.redirect_policy()
        };
        let client = build(&guard, timeout, redirect)?;
        // Calls never follow a redirect to another origin; with credentials the client above
        // already does not, and one client shares its connections.
        let calls = if same_origin {
            client.clone()
        } else {
            build(&guard, timeout, guard.redirect_policy_same_origin())?
        };
        Ok(Self {
            client,
            calls,
            guard,
            cache,
            max_body,
            credentials,
            by_prefix,
            timeout,
        })
    }

    /// This client, following no redirect at all: a 3xx comes back as the answer, for a caller
    /// that follows hops itself (the conformance checker counts each one as a request and
    /// decides where a body may be sent again).
    pub fn without_redirects(self) -> Result<Self, Error> {
        let client = build(&self.guard, self.timeout, reqwest::redirect::Policy::none())?;
        Ok(Self {
            calls: client.clone(),
            client,
            ..self
        })
    }

    /// The credentials for `url`: the caller's headers when it named that server, and those
    /// of the servers file entry whose prefix it is under; else none.
    pub fn credentials_for(&self, url: &Url) -> HeaderMap {
        let mut out = if !self.credentials.is_empty() && self.guard.policy().trusts(url) {
            self.credentials.clone()
        } else {
            HeaderMap::new()
        };
        if let Some(headers) = self.server_entry(url) {
            for (name, value) in headers {
                out.insert(name.clone(), value.clone());
            }
        }
        out
    }

    /// The headers of the servers file entry whose prefix `url` is under (the longest).
    fn server_entry(&self, url: &Url) -> Option<&HeaderMap> {
        let text = url.as_str();
        self.by_prefix
            .iter()
            .filter(|(prefix, _)| text.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, headers)| headers)
    }

    /// Whether `url` is at a server the user named: the origin of a URL they gave (their
    /// source, the upstream a catalog names), or under a servers file entry. Credentials go
    /// only there; an address a server advertised (a WoA `transports.rest.base` or MCP `server`,
    /// a lockfile entry) elsewhere gets none (issue #30.9).
    fn named_by_user(&self, url: &Url) -> bool {
        self.guard.policy().trusts(url) || self.server_entry(url).is_some()
    }

    /// [`Http::credentials_for`], with a per-call `bearer` in place of the client's own
    /// credentials (its `Authorization` and `OTC-API-Key`): the call is the bearer's, not the
    /// client's. The bearer (a caller's forwarded or exchanged token, an OAuth token fetched
    /// for the upstream) is held to the same origins as the client's own credentials: a
    /// document that points a transport at another host does not receive it.
    pub fn credentials_with(&self, url: &Url, bearer: Option<&toolhost_core::Secret>) -> Result<HeaderMap, Error> {
        let mut headers = self.credentials_for(url);
        if let Some(bearer) = bearer {
            headers.remove("otc-api-key");
            if self.named_by_user(url) {
                headers.insert(http::header::AUTHORIZATION, bearer_value(bearer)?);
            } else {
                tracing::debug!(%url, "the call's token is not sent: this address is not at the server it is for");
                headers.remove(http::header::AUTHORIZATION);
            }
        }
        Ok(headers)
    }

    /// The reqwest client, for rmcp's streamable HTTP transport (same guard, same limits).
    pub fn reqwest(&self) -> &reqwest::Client {
        &self.client
    }

    /// The guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// `GET url` for a catalog, through the cache; with a `bearer` (a per-call token, see
    /// `CallContext::bearer`) it goes as the `Authorization`, and the cache is not used (one
    /// token's answer never serves another).
    pub async fn get(
        &self,
        url: &Url,
        freshness: Freshness,
        bearer: Option<&toolhost_core::Secret>,
    ) -> Result<Reply, Error> {
        if bearer.is_some() {
            return self.get_fresh(url, bearer).await;
        }
        self.guard.check_url(url).await?;
        let mut builder = http::Request::get(url.as_str()).header(ACCEPT, "application/json");
        if freshness == Freshness::Revalidate {
            builder = builder.header(CACHE_CONTROL, "no-cache");
        }
        let (request, ()) = builder
            .body(())
            .map_err(|e| Error::Setup(format!("failed to build a request for {url}: {e}")))?
            .into_parts();
        let cached = match &self.cache {
            Some(cache) => cache.load(url.as_str()).await,
            None => None,
        };
        let mut headers = request.headers.clone();
        headers.remove(CACHE_CONTROL);
        if let Some(entry) = &cached {
            match entry.policy.before_request(&request, SystemTime::now()) {
                BeforeRequest::Fresh(parts) => {
                    tracing::debug!(%url, "catalog answered from the cache");
                    return Ok(Reply {
                        url: url.clone(),
                        status: parts.status.as_u16(),
                        headers: parts.headers,
                        body: entry.body.clone().into_bytes(),
                    });
                }
                BeforeRequest::Stale {
                    request: revalidate, ..
                } => {
                    headers = revalidate.headers;
                    headers.remove(CACHE_CONTROL);
                }
            }
        }
        let reply = self
            .send(
                self.client
                    .get(url.clone())
                    .headers(headers)
                    .headers(self.credentials_for(url)),
                url,
            )
            .await?;
        let (response, ()) = {
            let mut builder = http::Response::builder().status(reply.status);
            if let Some(h) = builder.headers_mut() {
                *h = reply.headers.clone();
            }
            builder
                .body(())
                .map_err(|e| Error::Setup(format!("failed to read the answer of {url}: {e}")))?
                .into_parts()
        };
        let now = SystemTime::now();
        if reply.status == 304
            && let Some(entry) = cached
            && let AfterResponse::NotModified(policy, parts) = entry.policy.after_response(&request, &response, now)
        {
            tracing::debug!(%url, "catalog not modified");
            let refreshed = Entry { policy, ..entry };
            if let Some(cache) = &self.cache {
                cache.store(&refreshed).await;
            }
            return Ok(Reply {
                url: url.clone(),
                status: parts.status.as_u16(),
                headers: parts.headers,
                body: refreshed.body.into_bytes(),
            });
        }
        if reply.status == 200
            && let Some(cache) = &self.cache
        {
            let options = CacheOptions {
                shared: false,
                ..CacheOptions::default()
            };
            let policy = CachePolicy::new_options(&request, &response, now, options);
            if policy.is_storable()
                && let Ok(body) = String::from_utf8(reply.body.clone())
            {
                cache
                    .store(&Entry {
                        url: url.to_string(),
                        policy,
                        body,
                    })
                    .await;
            }
        }
        Ok(reply)
    }

    /// `GET url` past the cache (neither read nor written), with the credentials for `url`
    /// and `bearer` as the `Authorization` when given: an answer that changes from one
    /// request to the next (a confirmation's result URI), or one token's own.
    pub async fn get_fresh(&self, url: &Url, bearer: Option<&toolhost_core::Secret>) -> Result<Reply, Error> {
        self.guard.check_url(url).await?;
        let headers = self.credentials_with(url, bearer)?;
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, "application/json")
            .headers(headers);
        self.send(request, url).await
    }

    /// `POST url` with a JSON body; `timeout` bounds the whole exchange. `bearer`, when given,
    /// is this request's `Authorization` (in place of the client's own).
    pub async fn post_json(
        &self,
        url: &Url,
        body: &Value,
        timeout: Duration,
        bearer: Option<&toolhost_core::Secret>,
    ) -> Result<Reply, Error> {
        self.guard.check_url(url).await?;
        let headers = self.credentials_with(url, bearer)?;
        let request = self
            .calls
            .post(url.clone())
            .header(ACCEPT, "application/json, application/problem+json")
            .headers(headers)
            .json(body)
            .timeout(timeout);
        self.send(request, url).await
    }

    pub(crate) async fn send(&self, request: reqwest::RequestBuilder, url: &Url) -> Result<Reply, Error> {
        let transport = |e: reqwest::Error| transport_error(url, &e);
        let mut response = request.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let final_url = response.url().clone();
        if response.content_length().is_some_and(|n| n > self.max_body as u64) {
            return Err(too_large(url, self.max_body));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > self.max_body {
                return Err(too_large(url, self.max_body));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply {
            url: final_url,
            status,
            headers,
            body,
        })
    }
}

/// `Bearer TOKEN`, marked sensitive; a token that cannot be a header value is a setup error
/// that never shows it.
pub(crate) fn bearer_value(token: &toolhost_core::Secret) -> Result<http::header::HeaderValue, Error> {
    let mut value = http::header::HeaderValue::from_str(&format!("Bearer {}", token.expose()))
        .map_err(|_| Error::Setup("the bearer token has characters a header cannot carry".to_owned()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// Header names and values as a map, values marked sensitive; a bad one is a setup error that
/// names the header, never its value.
fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, Error> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = http::header::HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| Error::Setup(format!("`{}` is not a valid header name", text::one_line(name, 80))))?;
        let mut value = http::header::HeaderValue::from_str(value.trim()).map_err(|_| {
            Error::Setup(format!(
                "the value of header `{name}` has characters a header cannot carry"
            ))
        })?;
        value.set_sensitive(true);
        map.append(name, value);
    }
    Ok(map)
}

fn too_large(url: &Url, max: usize) -> Error {
    Error::Transport {
        url: url.to_string(),
        message: format!("the answer is larger than {max} bytes; refusing to read it"),
        connect: false,
    }
}

/// A reqwest error as ours: a refusal by the guard's resolver or redirect policy is a
/// [`Error::Refused`], whatever layer reported it.
pub(crate) fn transport_error(url: &Url, e: &reqwest::Error) -> Error {
    let message = chain(e);
    if let Some(at) = message.find("refused by the SSRF guard: ") {
        let reason = message[at + "refused by the SSRF guard: ".len()..].to_owned();
        return Error::Refused {
            url: url.to_string(),
            reason,
            private: true,
        };
    }
    if let Some(at) = message.find("refused a redirect") {
        return Error::Refused {
            url: url.to_string(),
            reason: message[at..].to_owned(),
            private: true,
        };
    }
    Error::Transport {
        url: url.to_string(),
        message,
        connect: e.is_connect(),
    }
}

/// An error and its sources, joined: reqwest's top-level message alone rarely says why.
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}
