//! The backward-compatibility check between consecutive versions (N-ACT §5.4, docs/protocols.md §1).
//!
//! A new version may add optional inputs, add outputs, loosen input constraints and reword
//! descriptions. It may not remove or rename a parameter or an output, make an input required,
//! change a type, tighten a constraint, or drop an input enum value. Each message names both
//! versions and the parameter, and says what to do instead.
//!
//! Compatibility is judged on what every protocol shows, not only on the catalog
//! (docs/protocols.md §1, issue #31.2, #38.2): the catalog's rules already cover both spellings
//! of an enum (a value dropped by name breaks N-ACT's callers, a wire value changed breaks
//! everyone's), and a `json` schema or the version's `input_rules` never change, since whether
//! a change loosens a JSON Schema cannot be told. [`projections`] refuses what the catalog
//! allows but one protocol's view of the tool does not: OTC answers a one-output tool with the
//! bare value, so a second output would change its `value` from a scalar to an object; and
//! N-ACT shows a version that returns nothing as one `json` output `result`, which outputs added
//! later would remove. An optional input N-ACT cannot show (a `json` one) is left out of its
//! signature there, so adding one breaks no protocol.

use super::{EnumValue, InputType, OutputType, Version};

const RULE: &str = "(N-ACT §5.4); publish the change as a new tool instead";

/// Every way `new` breaks callers written against `old`; empty when compatible.
pub(super) fn check(old: &Version, new: &Version) -> Vec<String> {
    let (o, n) = (&old.semver, &new.semver);
    let mut problems = Vec::new();
    for before in &old.inputs {
        let Some(after) = new.inputs.iter().find(|p| p.name == before.name) else {
            let renamed = new
                .inputs
                .iter()
                .find(|p| p.id == before.id)
                .map(|p| format!(" (renamed to `{}`)", p.name))
                .unwrap_or_default();
            problems.push(format!(
                "removes input `{}`{renamed} that {o} had; a new version may not remove or rename inputs {RULE}",
                before.name
            ));
            continue;
        };
        let name = &before.name;
        if after.id != before.id {
            problems.push(format!(
                "changes the id of input `{name}` from `{}` to `{}`; N-ACT ids identify a parameter across versions, so they never change {RULE}",
                before.id, after.id
            ));
        }
        if after.required && !before.required {
            problems.push(format!("makes input `{name}` required, but {o} had it optional; a new version may only add optional inputs {RULE}"));
        }
        match (&before.kind, &after.kind) {
            (
                InputType::String {
                    max_length: ml0,
                    pattern: p0,
                },
                InputType::String {
                    max_length: ml1,
                    pattern: p1,
                },
            ) => {
                if let (Some(a), Some(b)) = (ml0, ml1)
                    && b < a
                {
                    problems.push(format!(
                        "lowers `max_length` of input `{name}` from {a} to {b}; constraints may only be loosened {RULE}"
                    ));
                }
                if let (None, Some(b)) = (ml0, ml1) {
                    problems.push(format!("adds `max_length: {b}` to input `{name}`, which {o} did not limit; constraints may only be loosened {RULE}"));
                }
                if p1.is_some() && p0 != p1 {
                    problems.push(format!("changes the `pattern` of input `{name}`; a pattern may only be removed, since a changed one can refuse values {o} accepted {RULE}"));
                }
            }
            (InputType::Int { min: min0, max: max0 }, InputType::Int { min: min1, max: max1 }) => {
                if let Some(b) = min1
                    && min0.is_none_or(|a| *b > a)
                {
                    problems.push(format!(
                        "raises the `min` of input `{name}` to {b}; constraints may only be loosened {RULE}"
                    ));
                }
                if max1 < max0 {
                    problems.push(format!("lowers the `max` of input `{name}` from {max0} to {max1}; constraints may only be loosened {RULE}"));
                }
            }
            (InputType::Number { min: min0, max: max0 }, InputType::Number { min: min1, max: max1 }) => {
                if let Some(b) = min1
                    && min0.is_none_or(|a| *b > a)
                {
                    problems.push(format!(
                        "raises the `min` of input `{name}` to {b}; constraints may only be loosened {RULE}"
                    ));
                }
                if let Some(b) = max1
                    && max0.is_none_or(|a| *b < a)
                {
                    problems.push(format!(
                        "lowers the `max` of input `{name}` to {b}; constraints may only be loosened {RULE}"
                    ));
                }
            }
            (InputType::Boolean, InputType::Boolean) => {}
            (InputType::Enum { values: v0 }, InputType::Enum { values: v1 }) => {
                for value in v0 {
                    if !v1.iter().any(|v| v.name == value.name) {
                        problems.push(format!(
                            "drops value `{}` of enum input `{name}`; enum values may only be added {RULE}",
                            value.name
                        ));
                    }
                }
                rewired(v0, v1, "input", name, &mut problems);
            }
            (InputType::Json { schema: s0 }, InputType::Json { schema: s1 }) => {
                if s0 != s1 {
                    problems.push(format!(
                        "changes the schema of json input `{name}`; whether a change loosens a JSON Schema cannot be told, so it never changes {RULE}"
                    ));
                }
            }
            (a, b) => problems.push(format!(
                "changes the type of input `{name}` from {} in {o} to {} in {n}; types never change {RULE}",
                a.name(),
                b.name()
            )),
        }
    }
    if new.input_rules != old.input_rules && !new.input_rules.is_empty() {
        problems.push(format!(
            "changes `input_rules`, which tie inputs together; whether a change loosens a JSON Schema cannot be told, so they may only be removed {RULE}"
        ));
    }
    for added in new.inputs.iter().filter(|p| old.input(&p.name).is_none()) {
        if added.required {
            problems.push(format!("adds input `{}` as required; inputs added in a new version must be optional (`required: false`) so that calls written for {o} still work {RULE}", added.name));
        }
    }
    for before in &old.outputs {
        let Some(after) = new.outputs.iter().find(|x| x.name == before.name) else {
            problems.push(format!(
                "removes output `{}` that {o} had; a new version may only add outputs {RULE}",
                before.name
            ));
            continue;
        };
        let name = &before.name;
        if after.id != before.id {
            problems.push(format!(
                "changes the id of output `{name}` from `{}` to `{}`; N-ACT ids identify a parameter across versions, so they never change {RULE}",
                before.id, after.id
            ));
        }
        if before.required && !after.required {
            problems.push(format!(
                "makes output `{name}` optional, but callers of {o} rely on it being present {RULE}"
            ));
        }
        match (&before.kind, &after.kind) {
            (OutputType::Enum { values: v0 }, OutputType::Enum { values: v1 }) => {
                for value in v1.iter().filter(|v| !v0.iter().any(|x| x.name == v.name)) {
                    problems.push(format!(
                        "adds value `{}` to enum output `{name}`; callers of {o} cannot know it {RULE}",
                        value.name
                    ));
                }
                rewired(v0, v1, "output", name, &mut problems);
            }
            (OutputType::Json { schema: Some(s0) }, OutputType::Json { schema: s1 }) if s1.as_ref() != Some(s0) => {
                problems.push(format!(
                    "changes the schema of json output `{name}`; callers of {o} read what it allowed, and whether a change narrows a JSON Schema cannot be told, so a schema, once given, never changes {RULE}"
                ));
            }
            (a, b) if a.name() != b.name() => problems.push(format!(
                "changes the type of output `{name}` from {} in {o} to {} in {n}; types never change {RULE}",
                a.name(),
                b.name()
            )),
            _ => {}
        }
    }
    problems.extend(projections(old, new));
    problems
}

