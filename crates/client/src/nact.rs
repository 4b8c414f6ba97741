//! An N-ACT client (draft-rosenberg-aiproto-nact-00 §6–7).

use serde_json::{Map, Value};
use toolhost_wire::nact::{Invocation, InvocationResult, NamedValue, Page, Signature};
use toolhost_wire::problem::Problem;

/// The most pages a listing follows before giving up, so a server that never ends its
/// listing cannot keep a client busy forever.
pub const MAX_PAGES: usize = 1000;

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request did not complete (connection, timeout, body).
    #[error("failed to reach the server: {0}")]
    Transport(#[from] reqwest::Error),
    /// The server answered with a problem document.
    #[error("the server answered {}: {}", .0.status, .0.detail)]
    Problem(Box<Problem>),
    /// The server answered something that is not N-ACT.
    #[error("the server's answer is not valid N-ACT: {0}")]
    Protocol(String),
}

/// A client for one N-ACT server, addressed by its `{platform-root}` (e.g. `http://host/nact`).
#[derive(Debug, Clone)]
pub struct NactClient {
    http: reqwest::Client,
    root: String,
}

impl NactClient {
    /// A client for the server whose tools are at `{root}/tools`.
    pub fn new(http: reqwest::Client, root: impl Into<String>) -> Self {
        Self {
            http,
            root: root.into().trim_end_matches('/').to_owned(),
        }
    }

    /// Every tool's current signature, following pagination to the end (at most [`MAX_PAGES`]).
    pub async fn list_tools(&self) -> Result<Vec<Signature>, Error> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut request = self
                .http
                .get(format!("{}/tools", self.root))
                .query(&[("pageLimit", "500")]);
            if let Some(c) = &cursor {
                request = request.query(&[("pageCursor", c)]);
            }
            let page: Page<Signature> = decode(request.send().await?).await?;
            tools.extend(page.items);
            match page.paging.next {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                Some(_) => return Err(Error::Protocol("the server returned the same cursor twice".to_owned())),
                None => return Ok(tools),
            }
        }
        Err(Error::Protocol(format!(
            "the listing did not end within {MAX_PAGES} pages"
        )))
    }

    /// Invokes a tool (by name or UUID), pinned to `version` when given; returns the outputs
    /// keyed by name.
    pub async fn invoke(
        &self,
        tool: &str,
        version: Option<u32>,
        input: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Error> {
        let tool_segment = urlencode(tool);
        let url = match version {
            Some(n) => format!("{}/tools/{tool_segment}/versions/{n}:invoke", self.root),
            None => format!("{}/tools/{tool_segment}:invoke", self.root),
        };
        let body = Invocation {
            name: None,
            input_parameters: input
                .iter()
                .map(|(name, value)| NamedValue {
                    name: name.clone(),
                    value: value.clone(),
                })
                .collect(),
        };
        let result: InvocationResult = decode(self.http.post(url).json(&body).send().await?).await?;
        Ok(result
            .output_parameters
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect())
    }
}

async fn decode<T: serde::de::DeserializeOwned>(response: reqwest::Response) -> Result<T, Error> {
    let status = response.status();
    let bytes = response.bytes().await?;
    if status.is_success() {
        return serde_json::from_slice(&bytes).map_err(|e| Error::Protocol(e.to_string()));
    }
    match serde_json::from_slice::<Problem>(&bytes) {
        Ok(problem) => Err(Error::Problem(Box::new(problem))),
        Err(_) => Err(Error::Protocol(format!("HTTP {status} without a problem document"))),
    }
}

/// Percent-encodes a path segment (tool names are plain, but UUIDs or user input may not be).
fn urlencode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_path_segments() {
        assert_eq!(super::urlencode("a b/../?#é"), "a%20b%2F..%2F%3F%23%C3%A9");
        assert_eq!(super::urlencode("lookup_weather"), "lookup_weather");
    }
}
