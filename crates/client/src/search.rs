//! Finding a server's tools by what a user wants (issue #42.2): the server's own ranking where
//! it has one (toolhost's N-ACT `?q=`, which says so in [`RANKED_HEADER`]), else core's ranker
//! over what the server lists, here.

use toolhost_core::search::{Document, Index};

use crate::client::Client;
use crate::error::Error;
use crate::http::Freshness;
use crate::model::{Protocol, Server, Source, Tool};
use crate::nact;

/// The header a toolhost N-ACT listing carries when `q` ranked it (docs/protocols.md §3);
/// without it, a server's `q` is a filter of its own, or unknown, and the client ranks.
pub const RANKED_HEADER: &str = "toolhost-search";

/// Who ranked a search's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankedBy {
    /// The server (N-ACT `?q=`).
    Server,
    /// This client, over the server's whole listing.
    Client,
}

impl Client {
    /// The tools of `server` that match `query`, most relevant first, at most `limit`.
    pub async fn search(&self, server: &Server, query: &str, limit: usize) -> Result<(Vec<Tool>, RankedBy), Error> {
        if server.protocol == Protocol::Nact
            && let Source::Url(root) = &server.endpoint
            && let Some(tools) = self.nact_search(root, query, limit).await?
        {
            return Ok((tools, RankedBy::Server));
        }
        Ok((rank(&server.tools, query, limit), RankedBy::Client))
    }

    /// The N-ACT server's ranking for `query`, or `None` when it does not rank (no header,
    /// or `q` refused).
    async fn nact_search(&self, root: &url::Url, query: &str, limit: usize) -> Result<Option<Vec<Tool>>, Error> {
        let mut url = nact::join(root, "tools")?;
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("pageLimit", &limit.clamp(1, 500).to_string());
        let reply = self
            .ctx(Freshness::Revalidate)
            .http
            .get(&url, Freshness::Revalidate, None)
            .await?;
        if reply.status != 200 || !reply.headers.contains_key(RANKED_HEADER) {
            return Ok(None);
        }
        let page = nact::json(reply, Protocol::Nact)?;
        let endpoint = Source::Url(root.clone());
        let tools = page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| nact::tool(root, &endpoint, item.clone()).ok())
            .take(limit)
            .collect();
        Ok(Some(tools))
    }
}

/// `tools` ranked for `query` here, with core's ranker: best first, at most `limit`.
pub fn rank(tools: &[Tool], query: &str, limit: usize) -> Vec<Tool> {
    let index = Index::build(tools.len(), |i| document(&tools[i]));
    index
        .search(query, limit, |_| true)
        .into_iter()
        .map(|(i, _)| tools[i].clone())
        .collect()
}

/// What the ranker reads of a listed tool: N-ACT's `tags` where the definition has them.
fn document(tool: &Tool) -> Document<'_> {
    Document {
        name: &tool.name,
        title: tool.title.as_deref(),
        description: &tool.description,
        tags: tool.definition["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str())
            .collect(),
        inputs: tool
            .inputs
            .iter()
            .map(|p| (p.name.as_str(), p.description.as_str()))
            .collect(),
    }
}
