//! A call's output as MCP content: the whole output object as structured content, each image,
//! audio or resource output also as its own content block (MCP's `image`, `audio` and embedded
//! `resource`), and the other outputs as JSON text. This is the one place MCP decides how a
//! media output is carried; the other protocols carry its value, `{"data": base64, "mimeType":
//! …}`, in a `json` output as the catalog's schema says.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};
use toolhost_core::{MediaKind, OutputType, Version};

/// A successful call of `version`: structured content, media blocks, and the rest as text.
pub(crate) fn success(version: &Version, output: Map<String, Value>) -> CallToolResult {
    let mut blocks = Vec::new();
    let mut rest = output.clone();
    for o in &version.outputs {
        if let (OutputType::Media { kind }, Some(value)) = (&o.kind, output.get(&o.name))
            && let Some(block) = block(*kind, value)
        {
            blocks.push(block);
            rest.remove(&o.name);
        }
    }
    let has_text = version
        .outputs
        .iter()
        .any(|o| !matches!(o.kind, OutputType::Media { .. }));
    if has_text || blocks.is_empty() {
        blocks.insert(0, ContentBlock::text(Value::Object(rest).to_string()));
    }
    let mut result = CallToolResult::success(blocks);
    result.structured_content = Some(Value::Object(output));
    result
}

/// One media value as its content block; `None` for a value not of that shape (the engine has
/// checked it against the output's schema, so this does not happen).
fn block(kind: MediaKind, value: &Value) -> Option<ContentBlock> {
    let field = |key: &str| value.get(key).and_then(Value::as_str);
    let mime = field("mimeType")?;
    Some(match kind {
        MediaKind::Image => ContentBlock::image(field("data")?, mime),
        MediaKind::Audio => ContentBlock::audio(field("data")?, mime),
        MediaKind::Resource => {
            let uri = field("uri")?;
            let contents = match (field("data"), field("text")) {
                (Some(data), _) => ResourceContents::blob(data, uri),
                (None, Some(text)) => ResourceContents::text(text, uri),
                (None, None) => return None,
            };
            ContentBlock::resource(contents.with_mime_type(mime))
        }
    })
}
