//! Agents a toolhost server serves (issue #41.2): `GET /agents` lists them, and each one's
//! design at `GET /agents/{name}` (the URL the listing advertises) gives its procedure and its
//! endpoints per protocol. Discovery given such a URL reads the design and lists the agent's
//! tools at the endpoint of the protocol asked for (N-ACT unless told), so every client command
//! takes an agent's URL as the listing gives it.

use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

use crate::discover::Ctx;
use crate::error::Error;
use crate::http::Freshness;
use crate::model::Protocol;
use crate::text;

/// One agent: what a model is told (its procedure) and where its tools are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Its name on the server.
    pub name: String,
    /// What it is for, in a sentence.
    pub description: String,
    /// Its operating procedure: the system prompt a model running the agent follows. Empty in
    /// a listing (`GET /agents` gives no procedure).
    pub procedure: String,
    /// Its design document, `…/agents/{name}`.
    pub url: Url,
    /// Its endpoint per protocol.
    pub endpoints: Vec<(Protocol, Url)>,
    /// The names of its tools, as the server lists them.
    pub tools: Vec<String>,
}

impl Agent {
    /// The endpoint serving the agent over `protocol`.
    pub fn endpoint(&self, protocol: Protocol) -> Result<&Url, Error> {
        self.endpoints
            .iter()
            .find(|(p, _)| *p == protocol)
            .map(|(_, url)| url)
            .ok_or_else(|| {
                let served: Vec<String> = self.endpoints.iter().map(|(p, _)| p.to_string()).collect();
                Error::Setup(format!(
                    "the agent `{}` is not served over {protocol}; use --protocol with one of: {}",
                    self.name,
                    served.join(", ")
                ))
            })
    }

    /// `sha256:…` of the procedure's text as served: what a lockfile pins.
    pub fn procedure_hash(&self) -> String {
        format!(
            "sha256:{}",
            toolhost_core::hex(&Sha256::digest(self.procedure.as_bytes()))
        )
    }

    /// An agent as JSON (the design's shape, without the per-tool signatures).
    fn from_json(body: &Value, url: Url) -> Option<Self> {
        let name = body.get("name")?.as_str()?;
        let endpoints = body
            .get("endpoints")?
            .as_object()?
            .iter()
            .filter_map(|(protocol, at)| {
                let protocol = protocol.parse::<Protocol>().ok()?;
                Some((protocol, Url::parse(at.as_str()?).ok()?))
            })
            .collect();
        let tools = body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .map(|n| text::one_line(n, text::MAX_NAME))
                    .collect()
            })
            .unwrap_or_default();
        Some(Self {
            name: text::one_line(name, text::MAX_NAME),
            description: body
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            procedure: body
                .get("procedure")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            url,
            endpoints,
            tools,
        })
    }
}

/// Whether `url` may be an agent's design: its path ends in `/agents/{name}`.
pub(crate) fn may_be_design(url: &Url) -> bool {
    let mut segments = url.path().trim_end_matches('/').rsplit('/');
    let name = segments.next().unwrap_or_default();
    !name.is_empty() && segments.next() == Some("agents")
}

/// The agent whose design is at `url`; `Ok(None)` when what answers there is not one (so the
/// URL is probed as any other). A refusal by the SSRF guard is an error.
pub(crate) async fn design(ctx: &Ctx<'_>, url: &Url) -> Result<Option<Agent>, Error> {
    let reply = match ctx.http.get(url, ctx.freshness, ctx.bearer).await {
        Ok(reply) => reply,
        Err(e @ (Error::Refused { .. } | Error::Transport { .. })) => return Err(e),
        Err(_) => return Ok(None),
    };
    if matches!(reply.status, 401 | 403) {
        return Err(crate::nact::status_error(&reply, None));
    }
    if reply.status != 200 {
        return Ok(None);
    }
    let Ok(body) = reply.json() else { return Ok(None) };
    if body.get("procedure").and_then(Value::as_str).is_none() {
        return Ok(None);
    }
    Ok(Agent::from_json(&body, url.clone()))
}

/// The agents the server at `url` serves (`GET {url}/agents`), in its order.
pub(crate) async fn list(ctx: &Ctx<'_>, url: &Url) -> Result<Vec<Agent>, Error> {
    let listing = if url.path().trim_end_matches('/').ends_with("/agents") {
        url.clone()
    } else {
        crate::nact::join(url, "agents")?
    };
    let reply = ctx.http.get(&listing, Freshness::Revalidate, ctx.bearer).await?;
    if reply.status != 200 {
        return Err(crate::nact::status_error(&reply, None));
    }
    let not_a_listing = |why: &str| {
        Error::Setup(format!(
            "{} is not a toolhost server's agent listing ({why}); give the server's root URL",
            text::shown_url(listing.as_str())
        ))
    };
    let body = reply.json().map_err(|e| not_a_listing(&e))?;
    let items = body
        .get("agents")
        .and_then(Value::as_array)
        .ok_or_else(|| not_a_listing("no `agents` array"))?;
    Ok(items
        .iter()
        .filter_map(|item| {
            let at = Url::parse(item.get("url")?.as_str()?).ok()?;
            Agent::from_json(item, at)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_urls_end_in_agents_and_a_name() {
        let yes = |u: &str| may_be_design(&Url::parse(u).unwrap());
        assert!(yes("http://h/agents/travel"));
        assert!(yes("http://h/team/agents/travel/"));
        assert!(!yes("http://h/agents"));
        assert!(!yes("http://h/agents/travel/mcp"));
        assert!(!yes("http://h/tools"));
    }
}
