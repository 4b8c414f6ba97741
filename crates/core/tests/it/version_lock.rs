//! Issue #22.1 (N-ACT §6.1, §5.4): a served version never changes, between a catalog and its
//! reload, and against the versions.lock kept beside the catalog.

use toolhost_core::Catalog;
use toolhost_core::catalog::lock::{VersionLock, changed};
use toolhost_core::catalog::{Loader, Severity, Source};

fn catalog(versions: &str, tool_extra: &str) -> Catalog {
    let text = format!(
        "toolkits:\n  - name: Weather\n    tools:\n      - name: forecast\n        description: The forecast.\n{tool_extra}        versions:\n{versions}"
    );
    Loader::default()
        .load(&[Source {
            name: "w.yaml".to_owned(),
            text,
        }])
        .unwrap_or_else(|p| panic!("{p:#?}"))
}

fn version(semver: &str, input_type: &str, description: &str) -> String {
    format!(
        "          - version: {semver}\n            description: {description}\n            inputs: [{{ name: city, type: {input_type}, description: A city. }}]\n            outputs: [{{ name: temp, type: int, description: Degrees. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
    )
}

/// 1.0.0 and a later 1.1.0.
fn grown() -> Catalog {
    catalog(
        &format!(
            "{}{}",
            version("1.0.0", "string", "First."),
            version("1.1.0", "string", "Second.")
        ),
        "",
    )
}

#[test]
fn an_in_place_edit_of_a_served_version_is_named() {
    let old = catalog(&version("1.0.0", "string", "First."), "");
    // The input's type changed under the same version number.
    let edited = catalog(&version("1.0.0", "int", "First."), "");
    let problems = changed(&old, &edited);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    let text = problems[0].to_string();
    assert!(
        text.contains("tool `forecast`") && text.contains("version 1.0.0"),
        "{text}"
    );
    assert!(
        text.contains("input `city` changed") && text.contains("new version"),
        "{text}"
    );
    assert_eq!(problems[0].severity, Severity::Error);

    let reworded = catalog(&version("1.0.0", "string", "Reworded."), "");
    assert!(changed(&old, &reworded)[0].to_string().contains("its description"));
}

#[test]
fn metadata_may_change_and_new_versions_may_be_added() {
    let old = catalog(&version("1.0.0", "string", "First."), "");
    let retagged = catalog(&version("1.0.0", "string", "First."), "        tags: [sky]\n");
    assert!(changed(&old, &retagged).is_empty(), "tags are not part of a signature");
    let grown = grown();
    assert!(changed(&old, &grown).is_empty());
    // Dropping a served version, or slipping one in before it, changes what was served.
    assert!(changed(&grown, &old)[0].to_string().contains("removes it"));
    let slipped = catalog(
        &format!(
            "{}{}{}",
            version("1.0.0", "string", "First."),
            version("1.0.5", "string", "Between."),
            version("1.1.0", "string", "Second.")
        ),
        "",
    );
    assert!(
        changed(&grown, &slipped)[0]
            .to_string()
            .contains("would become version 3")
    );
}

#[test]
fn the_lock_catches_what_a_restart_would_hide() {
    let old = catalog(&version("1.0.0", "string", "First."), "");
    let lock = VersionLock::default().extended(&old);
    assert!(lock.verify(&old, "versions.lock").is_empty());
    let text = lock.to_text();
    assert!(
        text.contains("\"forecast\"") && text.contains("\"1.0.0\": \"sha256:"),
        "{text}"
    );

    let edited = catalog(&version("1.0.0", "int", "First."), "");
    let problems = lock.verify(&edited, "versions.lock");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].severity, Severity::Error);
    assert!(problems[0].to_string().contains("changed in place"), "{}", problems[0]);

    let grown = grown();
    let problems = lock.verify(&grown, "versions.lock");
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].severity,
        Severity::Warning,
        "a new version is not locked yet"
    );
    assert!(problems[0].to_string().contains("check --lock"));
    let extended = lock.extended(&grown);
    assert_eq!(extended.tools["forecast"].len(), 2);
    assert_eq!(
        extended.tools["forecast"]["1.0.0"], lock.tools["forecast"]["1.0.0"],
        "locked ones are kept"
    );
}

/// Issue #32.2: what an enum name sends upstream is part of a served version: changing it in
/// place is caught on reload, and a catalog without wire values keeps its hashes.
#[test]
fn a_wire_value_changed_in_place_is_named() {
    let with = |wire: &str| {
        format!(
            "          - version: 1.0.0\n            inputs: [{{ name: state, type: enum, description: State., values: [{{ name: OPEN, description: Open.{wire} }}] }}]\n            outputs: [{{ name: temp, type: int, description: Degrees. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
        )
    };
    let (plain, open, opened) = (
        catalog(&with(""), ""),
        catalog(&with(", value: open"), ""),
        catalog(&with(", value: opened"), ""),
    );
    let problems = changed(&open, &opened);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].to_string().contains("input `state` changed"),
        "{}",
        problems[0]
    );
    assert_eq!(
        changed(&plain, &open).len(),
        1,
        "a wire value added in place is a change too"
    );
    let signature = |c: &Catalog| {
        let tool = c.find("forecast").unwrap();
        toolhost_core::catalog::lock::signature(tool, &tool.versions[0])
    };
    assert!(
        signature(&plain)["inputs"][0].get("wire").is_none(),
        "no wire values, the signature as before: locked hashes still hold"
    );
    assert_eq!(
        signature(&open)["inputs"][0]["wire"],
        serde_json::json!([["OPEN", "open"]])
    );
}

