//! What `toolhost check` prints of a catalog's warnings: one line per problem (issue #32.8). A
//! problem every version of a tool repeats (a json input kept from version to version), or that
//! several fields of one version share, is said once, naming them all.

use toolhost_core::{Problem, Tool};
use toolhost_server::adapter::nact::projection;

/// The warnings as lines, problems repeated across versions and fields of one tool folded into
/// one, in the order they were first found.
pub fn collapse(problems: &[Problem]) -> Vec<String> {
    let mut groups: Vec<(Problem, Vec<String>, Vec<String>)> = Vec::new();
    for problem in problems {
        let same = |(p, _, _): &&mut (Problem, Vec<String>, Vec<String>)| {
            p.severity == problem.severity
                && p.message == problem.message
                && p.place.file == problem.place.file
                && p.place.tool == problem.place.tool
                && p.place.agent == problem.place.agent
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some((_, versions, fields)) => {
                push_new(versions, problem.place.version.as_ref());
                push_new(fields, problem.place.field.as_ref());
            }
            None => groups.push((
                problem.clone(),
                problem.place.version.iter().cloned().collect(),
                problem.place.field.iter().cloned().collect(),
            )),
        }
    }
    groups
        .into_iter()
        .map(|(mut problem, versions, fields)| {
            problem.place.version = joined(&versions);
            problem.place.field = joined(&fields);
            problem.to_string()
        })
        .collect()
}

/// What N-ACT shows of `tool`, where it is less than the catalog (issue #38.2): each served
/// version N-ACT cannot show and why (the same reason once, naming its versions), and the
/// optional inputs its signature leaves out.
pub fn nact_notes(tool: &Tool) -> Vec<String> {
    let mut off: Vec<(String, Vec<String>)> = Vec::new();
    let mut omitted: Vec<String> = Vec::new();
    for version in tool.served_versions() {
        match projection::project(version) {
            Err(reason) => match off.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, versions)) => versions.push(version.semver.to_string()),
                None => off.push((reason, vec![version.semver.to_string()])),
            },
            Ok(shown) => {
                for name in shown.omitted {
                    push_new(&mut omitted, Some(&name));
                }
            }
        }
    }
    let mut notes: Vec<String> = off
        .into_iter()
        .map(|(reason, mut versions)| {
            versions.reverse();
            let which = if versions.len() == tool.served_versions().count() {
                String::new()
            } else {
                format!(" at {}", versions.join(", "))
            };
            format!(
                "note: tool `{}` is not on N-ACT{which}: {reason}; it is served over MCP, OTC and WoA",
                tool.name
            )
        })
        .collect();
    if !omitted.is_empty() {
        let names: Vec<String> = omitted.iter().map(|n| format!("`{n}`")).collect();
        notes.push(format!(
            "note: tool `{}` is on N-ACT without its optional input {}: N-ACT cannot express a `json` input, so its signature leaves it out (MCP, OTC and WoA take it)",
            tool.name,
            names.join(", ")
        ));
    }
    notes
}

/// One warning per pair of tools whose names and descriptions the search cannot tell apart
/// (issue #42.4): nor can a hosted model's own tool search, which reads the same text.
pub fn alike(catalog: &toolhost_core::Catalog) -> Vec<String> {
    catalog
        .alike()
        .into_iter()
        .map(|(a, b)| {
            format!(
                "warning: {}: tools `{}` and `{}` are too alike to tell apart: a request naming either finds both as high; say in each name or description what sets it apart (what it acts on, when to use it)",
                a.source, a.name, b.name
            )
        })
        .collect()
}

fn push_new(list: &mut Vec<String>, item: Option<&String>) {
    if let Some(item) = item
        && !list.contains(item)
    {
        list.push(item.clone());
    }
}

/// `a`, or `a (and b, c)`.
fn joined(items: &[String]) -> Option<String> {
    match items {
        [] => None,
        [one] => Some(one.clone()),
        [first, rest @ ..] => Some(format!("{first} (and {})", rest.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use toolhost_core::catalog::{Place, Severity};

    use super::*;

    #[test]
    fn a_problem_repeated_by_versions_and_fields_is_said_once() {
        let at = |version: &str, field: &str| Problem {
            severity: Severity::Warning,
            place: Place {
                file: "c.yaml".to_owned(),
                tool: Some("t".to_owned()),
                agent: None,
                version: Some(version.to_owned()),
                field: Some(field.to_owned()),
            },
            message: "a json input is not an N-ACT type".to_owned(),
        };
        let mut other = at("1.0.0", "backend");
        other.message = "another".to_owned();
        let lines = collapse(&[
            at("1.0.0", "input `a`"),
            other,
            at("1.1.0", "input `a`"),
            at("1.1.0", "input `b`"),
        ]);
        assert_eq!(
            lines,
            [
                "warning: c.yaml: tool `t` version 1.0.0 (and 1.1.0), input `a` (and input `b`): a json input is not an N-ACT type",
                "warning: c.yaml: tool `t` version 1.0.0, backend: another",
            ]
        );
    }
}
