//! Load-time advice: what makes a recipe unable to work although it loads (issue #32.8). A path
//! that keeps an OpenAPI hole (`/workflows/{workflow_id}`) no input fills is sent as the text
//! `%7Bworkflow_id%7D`; a field the upstream requires (`requires:`, written by an import) that
//! the step does not send is refused upstream. Both are warnings: the catalog loads, and
//! `check` names the tool that cannot work instead of saying "0 warnings".

use crate::config::{BackendDef, StepDef};

/// Every problem of `def`, each naming its step.
pub(crate) fn warnings(def: &BackendDef) -> Vec<String> {
    let mut out = Vec::new();
    for step in &def.steps {
        if let Some(path) = &step.path {
            for hole in unfilled(path) {
                out.push(format!(
                    "step `{}`: the path `{path}` keeps `{{{hole}}}`, which no input fills, so it is sent as the text `%7B{hole}%7D`; fill it from an input (`{{{{input.NAME}}}}`) or fix it (an import overlay's `set`)",
                    step.name
                ));
            }
        }
        for field in &step.requires {
            match sends(step, def, field) {
                Some(true) => {}
                Some(false) => out.push(format!(
                    "step `{}`: the upstream requires `{field}`, which no input or constant provides, so every call is refused there; take it as an input (an import overlay's `json: [{}]`) or fix it (`set`)",
                    step.name,
                    field.rsplit('.').next().unwrap_or(field)
                )),
                None => out.push(format!(
                    "step `{}`: `requires` entry `{field}` is none of `body`, `body.NAME`, `query.NAME`, `headers.NAME`, `form.NAME`; it is not checked",
                    step.name
                )),
            }
        }
    }
    out
}

/// The `{name}` holes of a path template once its `{{…}}` templates are set aside.
fn unfilled(path: &str) -> Vec<&str> {
    let mut holes = Vec::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        if rest[start..].starts_with("{{") {
            match rest[start + 2..].find("}}") {
                Some(end) => rest = &rest[start + 2 + end + 2..],
                None => break,
            }
            continue;
        }
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if !after[..end].is_empty() && !after[..end].contains(['{', '/']) => {
                holes.push(&after[..end]);
                rest = &after[end + 1..];
            }
            _ => rest = after,
        }
    }
    holes
}

/// Whether the step sends `field` (`None`: not a field it could name).
fn sends(step: &StepDef, def: &BackendDef, field: &str) -> Option<bool> {
    if field == "body" {
        return Some(step.body.is_some() || step.form.is_some() || step.multipart.is_some());
    }
    let (place, name) = field.split_once('.')?;
    Some(match place {
        "body" => step.body.as_ref().is_some_and(|b| b.get(name).is_some()),
        "query" => step.query.contains_key(name),
        "form" => step.form.as_ref().is_some_and(|f| f.contains_key(name)),
        "multipart" => step.multipart.as_ref().is_some_and(|f| f.contains_key(name)),
        "headers" => step
            .headers
            .keys()
            .chain(def.headers.keys())
            .any(|h| h.eq_ignore_ascii_case(name)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_found_beside_templates() {
        assert_eq!(unfilled("/a/{{input.x}}/b/{workflow_id}/c/{y}"), ["workflow_id", "y"]);
        assert!(unfilled("/a/{{input.x}}").is_empty());
        assert!(unfilled("/a/{}/{").is_empty());
    }

    #[test]
    fn a_required_field_not_sent_and_a_hole_are_warned_of() {
        let config = serde_json::json!({"steps": [{
            "name": "call", "method": "POST", "path": "/w/{workflow_id}/{{input.id}}",
            "body": {"name": "{{input.name}}"}, "query": {"q": "x"},
            "requires": ["body.name", "body.owner", "query.q", "headers.X-Id", "cookie.c"]
        }]});
        let def = crate::config::parse(config.as_object().unwrap()).unwrap();
        let said = warnings(&def);
        assert_eq!(said.len(), 4, "{said:?}");
        assert!(said[0].contains("keeps `{workflow_id}`"), "{said:?}");
        assert!(
            said[1].contains("requires `body.owner`") && said[1].contains("`json: [owner]`"),
            "{said:?}"
        );
        assert!(said[2].contains("requires `headers.X-Id`"), "{said:?}");
        assert!(said[3].contains("`cookie.c` is none of"), "{said:?}");
    }
}