/// `forecast`-shaped tools: `(toolkit, name, id)`, one version each, so a test can rename one
/// and keep its `id:`, or make two toolkit and name pairs meet in one OTC name.
fn tools(tools: &[(&str, &str, Option<&str>)]) -> Catalog {
    let mut text = String::from("toolkits:\n");
    for (toolkit, name, id) in tools {
        let id = id.map(|id| format!("        id: {id}\n")).unwrap_or_default();
        text.push_str(&format!(
            "  - name: {toolkit}\n    tools:\n      - name: {name}\n        description: A tool.\n{id}        versions:\n{}",
            version("1.0.0", "string", "First.")
        ));
    }
    Loader::default()
        .load(&[Source {
            name: "t.yaml".to_owned(),
            text,
        }])
        .unwrap_or_else(|p| panic!("{p:#?}"))
}

const ID: &str = "6f1f3a52-9d8e-4a4e-9d55-7d2c0f5b1e11";

/// Issue #37.13: a `toolId` once served names its tool for good. `add_numbers` renamed to
/// `divide_numbers` with its `id:` kept would be version 1 of another tool under the same
/// toolId: refused on reload (`changed`) and on restart (the lock), naming both tools.
#[test]
fn a_rename_that_keeps_the_tool_id_is_refused_on_reload_and_on_restart() {
    let served = tools(&[("Math", "add_numbers", Some(ID))]);
    let renamed = tools(&[("Math", "divide_numbers", Some(ID))]);
    let on_reload = changed(&served, &renamed);
    assert_eq!(on_reload.len(), 1, "{on_reload:#?}");
    let text = on_reload[0].to_string();
    assert!(
        text.contains("tool `divide_numbers`") && text.contains(ID) && text.contains("served as tool `add_numbers`"),
        "{text}"
    );

    let lock = VersionLock::default().extended(&served);
    assert_eq!(lock.tool_ids[ID], "add_numbers");
    let on_restart = lock.verify(&renamed, "versions.lock");
    let errors: Vec<_> = on_restart.iter().filter(|p| p.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{on_restart:#?}");
    assert!(
        errors[0].to_string().contains("versions.lock") && errors[0].to_string().contains("add_numbers"),
        "{}",
        errors[0]
    );
    // Through the file as written, too (format 2 holds the identities).
    let read = VersionLock::parse(&lock.to_text()).unwrap();
    assert_eq!(read, lock);
    assert!(
        !read
            .verify(&renamed, "versions.lock")
            .iter()
            .all(|p| p.severity == Severity::Warning)
    );

    // A rename with a new id is a new tool: allowed (the old one is withdrawn whole).
    let fresh = tools(&[("Math", "divide_numbers", None)]);
    assert!(changed(&served, &fresh).is_empty());
    assert!(
        lock.verify(&fresh, "versions.lock")
            .iter()
            .all(|p| p.severity == Severity::Warning)
    );
    // And keeping the tool while changing its toolkit keeps its own identity free of others.
    let moved = tools(&[("Arithmetic", "add_numbers", Some(ID))]);
    assert!(changed(&served, &moved).is_empty());
}

/// Issue #37.13: OTC's name is `{toolkit}_{name}`, so `Math_add` + `numbers` and `Math` +
/// `add_numbers` meet in `Math_add_numbers`: one catalog may not follow the other.
#[test]
fn an_otc_name_served_as_another_tool_is_refused() {
    let served = tools(&[("Math_add", "numbers", None)]);
    let other = tools(&[("Math", "add_numbers", None)]);
    let problems = changed(&served, &other);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].to_string().contains("OTC name `Math_add_numbers`")
            && problems[0].to_string().contains("served as tool `numbers`"),
        "{}",
        problems[0]
    );
    let lock = VersionLock::default().extended(&served);
    assert!(
        lock.verify(&other, "versions.lock")
            .iter()
            .any(|p| p.severity == Severity::Error && p.to_string().contains("Math_add_numbers"))
    );
}

/// Issue #37.14: a lock of a format this toolhost does not know is refused, never read as if it
/// were one it knows (and then rewritten); format 1 (before identities) is still read.
#[test]
fn a_lock_of_an_unknown_format_is_refused() {
    for text in [
        r#"{"format": 3, "tools": {}}"#,
        r#"{"format": 3, "entries": [1, 2]}"#,
        r#"{"format": "2", "tools": {}}"#,
    ] {
        let error = VersionLock::parse(text).unwrap_err();
        assert!(
            error.contains("format") && error.contains("upgrade toolhost"),
            "{text}: {error}"
        );
    }
    let old = VersionLock::parse(r#"{"format": 1, "tools": {"forecast": {"1.0.0": "sha256:00"}}}"#).unwrap();
    assert_eq!(old.format, 1);
    assert!(old.tool_ids.is_empty());
    assert_eq!(
        old.extended(&grown()).format,
        2,
        "written in the format with identities"
    );
}
