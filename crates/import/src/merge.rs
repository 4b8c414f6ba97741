//! Re-importing into an existing catalog file: every version already there is kept as it is
//! (a served version never changes: N-ACT §6.1), and each tool whose signature the newer
//! description changes gets it as its next version when the catalog's compatibility rules allow
//! (N-ACT §5.4), or as a new tool (`name_v2`) when it would break callers. A signature that did
//! not change takes the new backend in place (the backend is not part of it).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_core::Catalog;
use toolhost_core::catalog::{Loader, Source, Tool, breaking_changes, lock};

use super::{Imported, render};

/// The rule the compatibility messages end with, said once in the report instead.
const RULE: &str = "(N-ACT §5.4); publish the change as a new tool instead";

/// The tools to write, each with its comment, and what happened to each, for the user.
#[derive(Debug)]
pub struct Merged {
    pub tools: Vec<(Option<String>, Value)>,
    /// The toolkit's `backend:` defaults: the file's, with what this import adds and what the
    /// operator set ([`Imported::fixed`]).
    pub defaults: Value,
    pub report: Vec<String>,
}

/// The tools of a first import: each draft as version 1.0.0.
pub fn fresh(imported: &Imported) -> Vec<(Option<String>, Value)> {
    imported
        .tools
        .iter()
        .map(|d| (Some(d.source.clone()), d.to_tool(&d.first_version())))
        .collect()
}

