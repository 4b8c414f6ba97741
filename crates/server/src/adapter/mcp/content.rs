//! A call's output as MCP content: the whole output object as structured content, each image,
//! audio or resource output also as its own content block (MCP's `image`, `audio` and embedded
//! `resource`), a `content` output's blocks as they are (a federated MCP tool's text, images,
//! audio, resources and resource links, in its order), and the other outputs as one text block.
//! This is the one place MCP decides how a media output is carried; the other protocols carry
//! its value, `{"data": base64, "mimeType": …}`, in a `json` output as the catalog's schema says.
//!
//! The text block (docs/protocols.md §6): when the outputs beside the media are exactly one
//! `string` output, the text is that string, as a model would read it (`Hello, Ada!`, what the
//! SDKs' servers write for a tool returning a string); otherwise it is those outputs' object as
//! JSON, which MCP asks of a tool that returns structured content.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};
use toolhost_core::{MediaKind, OutputType, Version};

/// A successful call of `version`: structured content, media blocks, and the rest as text.
pub(crate) fn success(version: &Version, output: Map<String, Value>) -> CallToolResult {
    let media: Vec<(&str, MediaKind)> = version
        .outputs
        .iter()
        .filter_map(|o| match o.kind {
            OutputType::Media { kind } => Some((o.name.as_str(), kind)),
            _ => None,
        })
        .collect();
    let sentence = sentence(version, &media, &output);
    let output = Value::Object(output);
    // Most tools return no media: their text is the whole output, written without a copy.
    if media.is_empty() {
        let text = sentence.unwrap_or_else(|| output.to_string());
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(output);
        return result;
    }
    let mut blocks: Vec<ContentBlock> = media
        .iter()
        .filter_map(|(name, kind)| output.get(*name).map(|value| blocks(*kind, value)))
        .flatten()
        .collect();
    if media.len() < version.outputs.len() || blocks.is_empty() {
        let rest: Map<String, Value> = output
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| !media.iter().any(|(m, _)| m == name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let text = sentence.unwrap_or_else(|| Value::Object(rest).to_string());
        blocks.insert(0, ContentBlock::text(text));
    }
    let mut result = CallToolResult::success(blocks);
    result.structured_content = Some(output);
    result
}

/// The one string the text block says, when the outputs beside the media are exactly one
/// `string` output and the call returned it; `None` when the text block is JSON.
fn sentence(version: &Version, media: &[(&str, MediaKind)], output: &Map<String, Value>) -> Option<String> {
    let mut rest = version
        .outputs
        .iter()
        .filter(|o| !media.iter().any(|(name, _)| *name == o.name));
    match (rest.next(), rest.next()) {
        (Some(only), None) if only.kind == OutputType::String => output.get(&only.name)?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// The content block of bytes of a media type: an image or audio block for those types, else
/// none (the caller embeds them as a resource). One rule for tool outputs and prompt messages.
pub(crate) fn media_block(data: &str, mime: &str) -> Option<ContentBlock> {
    if mime.starts_with("image/") {
        Some(ContentBlock::image(data, mime))
    } else if mime.starts_with("audio/") {
        Some(ContentBlock::audio(data, mime))
    } else {
        None
    }
}

/// One media value as its content blocks: one block, or a `content` output's blocks as they
/// are (a federated MCP tool's answer, passed through); none for a value not of that shape (the
/// engine has checked it against the output's schema, so this does not happen).
fn blocks(kind: MediaKind, value: &Value) -> Vec<ContentBlock> {
    if kind == MediaKind::Content {
        return serde_json::from_value(value.clone()).unwrap_or_default();
    }
    block(kind, value).into_iter().collect()
}

/// One image, audio or resource value as its content block.
fn block(kind: MediaKind, value: &Value) -> Option<ContentBlock> {
    let field = |key: &str| value.get(key).and_then(Value::as_str);
    let mime = field("mimeType")?;
    Some(match kind {
        MediaKind::Content => return None,
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
