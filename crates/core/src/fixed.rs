//! The `static` backend: a tool whose answer is written in the catalog.
//!
//! `backend: { kind: static, output: { greeting: Hello } }` answers that output object on every
//! call (checked against the version's outputs like any backend's answer). Useful for fixed
//! documents, pictures and placeholders while the real backend is built.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::backend::{Backend, BackendCall, BackendFactory, BoxFuture, Signature, ToolFailure};

/// The factory for `kind: static`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fixed;

impl BackendFactory for Fixed {
    fn build(&self, config: &Map<String, Value>, _: &Signature<'_>) -> Result<Arc<dyn Backend>, Vec<String>> {
        let mut problems: Vec<String> = config
            .keys()
            .filter(|k| k.as_str() != "output")
            .map(|k| format!("unknown key `{k}`; a static backend takes `output` only"))
            .collect();
        let output = match config.get("output") {
            Some(Value::Object(map)) => Some(map.clone()),
            Some(other) => {
                problems.push(format!("`output` must be an object of output values, but is {other}"));
                None
            }
            None => {
                problems.push("`output` is missing; write the output object the tool answers".to_owned());
                None
            }
        };
        match output {
            Some(output) if problems.is_empty() => Ok(Arc::new(Answer { output })),
            _ => Err(problems),
        }
    }
}

/// One fixed answer bound to a tool version.
#[derive(Debug)]
struct Answer {
    output: Map<String, Value>,
}

impl Backend for Answer {
    fn call<'a>(&'a self, _: BackendCall<'a>) -> BoxFuture<'a, Result<Map<String, Value>, ToolFailure>> {
        Box::pin(std::future::ready(Ok(self.output.clone())))
    }
}
