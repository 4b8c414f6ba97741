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
