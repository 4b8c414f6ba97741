//! Raw HTTP through the client's guard, for a checker that must see each answer as sent
//! (`toolhost verify --conformance`): the same SSRF guard, credentials and bounded bodies as
//! every protocol module, but no cache, no retries and no parsing.

use std::time::Duration;

use http::{HeaderMap, Method};
use url::Url;

use crate::client::{Options, http_for};
use crate::error::Error;
use crate::http::Http;

/// A guarded HTTP handle built from client [`Options`] (policy, resolver, credentials, body
/// limit, timeout); the cache directory is ignored. It follows no redirect: a 3xx is the
/// answer, and a caller that follows it sends the next hop itself, through the guard again,
/// with the credentials of that hop's origin (none off the origin the user named).
#[derive(Debug, Clone)]
pub struct Raw {
    http: Http,
    timeout: Duration,
}

/// One answer, its body read within the limit.
#[derive(Debug, Clone)]
pub struct RawReply {
    /// The URL that answered (the one asked: redirects are not followed).
    pub url: Url,
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl Raw {
    /// A handle applying `options`' guard and credentials.
    pub fn new(options: &Options) -> Result<Self, Error> {
        Ok(Self {
            http: http_for(options, None)?.without_redirects()?,
            timeout: options.timeout,
        })
    }

    /// Sends `method url` with `headers` (beside the credentials for that origin) and `body`,
    /// after the guard has checked the URL.
    pub async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<RawReply, Error> {
        self.http.guard().check_url(url).await?;
        let mut request = self
            .http
            .reqwest()
            .request(method, url.clone())
            .headers(self.http.credentials_for(url))
            .headers(headers)
            .timeout(self.timeout);
        if let Some(body) = body {
            request = request.body(body);
        }
        let reply = self.http.send(request, url).await?;
        Ok(RawReply {
            url: reply.url,
            status: reply.status,
            headers: reply.headers,
            body: reply.body,
        })
    }
}
