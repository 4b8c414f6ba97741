//! An MCP server's resources (issue #39.5): its listed documents and URI templates, each with
//! the hash `import tools` pins, and `resources/read` of one, bounded.
//!
//! A resource's pin is the SHA-256 of the canonical JSON of what the listing says of it (URI or
//! template, name, title, description, media type), not its size or `_meta`: a description
//! rewritten behind the operator's back (a prompt injected into what a model reads) or a URI
//! renamed is a change, a document that grew is not.

use base64::Engine as _;
use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::json;

use crate::client::Client;
use crate::error::Error;
use crate::http::chain;
use crate::model::Source;
use crate::text;

/// One listed resource or template of an upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its URI, or its URI template when `template`.
    pub uri: String,
    /// Whether `uri` is an RFC 6570 template (`resources/templates/list`).
    pub template: bool,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

impl Resource {
    /// The hash that pins what the listing says of it (see the module's comment).
    pub fn pin(&self) -> String {
        let key = if self.template { "uriTemplate" } else { "uri" };
        let definition = json!({
            key: self.uri,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
        });
        crate::lock::signature_hash(crate::Protocol::Mcp, &definition)
    }
}

/// What `resources/read` gave: text or bytes with a media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    Text { mime_type: Option<String>, text: String },
    Blob { mime_type: Option<String>, bytes: Vec<u8> },
}

/// An upstream's resources and templates, at most `max` in all; what was left out, said.
#[derive(Debug, Default)]
pub struct Listed {
    pub resources: Vec<Resource>,
    pub skipped: Vec<String>,
}

impl Client {
    /// The resources and resource templates of the MCP server at `source` (a server that
    /// declares no `resources` capability has none), at most `max`, following cursors for at
    /// most the client's page limit.
    pub async fn mcp_resources(
        &self,
        source: &Source,
        bearer: Option<&toolhost_core::Secret>,
        max: usize,
    ) -> Result<Listed, Error> {
        let lease = self.session(source, bearer, None).await?;
        let found = self.list_resources(&lease.session, max).await;
        lease.done().await;
        found
    }

    async fn list_resources(&self, session: &crate::mcp::Session, max: usize) -> Result<Listed, Error> {
        let mut listed = Listed::default();
        let offers = session
            .peer()
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some());
        if !offers {
            return Ok(listed);
        }
        let timeout = self.options.timeout;
        let pages = self.options.limits.max_pages;
        for template in [false, true] {
            let mut cursor: Option<String> = None;
            let mut done = false;
            for _ in 0..pages {
                let params = Some(PaginatedRequestParams::default().with_cursor(cursor.clone()));
                let method = if template {
                    "resources/templates/list"
                } else {
                    "resources/list"
                };
                let page = async {
                    if template {
                        let page = session.peer().list_resource_templates(params).await?;
                        let items = page
                            .resource_templates
                            .into_iter()
                            .map(|t| (t.uri_template, t.name, t.title, t.description, t.mime_type))
                            .collect::<Vec<_>>();
                        Ok::<_, rmcp::ServiceError>((items, page.next_cursor))
                    } else {
                        let page = session.peer().list_resources(params).await?;
                        let items = page
                            .resources
                            .into_iter()
                            .map(|r| (r.uri, r.name, r.title, r.description, r.mime_type))
                            .collect::<Vec<_>>();
                        Ok((items, page.next_cursor))
                    }
                };
                let (items, next) = tokio::time::timeout(timeout, page)
                    .await
                    .map_err(|_| session.error(format!("no answer to `{method}` within {} ms", timeout.as_millis())))?
                    .map_err(|e| session.error(text::plain_error(&chain(&e))))?;
                for (uri, name, title, description, mime_type) in items {
                    if listed.resources.len() >= max {
                        listed
                            .skipped
                            .push(format!("stopped after {max} resources and templates (the limit)"));
                        return Ok(listed);
                    }
                    if uri.len() > 2048 || uri.chars().any(char::is_control) || !text::is_plain_name(&name) {
                        listed.skipped.push(format!(
                            "skipped a resource whose URI or name is not plain text: `{}`",
                            text::one_line(&uri, 80)
                        ));
                        continue;
                    }
                    listed.resources.push(Resource {
                        uri,
                        template,
                        name,
                        title: title.map(|t| text::one_line(&t, 200)),
                        description: description.map(|d| text::clean(&d, text::MAX_DESCRIPTION)),
                        mime_type: mime_type.map(|m| text::one_line(&m, 200)),
                    });
                }
                match next {
                    Some(next) if Some(&next) == cursor.as_ref() => {
                        return Err(session.error(format!("`{method}` returned the same cursor twice")));
                    }
                    Some(next) => cursor = Some(next),
                    None => {
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                return Err(session.error(format!("the resource listing did not end within {pages} pages")));
            }
        }
        Ok(listed)
    }

    /// `resources/read` of `uri` at the MCP server at `source`: the contents for `uri` itself
    /// (other URIs the server adds are left out), at most `max_bytes` in all (text, or bytes
    /// after decoding), else an error saying so.
    pub async fn read_resource(
        &self,
        source: &Source,
        bearer: Option<&toolhost_core::Secret>,
        uri: &str,
        max_bytes: usize,
    ) -> Result<Vec<Contents>, Error> {
        let lease = self.session(source, bearer, None).await?;
        let session = std::sync::Arc::clone(&lease.session);
        let timeout = self.options.timeout;
        let read = tokio::time::timeout(
            timeout,
            session.peer().read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await;
        lease.done().await;
        let result = read
            .map_err(|_| {
                session.error(format!(
                    "no answer to `resources/read` within {} ms",
                    timeout.as_millis()
                ))
            })?
            .map_err(|e| match e {
                rmcp::ServiceError::McpError(data) => Error::McpError {
                    server: source.to_string(),
                    code: data.code.0,
                    message: text::clean(&data.message, 2000),
                },
                other => session.error(text::plain_error(&chain(&other))),
            })?;
        let mut size = 0usize;
        let mut out = Vec::new();
        for contents in result.contents {
            let (own, item) = match contents {
                ResourceContents::TextResourceContents {
                    uri: at,
                    mime_type,
                    text,
                    ..
                } => (at, Contents::Text { mime_type, text }),
                ResourceContents::BlobResourceContents {
                    uri: at,
                    mime_type,
                    blob,
                    ..
                } => {
                    let compact: String = blob.split_whitespace().collect();
                    let bytes = base64::engine::general_purpose::STANDARD.decode(compact).map_err(|e| {
                        session.error(format!(
                            "`resources/read` of `{uri}` gave a blob that is not base64 ({e})"
                        ))
                    })?;
                    (at, Contents::Blob { mime_type, bytes })
                }
                // A kind of contents a later revision adds is not passed on unread.
                _ => continue,
            };
            if own != uri {
                continue;
            }
            size += match &item {
                Contents::Text { text, .. } => text.len(),
                Contents::Blob { bytes, .. } => bytes.len(),
            };
            if size > max_bytes {
                return Err(session.error(format!(
                    "`resources/read` of `{uri}` gave more than {max_bytes} bytes, the most passed on"
                )));
            }
            out.push(item);
        }
        Ok(out)
    }
}
