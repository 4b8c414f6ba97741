//! Running a step that asks (`elicit`, `sample`, `roots`): the question is rendered from the
//! call's inputs and earlier steps and put through the call's [`toolhost_core::Ask`]; the answer
//! is the step's `body`.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolhost_core::ask::{self, CANNOT_ASK_CODE, DECLINED_CODE, INPUT_REQUIRED_CODE};
use toolhost_core::{BackendCall, Question, Reply, ToolFailure};

use super::Sculpted;
use crate::build::{AskStep, Step};
use crate::failure::{self, Scrubber};
use crate::reference::{Scope, StepResult};
use crate::template::Template;

/// The failure of a call that waits for answers: the adapter that asked answers with the
/// questions instead (an input-required result).
pub(crate) fn waiting() -> ToolFailure {
    ToolFailure::permanent("the tool waits for answers from the client; call it again with them")
        .with_code(INPUT_REQUIRED_CODE)
}

/// Whether `failure` is [`waiting`].
pub(crate) fn is_waiting(failure: &ToolFailure) -> bool {
    failure.code.as_deref() == Some(INPUT_REQUIRED_CODE)
}

impl Sculpted {
    /// Asks the step's question; `Ok(body)` is the answer as the step's result.
    pub(super) async fn ask(
        &self,
        step: &Step,
        question: &AskStep,
        call: &BackendCall<'_>,
        scope: &Scope<'_>,
        scrubber: &Scrubber,
    ) -> Result<Arc<StepResult>, ToolFailure> {
        let on_decline = match question {
            AskStep::Form { on_decline, .. } | AskStep::Url { on_decline, .. } => on_decline.as_ref(),
            _ => None,
        };
        let declined = |action: &str| match on_decline {
            Some(content) => Ok(result(json!({"action": action, "content": content}))),
            None => Err(ToolFailure::permanent(
                "the user declined to give what the tool asked for, so it stopped; ask them again, or go on without it",
            )
            .with_code(DECLINED_CODE)
            .with_developer_message(format!("step `{}`: the answer's action was `{action}`", step.name))),
        };
        let text = |template: &Template, field: &str| {
            template.text(scope, |s, out| out.push_str(s)).ok_or_else(|| {
                ToolFailure::permanent("this tool is misconfigured: its question has a hole without a value")
                    .with_code(failure::MISCONFIGURED)
                    .with_developer_message(format!(
                        "step `{}`, `{field}`: `{}` has no value",
                        step.name,
                        template.missing(scope).unwrap_or("?")
                    ))
            })
        };
        let asked = match question {
            AskStep::Form { message, schema, .. } => Question::Form {
                message: text(message, "elicit.message")?,
                schema: schema.clone(),
            },
            AskStep::Url { message, url, .. } => Question::Url {
                message: text(message, "elicit.message")?,
                url: text(url, "elicit.url")?,
                id: format!("{}.{}", call.tool.name, step.name),
            },
            AskStep::Sample {
                messages,
                system,
                max_tokens,
                temperature,
            } => {
                let mut params = Map::new();
                let mut written = Vec::with_capacity(messages.len());
                for (role, template) in messages {
                    let text = text(template, "sample.messages")?;
                    written.push(json!({"role": role, "content": {"type": "text", "text": text}}));
                }
                params.insert("messages".into(), Value::Array(written));
                params.insert("maxTokens".into(), json!(max_tokens));
                if let Some(system) = system {
                    params.insert("systemPrompt".into(), Value::String(text(system, "sample.system")?));
                }
                if let Some(temperature) = temperature {
                    params.insert("temperature".into(), json!(temperature));
                }
                Question::Sample(params)
            }
            AskStep::Roots => Question::Roots,
        };
        let capability = asked.capability();
        let Some(asker) = &call.context.ask else {
            if on_decline.is_some() {
                return declined("decline");
            }
            return Err(ToolFailure::permanent(format!(
                "this tool asks the client for {} mid-call, which only MCP carries; call it over MCP",
                capability.name()
            ))
            .with_code(CANNOT_ASK_CODE));
        };
        tracing::debug!(step = %step.name, capability = capability.name(), "asking the client");
        match asker.ask(&step.name, asked).await {
            Reply::Answer(answer) => match question {
                AskStep::Form { .. } | AskStep::Url { .. } => {
                    if ask::accepted(&answer) {
                        let content = answer.get("content").cloned().unwrap_or_else(|| json!({}));
                        return Ok(result(json!({"action": "accept", "content": content})));
                    }
                    let action = answer.get("action").and_then(Value::as_str).unwrap_or("cancel");
                    declined(if action == "decline" { "decline" } else { "cancel" })
                }
                AskStep::Sample { .. } => {
                    let mut answer = answer;
                    let text = answer.pointer("/content/text").cloned();
                    if let (Value::Object(fields), Some(text)) = (&mut answer, text) {
                        fields.insert("text".into(), text);
                    }
                    Ok(result(answer))
                }
                AskStep::Roots => Ok(result(answer)),
            },
            Reply::Suspend => Err(waiting()),
            Reply::Unsupported(_) if on_decline.is_some() => declined("decline"),
            Reply::Unsupported(capability) => Err(ToolFailure::permanent(format!(
                "this tool asks the client for {}, which the client did not declare it can answer; use a client that supports it",
                capability.name()
            ))
            .with_code(CANNOT_ASK_CODE)
            .with_developer_message(format!("step `{}`", step.name))),
            Reply::Failed(why) => Err(scrubber.failure(
                ToolFailure::permanent(format!("the tool could not ask the client: {why}"))
                    .with_code(CANNOT_ASK_CODE)
                    .with_developer_message(format!("step `{}`", step.name)),
            )),
        }
    }
}

fn result(body: Value) -> Arc<StepResult> {
    Arc::new(StepResult {
        status: 200,
        headers: Value::Object(Map::new()),
        body,
    })
}
