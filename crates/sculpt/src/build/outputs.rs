//! The recipe's `outputs:`: each output's path, text template, constant or jq program.

use serde_json::Value;

use super::{Builder, OutputRule, OutputSource, Outputs};
use crate::jq;
use crate::reference::{Names, Reference};
use crate::template::Template;

impl Builder<'_> {
    pub(super) fn outputs(
        &mut self,
        def: Option<&std::collections::BTreeMap<String, Value>>,
        steps: &[String],
    ) -> Option<Outputs> {
        let Some(def) = def else {
            return Some(Outputs::LastBody);
        };
        let before = self.problems.len();
        let names = self.names(steps, false);
        let declared = self.signature.outputs;
        let mut rules = Vec::new();
        let mut programs = Vec::new();
        for (name, spec) in def {
            let place = format!("`outputs.{name}`");
            let Some(output) = declared.iter().find(|o| &o.name == name) else {
                let all: Vec<&str> = declared.iter().map(|o| o.name.as_str()).collect();
                self.problem(
                    &place,
                    format!(
                        "the version has no output `{name}`; its outputs are: {}",
                        if all.is_empty() {
                            "none".to_owned()
                        } else {
                            all.join(", ")
                        }
                    ),
                );
                continue;
            };
            let source = match spec {
                Value::String(text) => self
                    .output_text(&place, text, &names)
                    .map(|template| OutputSource::Template {
                        template,
                        default: None,
                    }),
                Value::Object(fields) => match (fields.get("path"), fields.get("jq"), fields.get("value")) {
                    (Some(Value::String(path)), None, None) if fields.keys().all(|k| k == "path" || k == "default") => {
                        self.output_text(&place, path, &names)
                            .map(|template| OutputSource::Template {
                                template,
                                default: fields.get("default").cloned(),
                            })
                    }
                    (None, Some(Value::String(code)), None) if fields.len() == 1 => match jq::compile(code) {
                        Ok(program) => {
                            programs.push(program);
                            Some(OutputSource::Jq(programs.len() - 1))
                        }
                        Err(e) => {
                            self.problem(
                                &format!("`outputs.{name}.jq`"),
                                format!("the jq program does not compile: {e}"),
                            );
                            None
                        }
                    },
                    (None, None, Some(value)) if fields.len() == 1 => Some(OutputSource::Constant(value.clone())),
                    _ => {
                        self.problem(&place, "write a path (`step.body.field`), a template with `{{...}}`, or one of `{path, default}`, `{jq}`, `{value}`".to_owned());
                        None
                    }
                },
                _ => {
                    self.problem(&place, "write a path (`step.body.field`), a template with `{{...}}`, or one of `{path, default}`, `{jq}`, `{value}`".to_owned());
                    None
                }
            };
            if let Some(source) = source {
                rules.push(OutputRule {
                    name: name.clone(),
                    required: output.required,
                    source,
                });
            }
        }
        for output in declared.iter().filter(|o| o.required && !def.contains_key(&o.name)) {
            self.problem(
                &format!("`outputs.{}`", output.name),
                "the output is required, but `outputs` does not say where it comes from".to_owned(),
            );
        }
        (self.problems.len() == before).then_some(Outputs::Map { rules, programs })
    }

    /// A path (`geocode.body.name`) or, with `{{...}}`, a text template.
    fn output_text(&mut self, place: &str, text: &str, names: &Names<'_>) -> Option<Template> {
        let result = if text.contains("{{") {
            Template::parse(text, names)
        } else {
            Reference::parse(text, names).map(|r| Template::hole(r, text))
        };
        result.map_err(|e| self.problem(place, e)).ok()
    }
}
