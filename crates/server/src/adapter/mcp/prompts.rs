//! MCP prompts (docs/protocols.md §6): each agent the caller may use is a prompt, its procedure
//! the message, `{{argument}}` filled in from the arguments its front matter declares, after
//! the resources it attaches (an `image/*` one as an image, `audio/*` as audio, any other
//! embedded). At an agent's endpoint, that agent alone.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ContentBlock, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage,
    ResourceContents, Role,
};
use toolhost_core::catalog::Agent;
use toolhost_core::catalog::prompt::fill;
use toolhost_core::{CallContext, Catalog};

use super::resources::{self, TTL_MS};

/// `prompts/list`: the agents of `agents` that `caller` may use.
pub fn list<'a>(agents: impl Iterator<Item = &'a Arc<Agent>>, caller: &CallContext) -> ListPromptsResult {
    let prompts = agents
        .filter(|a| a.allows(&caller.access))
        .map(|a| {
            let arguments: Vec<PromptArgument> = a
                .arguments
                .iter()
                .map(|arg| {
                    PromptArgument::new(arg.name.clone())
                        .with_description(arg.description.clone())
                        .with_required(arg.required)
                })
                .collect();
            Prompt::new(
                &a.name,
                Some(&a.description),
                (!arguments.is_empty()).then_some(arguments),
            )
        })
        .collect();
    let mut result = ListPromptsResult::with_all_items(prompts);
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(CacheScope::Private);
    result
}

/// `prompts/get` of `agent` with `arguments`; `catalog` holds the resources it attaches.
pub fn get(
    agent: &Agent,
    catalog: &Catalog,
    caller: &CallContext,
    arguments: Option<rmcp::model::JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let mut values = BTreeMap::new();
    for (name, value) in arguments.unwrap_or_default() {
        if !agent.arguments.iter().any(|a| a.name == name) {
            return Err(invalid(
                agent,
                format!("the prompt `{}` takes no argument `{name}`", agent.name),
            ));
        }
        let text = match value {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        values.insert(name, text);
    }
    if let Some(missing) = agent
        .arguments
        .iter()
        .find(|a| a.required && !values.contains_key(&a.name))
    {
        return Err(invalid(
            agent,
            format!(
                "the prompt `{}` needs the argument `{}`: {}",
                agent.name, missing.name, missing.description
            ),
        ));
    }
    let mut messages = Vec::new();
    for written in &agent.attach {
        let uri = fill(written, &agent.arguments, &values);
        let (contents, _) = resources::contents(catalog, caller, &uri).ok_or_else(|| resources::not_found(&uri))?;
        messages.push(PromptMessage::new(Role::User, block(contents)));
    }
    messages.push(PromptMessage::new_text(
        Role::User,
        fill(&agent.procedure, &agent.arguments, &values),
    ));
    Ok(GetPromptResult::new(messages).with_description(&agent.description))
}

/// A resource as a message's content: bytes of an image or audio type as such, else embedded.
fn block(contents: ResourceContents) -> ContentBlock {
    if let ResourceContents::BlobResourceContents {
        mime_type: Some(mime),
        blob,
        ..
    } = &contents
        && let Some(block) = super::content::media_block(blob, mime)
    {
        return block;
    }
    ContentBlock::resource(contents)
}

fn invalid(agent: &Agent, message: String) -> ErrorData {
    let takes: Vec<String> = agent
        .arguments
        .iter()
        .map(|a| format!("{}{}", a.name, if a.required { "" } else { "?" }))
        .collect();
    let takes = if takes.is_empty() {
        "none".to_owned()
    } else {
        takes.join(", ")
    };
    ErrorData::invalid_params(format!("{message} (its arguments: {takes})"), None)
}

/// The error for a prompt name that is not one the caller may use.
pub fn unknown(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no prompt named `{name}`; prompts/list says which prompts there are"),
        None,
    )
}

/// The key of the question a 2026-07-28 `prompts/get` asks for its missing arguments.
pub const ARGUMENTS_KEY: &str = "arguments";

/// The input-required result that asks the user for the required arguments `arguments` lacks,
/// one form field each (docs/asking.md); `None` when none is missing.
pub fn ask_missing(agent: &Agent, arguments: &rmcp::model::JsonObject) -> Option<rmcp::model::InputRequiredResult> {
    let missing: Vec<_> = agent
        .arguments
        .iter()
        .filter(|a| a.required && !arguments.contains_key(&a.name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut properties = serde_json::Map::new();
    for argument in &missing {
        let mut field = serde_json::json!({"type": "string", "description": argument.description});
        if !argument.values.is_empty() {
            field["enum"] = serde_json::json!(argument.values);
        }
        properties.insert(argument.name.clone(), field);
    }
    let names: Vec<&str> = missing.iter().map(|a| a.name.as_str()).collect();
    let request = serde_json::json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": format!("The prompt `{}` needs: {}", agent.name, missing.iter().map(|a| a.description.as_str()).collect::<Vec<_>>().join("; ")),
            "requestedSchema": {"type": "object", "properties": properties, "required": names},
        },
    });
    let request = serde_json::from_value(request).ok()?;
    Some(rmcp::model::InputRequiredResult::from_input_requests(
        [(ARGUMENTS_KEY.to_owned(), request)].into(),
    ))
}

/// Fills the arguments the caller left out from the user's accepted answer to [`ask_missing`]
/// (never one the caller gave, never one the prompt does not take).
pub fn take_answer(agent: &Agent, arguments: &mut rmcp::model::JsonObject, answer: &serde_json::Value) {
    if !toolhost_core::ask::accepted(answer) {
        return;
    }
    let Some(content) = answer.get("content").and_then(serde_json::Value::as_object) else {
        return;
    };
    for (name, value) in content {
        if agent.arguments.iter().any(|a| &a.name == name) && !arguments.contains_key(name) {
            arguments.insert(name.clone(), value.clone());
        }
    }
}
