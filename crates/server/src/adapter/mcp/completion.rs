//! MCP completion (`completion/complete`, docs/protocols.md §6): suggestions for a prompt's
//! argument (the `values` its front matter lists) and for the variable of the server's own
//! resource templates (`toolhost://tools/{name}`: the tools the caller may see;
//! `toolhost://agents/{name}`: the agents it may use). Values that start with what was typed
//! (case-insensitively) come first, then those that contain it; at most 100.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use toolhost_core::catalog::Agent;
use toolhost_core::{CallContext, Catalog};

use super::resources::{AGENTS, TOOLS};

/// `completion/complete` over `catalog`, whose prompts are `agents`.
pub fn complete<'a>(
    catalog: &Catalog,
    mut agents: impl Iterator<Item = &'a Arc<Agent>>,
    caller: &CallContext,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let typed = &request.argument.value;
    let candidates: Vec<String> = match &request.r#ref {
        Reference::Prompt(prompt) => {
            let agent = agents
                .find(|a| a.name == prompt.name && a.allows(&caller.access))
                .ok_or_else(|| super::prompts::unknown(&prompt.name))?;
            let argument = agent
                .arguments
                .iter()
                .find(|a| a.name == request.argument.name)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "the prompt `{}` takes no argument `{}`",
                            agent.name, request.argument.name
                        ),
                        None,
                    )
                })?;
            argument.values.clone()
        }
        Reference::Resource(template) if template.uri == format!("{TOOLS}{{name}}") => catalog
            .tools()
            .iter()
            .filter(|t| t.listed_to(caller))
            .map(|t| t.name.clone())
            .collect(),
        Reference::Resource(template) if template.uri == format!("{AGENTS}{{name}}") => catalog
            .agents()
            .iter()
            .filter(|a| a.allows(&caller.access))
            .map(|a| a.name.clone())
            .collect(),
        Reference::Resource(template) => {
            let declared = catalog.resources().iter().any(
                |r| matches!(&r.address, toolhost_core::catalog::resource::Address::Template(t) if *t == template.uri),
            );
            if !declared {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no resource template `{}`; resources/templates/list says which there are",
                        template.uri
                    ),
                    None,
                ));
            }
            Vec::new()
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "completion takes a `ref/prompt` or a `ref/resource` reference".to_owned(),
                None,
            ));
        }
    };
    Ok(CompleteResult::new(rank(candidates, typed)))
}

/// The candidates that start with `typed`, then those that contain it (case-insensitively),
/// at most [`CompletionInfo::MAX_VALUES`], with the total and whether there were more.
fn rank(candidates: Vec<String>, typed: &str) -> CompletionInfo {
    let needle = typed.to_lowercase();
    let (mut first, mut then): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for c in candidates {
        let lower = c.to_lowercase();
        if lower.starts_with(&needle) {
            first.push(c);
        } else if lower.contains(&needle) {
            then.push(c);
        }
    }
    first.extend(then);
    let total = first.len();
    first.truncate(CompletionInfo::MAX_VALUES);
    let more = total > first.len();
    CompletionInfo::with_pagination(first, Some(u32::try_from(total).unwrap_or(u32::MAX)), more).unwrap_or_default()
}
