//! Validation before sending: a model's proposed call checked against the tool's signature,
//! locally, with core's compiled JSON Schema and core's per-parameter messages.

use serde_json::{Map, Value};
use toolhost_core::ParameterError;

use crate::error::Error;
use crate::model::Tool;
use crate::schema;

impl Tool {
    /// Checks `arguments` against this tool's input schema without contacting the server.
    ///
    /// On failure every problem is listed, one per parameter, in words a model can act on
    /// ("`days` expects an integer from 1 to 16, but got 40"). A schema that does not compile
    /// here (a remote `$ref`, an unknown draft) is not held against the call: the server
    /// still validates.
    pub fn check(&self, arguments: &Value) -> Result<(), Vec<ParameterError>> {
        let compiled = self.compiled.get_or_init(|| {
            toolhost_core::validate::compile(&self.input_schema)
                .inspect_err(|e| {
                    tracing::debug!(tool = %self.name, error = %e, "the input schema does not compile here; not checking locally");
                })
                .ok()
        });
        let Some(validator) = compiled else {
            return Ok(());
        };
        toolhost_core::validate::check(
            validator,
            &self.name,
            &self.inputs,
            schema::is_closed(&self.input_schema),
            arguments,
        )
    }

    /// [`Tool::check`], as the input object to send or an [`Error::InvalidArguments`].
    pub fn checked(&self, arguments: Value) -> Result<Map<String, Value>, Error> {
        let invalid = |problems| Error::InvalidArguments {
            tool: self.name.clone(),
            problems,
        };
        self.check(&arguments).map_err(invalid)?;
        match arguments {
            Value::Object(map) => Ok(map),
            // A schema that accepts a non-object: the protocols all send objects.
            other => Err(invalid(vec![ParameterError {
                parameter: String::new(),
                message: format!(
                    "expected the arguments to be a JSON object of parameters, but got {}",
                    toolhost_core::validate::kind_of(&other)
                ),
            }])),
        }
    }
}