/// The changes the catalog's rules allow but a protocol's projection of the tool does not.
fn projections(old: &Version, new: &Version) -> Vec<String> {
    let o = &old.semver;
    let mut problems = Vec::new();
    if old.outputs.len() == 1 && new.outputs.len() > 1 {
        let added: Vec<String> = new
            .outputs
            .iter()
            .filter(|x| x.name != old.outputs[0].name)
            .map(|x| format!("`{}`", x.name))
            .collect();
        problems.push(format!(
            "adds output {} to a tool whose {o} has one output: OTC answers a one-output tool with the bare value and a tool with several with an object, so an OTC caller of {o} would get a different `value` {RULE}",
            added.join(", ")
        ));
    }
    if old.outputs.is_empty() && !new.outputs.is_empty() {
        problems.push(format!(
            "adds outputs to a tool whose {o} returns nothing: N-ACT shows that as one `json` output `result`, which the new outputs would replace {RULE}"
        ));
    }
    problems
}

/// A name kept whose wire value changed: callers send the same name, and the backend would
/// receive (or answer) something else for it.
fn rewired(old: &[EnumValue], new: &[EnumValue], what: &str, name: &str, problems: &mut Vec<String>) {
    for before in old {
        if let Some(after) = new.iter().find(|v| v.name == before.name)
            && after.wire() != before.wire()
        {
            problems.push(format!(
                "changes what enum value `{}` of {what} `{name}` sends upstream, from {} to {}; a name keeps its value {RULE}",
                before.name,
                before.wire(),
                after.wire()
            ));
        }
    }
}

/// What `new` changes from `old` that callers of `old` can live with: inputs and outputs added,
/// inputs made optional, constraints loosened (a limit raised or removed, a pattern removed, enum
/// values added), descriptions reworded. With [`check`]'s list, everything a designer needs to
/// see between two versions.
pub(super) fn changes(old: &Version, new: &Version) -> Vec<String> {
    let mut out = Vec::new();
    if old.description != new.description {
        out.push("rewords the description".to_owned());
    }
    for after in &new.inputs {
        let Some(before) = old.inputs.iter().find(|p| p.name == after.name) else {
            out.push(format!(
                "adds {} input `{}`",
                if after.required { "required" } else { "optional" },
                after.name
            ));
            continue;
        };
        let name = &after.name;
        if before.required && !after.required {
            out.push(format!("makes input `{name}` optional"));
        }
        if before.description != after.description {
            out.push(format!("rewords input `{name}`"));
        }
        if before.default != after.default {
            out.push(format!("changes the default of input `{name}`"));
        }
        if before.examples != after.examples {
            out.push(format!("changes the examples of input `{name}`"));
        }
        if before.kind != after.kind {
            let loosened = match (&before.kind, &after.kind) {
                (InputType::Enum { values: v0 }, InputType::Enum { values: v1 }) => {
                    let added: Vec<&str> = v1
                        .iter()
                        .filter(|v| !v0.iter().any(|x| x.name == v.name))
                        .map(|v| v.name.as_str())
                        .collect();
                    if added.is_empty() {
                        "rewords the values of".to_owned()
                    } else {
                        format!("adds values {} to", added.join(", "))
                    }
                }
                _ => "changes the constraints of".to_owned(),
            };
            out.push(format!("{loosened} input `{name}`"));
        }
    }
    if !old.input_rules.is_empty() && new.input_rules.is_empty() {
        out.push("removes `input_rules`".to_owned());
    }
    for after in &new.outputs {
        match old.outputs.iter().find(|o| o.name == after.name) {
            None => out.push(format!("adds output `{}`", after.name)),
            Some(before) if before.description != after.description => {
                out.push(format!("rewords output `{}`", after.name));
            }
            Some(_) => {}
        }
    }
    out
}