/// Merges `imported` into the catalog file `existing` (its text; `file` names it in messages).
pub fn merge(existing: &str, file: &str, imported: &Imported) -> Result<Merged, String> {
    let doc: Value = super::document::parse(existing).map_err(|e| format!("{file}: {e}"))?;
    let toolkits = doc["toolkits"].as_array().cloned().unwrap_or_default();
    let [toolkit] = toolkits.as_slice() else {
        return Err(format!(
            "{file} is not a file this command wrote (it should hold one toolkit); choose another --out"
        ));
    };
    if toolkit["name"].as_str() != Some(imported.toolkit.as_str()) {
        return Err(format!(
            "{file} holds toolkit `{}`, not `{}`; pass --toolkit {} or choose another --out",
            toolkit["name"].as_str().unwrap_or_default(),
            imported.toolkit,
            toolkit["name"].as_str().unwrap_or_default()
        ));
    }
    let old = load(file, existing).map_err(|e| format!("{file} does not load, so it cannot be merged into: {e}"))?;
    let drafts = kept_json_results(toolkit, &imported.tools);
    let firsts: Vec<(Option<String>, Value)> = drafts
        .iter()
        .map(|d| (Some(d.source.clone()), d.to_tool(&d.first_version())))
        .collect();
    let new = load("the new import", &render(imported, &firsts))?;
    let mut tools: Vec<(Option<String>, Value)> = toolkit["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (None, t.clone()))
        .collect();
    let mut taken: BTreeSet<String> = tools
        .iter()
        .filter_map(|(_, t)| t["name"].as_str().map(str::to_owned))
        .collect();
    let mut matched = BTreeSet::new();
    let mut report = Vec::new();
    // The file's own values (edited by hand, or set by an earlier overlay) are never lost: the
    // operator's flags and overlay write over them, nothing else does.
    let defaults = keep_edits(
        &toolkit["backend"],
        &imported.defaults,
        &imported.fixed,
        "",
        &mut |key, file, now| {
            report.push(format!(
            "the toolkit's `{key}` is kept as the file has it ({file}); this import would write {now} (an overlay's `{key}` sets it)"
        ));
        },
    );
    for draft in &drafts {
        let (Some(new_tool), current) = (new.find(&draft.name), successor(&draft.name, &taken)) else {
            continue;
        };
        let Some(current) = current else {
            taken.insert(draft.name.clone());
            tools.push((Some(draft.source.clone()), draft.to_tool(&draft.first_version())));
            report.push(format!("`{}`: new tool", draft.name));
            continue;
        };
        matched.insert(current.clone());
        let (Some(old_tool), Some(entry)) = (
            old.find(&current),
            tools.iter_mut().find(|(_, t)| t["name"] == json!(current)),
        ) else {
            continue;
        };
        entry.0 = Some(draft.source.clone());
        let (before, after) = (old_tool.latest(), new_tool.latest());
        let versions = entry.1["versions"].as_array_mut();
        let Some(versions) = versions else { continue };
        if same_signature(old_tool, before, new_tool, after) {
            let next = draft.to_version(&before.semver.to_string());
            if let Some(latest) = versions
                .iter_mut()
                .find(|v| v["version"].as_str() == Some(before.semver.to_string().as_str()))
            {
                let fixed = tool_fixed(&imported.fixed, &draft.name);
                let backend = keep_edits(
                    &latest["backend"],
                    &next["backend"],
                    &fixed,
                    "",
                    &mut |key, file, now| {
                        report.push(format!(
                        "`{current}` {}: its `{key}` is kept as the file has it ({file}); this import would write {now} (an overlay's `{key}` for the tool sets it)",
                        before.semver
                    ));
                    },
                );
                if latest["backend"] != backend {
                    latest["backend"] = backend;
                    report.push(format!(
                        "`{current}` {}: the same signature, the new request (in place)",
                        before.semver
                    ));
                }
            }
            continue;
        }
        let problems = breaking_changes(before, after);
        if problems.is_empty() {
            // The upstream's own version when it has one past ours (chaining), else the next minor.
            let next = match &draft.version {
                Some(theirs) if *theirs > before.semver => theirs.to_string(),
                _ => format!("{}.{}.0", before.semver.major, before.semver.minor + 1),
            };
            let mut version = draft.to_version(&next);
            // A version's backend takes the keys it leaves out from the one before, so an
            // `auth` or `headers` the earlier version has (by hand, or by an earlier overlay)
            // carries on unless this import sets its own.
            let fixed = tool_fixed(&imported.fixed, &draft.name);
            for key in ["auth", "headers"] {
                let earlier = versions.iter().rev().find_map(|v| v["backend"].get(key));
                if let (Some(earlier), Some(now)) = (earlier, version["backend"].get(key))
                    && earlier != now
                    && !fixed.contains(key)
                {
                    report.push(format!(
                        "`{current}` {next}: its `{key}` is kept as the earlier version has it ({earlier}); this import would write {now} (an overlay's `{key}` for the tool sets it)"
                    ));
                    if let Some(backend) = version["backend"].as_object_mut() {
                        backend.remove(key);
                    }
                }
            }
            // The new text is written, not only the new signature's pin (issue #32.9).
            if before.description != after.description {
                version["description"] = json!(after.description);
            }
            versions.push(version);
            report.push(format!(
                "`{current}`: a compatible change ({}), published as version {next}",
                differences(before, after)
            ));
            report.extend(reworded(before, after));
        } else {
            let renamed = next_name(&draft.name, &taken);
            taken.insert(renamed.clone());
            let mut fresh = draft.clone();
            fresh.name.clone_from(&renamed);
            tools.push((Some(draft.source.clone()), fresh.to_tool("1.0.0")));
            report.push(format!(
                "`{current}`: the new signature would break its callers ({}), so it is a new tool `{renamed}`; `{current}` is kept as it was",
                problems
                    .iter()
                    .map(|p| p.trim_end_matches(RULE).trim_end_matches([' ', ';']))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    // Every tool standing for an operation (`name` and its `name_vN` successors) says where it
    // came from, whichever of them the last re-import touched.
    for (comment, tool) in &mut tools {
        let name = tool["name"].as_str().unwrap_or_default();
        if comment.is_none()
            && let Some(draft) = imported.tools.iter().find(|d| {
                name == d.name
                    || name
                        .strip_prefix(&format!("{}_v", d.name))
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
        {
            *comment = Some(draft.source.clone());
        }
    }
    for (_, tool) in &tools {
        let name = tool["name"].as_str().unwrap_or_default();
        let from_document = imported.tools.iter().any(|d| d.name == name);
        if !from_document && !matched.contains(name) && old.find(name).is_some() {
            report.push(format!(
                "`{name}`: no longer in the document (or filtered out); kept, remove it by hand once no caller uses it"
            ));
        }
    }
    Ok(Merged {
        tools,
        defaults,
        report,
    })
}

/// A catalog file loaded as `check` loads it (secret names not checked).
fn load(name: &str, text: &str) -> Result<Catalog, String> {
    let factory = toolhost_sculpt::Factory::for_checking().map_err(|e| e.to_string())?;
    let loader = Loader::default()
        .with_backend(toolhost_sculpt::KIND, Arc::new(factory))
        .with_backend(toolhost_upstream::KIND, Arc::new(toolhost_upstream::Factory::default()));
    let source = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    loader
        .load(&[source])
        .map_err(|problems| problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

/// The newest tool standing for `name`: `name`, or its last `name_vN` successor.
fn successor(name: &str, taken: &BTreeSet<String>) -> Option<String> {
    let mut current = taken.contains(name).then(|| name.to_owned());
    for n in 2.. {
        let candidate = format!("{name}_v{n}");
        if !taken.contains(&candidate) {
            break;
        }
        current = Some(candidate);
    }
    current
}

fn next_name(name: &str, taken: &BTreeSet<String>) -> String {
    (2..)
        .map(|n| format!("{name}_v{n}"))
        .find(|c| !taken.contains(c))
        .unwrap_or_else(|| name.to_owned())
}

/// The drafts, each MCP tool's `content` output `result` written as the `json` output the file
/// already has for it: an import before `content` outputs (issue #39.1) declared `json`, which
/// carries the same blocks, and the upstream did not change, so a re-import changes nothing.
fn kept_json_results(toolkit: &Value, drafts: &[super::Draft]) -> Vec<super::Draft> {
    let had_json = |name: &str| {
        toolkit["tools"].as_array().into_iter().flatten().any(|tool| {
            tool["name"] == json!(name)
                && tool["versions"]
                    .as_array()
                    .and_then(|v| v.last())
                    .and_then(|v| v["outputs"].as_array())
                    .is_some_and(|outputs| {
                        outputs
                            .iter()
                            .any(|o| o["name"] == "result" && o["type"] == "json" && o.get("schema").is_none())
                    })
        })
    };
    drafts
        .iter()
        .cloned()
        .map(|mut draft| {
            if had_json(&draft.name) {
                for output in draft
                    .outputs
                    .iter_mut()
                    .filter(|o| o["name"] == "result" && o["type"] == "content")
                {
                    output["type"] = json!("json");
                }
            }
            draft
        })
        .collect()
}

/// Whether two versions show callers the same signature (their numbers aside).
fn same_signature(
    old_tool: &Tool,
    old: &toolhost_core::catalog::Version,
    new_tool: &Tool,
    new: &toolhost_core::catalog::Version,
) -> bool {
    let strip = |mut v: Value| {
        if let Some(o) = v.as_object_mut() {
            o.remove("version");
            o.remove("name");
        }
        v
    };
    strip(lock::signature(old_tool, old)) == strip(lock::signature(new_tool, new))
}

/// What a compatible change changed, in words.
fn differences(old: &toolhost_core::catalog::Version, new: &toolhost_core::catalog::Version) -> String {
    let parts = toolhost_core::catalog::changes(old, new);
    if parts.is_empty() {
        "loosens constraints or rewords parameters".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The backend keys that are what the import read of the API, always written as it read them.
const IMPORTED: [&str; 7] = ["steps", "outputs", "kind", "pin", "tool", "version", "idempotent"];

/// `file`'s backend block with `now`'s keys added: a key both have and that differs keeps the
/// file's value (said through `kept`), unless the operator set it (`fixed`, `headers.NAME` for
/// one header). `steps` and `outputs` are the import's own (the request it read).
fn keep_edits(
    file: &Value,
    now: &Value,
    fixed: &BTreeSet<String>,
    prefix: &str,
    kept: &mut dyn FnMut(&str, &Value, &Value),
) -> Value {
    let (Some(file_keys), Some(now_keys)) = (file.as_object(), now.as_object()) else {
        return now.clone();
    };
    let mut out = file_keys.clone();
    for (key, value) in now_keys {
        let path = format!("{prefix}{key}");
        match file_keys.get(key) {
            Some(mine) if mine == value => {}
            Some(mine) if key == "headers" && prefix.is_empty() => {
                out.insert(key.clone(), keep_edits(mine, value, fixed, "headers.", kept));
            }
            // What the import read of the API (the request, the upstream's tool) is its own.
            Some(mine) if !(fixed.contains(&path) || prefix.is_empty() && IMPORTED.contains(&key.as_str())) => {
                kept(&path, mine, value);
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// The keys of [`Imported::fixed`] for tool `name`, without its name.
fn tool_fixed(fixed: &BTreeSet<String>, name: &str) -> BTreeSet<String> {
    let prefix = format!("{name}.");
    fixed
        .iter()
        .filter_map(|k| k.strip_prefix(&prefix))
        .map(str::to_owned)
        .collect()
}

/// The texts a compatible change rewords, old and new, for the operator to read before serving
/// them.
fn reworded(old: &toolhost_core::catalog::Version, new: &toolhost_core::catalog::Version) -> Vec<String> {
    let mut lines = Vec::new();
    let mut diff = |what: String, was: &str, now: &str| {
        if was != now {
            lines.push(format!("    {what}:\n      - {was}\n      + {now}"));
        }
    };
    diff("description".to_owned(), &old.description, &new.description);
    let texts = |v: &toolhost_core::catalog::Version| -> Vec<(String, String)> {
        let inputs = v
            .inputs
            .iter()
            .map(|i| (format!("input `{}`", i.name), i.description.clone()));
        let outputs = v
            .outputs
            .iter()
            .map(|o| (format!("output `{}`", o.name), o.description.clone()));
        inputs.chain(outputs).collect()
    };
    let before = texts(old);
    for (what, now) in texts(new) {
        if let Some((_, was)) = before.iter().find(|(w, _)| *w == what) {
            diff(what, was, &now);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_own_values_are_kept_unless_the_operator_set_them() {
        let file = json!({"kind": "http", "base_url": "https://a", "auth": {"bearer": "{{secret.HAND}}"},
            "headers": {"Accept": "application/json", "X-Mine": "1"}, "retries": 0, "steps": ["old"]});
        let now = json!({"kind": "http", "base_url": "https://b", "auth": {"bearer": "{{secret.DOC}}"},
            "headers": {"Accept": "text/plain"}, "steps": ["new"]});
        let mut kept = Vec::new();
        let merged = keep_edits(&file, &now, &BTreeSet::new(), "", &mut |key, _, _| {
            kept.push(key.to_owned())
        });
        assert_eq!(
            merged,
            json!({"kind": "http", "base_url": "https://a", "auth": {"bearer": "{{secret.HAND}}"},
                "headers": {"Accept": "application/json", "X-Mine": "1"}, "retries": 0, "steps": ["new"]})
        );
        assert_eq!(kept, ["auth", "base_url", "headers.Accept"]);

        let fixed: BTreeSet<String> = ["auth", "headers.Accept"].map(str::to_owned).into();
        let merged = keep_edits(&file, &now, &fixed, "", &mut |_, _, _| {});
        assert_eq!(merged["auth"], json!({"bearer": "{{secret.DOC}}"}));
        assert_eq!(merged["headers"], json!({"Accept": "text/plain", "X-Mine": "1"}));
        assert_eq!(merged["base_url"], "https://a");
        assert_eq!(
            tool_fixed(&["pet.auth", "pets.auth", "auth"].map(str::to_owned).into(), "pet"),
            ["auth".to_owned()].into()
        );
    }
}
