//! The catalog rules of docs/protocols.md §1 as enforced by `catalog/load/`, one test per rule.

use toolhost_core::catalog::TOOL_ID_NAMESPACE;
use toolhost_core::{InputType, Severity, VersionSelector};
use uuid::Uuid;

use crate::{
    FILE, TOOLKIT, V, assert_problem, assert_problem_in, at_tool, at_version, clean, doc, error_with, load, load_files,
    ok, problems_of, render, t, the_error, tool, v,
};

use Severity::{Error, Warning};

fn one() -> V {
    v("1.0.0")
}

// ---------------------------------------------------------------------------------------------
// Names

#[test]
fn tool_name_with_leading_digit_is_refused() {
    let p = the_error(&tool("1forecast", &[one()]));
    assert_problem(
        &p,
        Error,
        at_tool("1forecast"),
        "the tool name `1forecast` is not allowed",
    );
}

#[test]
fn tool_name_with_hyphen_is_refused_and_warned_about() {
    let problems = problems_of(&[(FILE, &tool("get-forecast", &[one()]))]);
    let error = problems.iter().find(|p| p.severity == Error).expect("an error");
    assert_problem(
        error,
        Error,
        at_tool("get-forecast"),
        "the tool name `get-forecast` is not allowed",
    );
    assert_eq!(
        problems.iter().filter(|p| p.severity == Error).count(),
        1,
        "{}",
        render(&problems)
    );
    let warning = problems
        .iter()
        .find(|p| p.severity == Warning)
        .expect("a snake_case warning");
    assert_problem(warning, Warning, at_tool("get-forecast"), "not snake_case");
}

#[test]
fn tool_name_of_65_chars_is_refused_but_64_is_a_name() {
    let long = "a".repeat(65);
    let p = error_with(&tool(&long, &[one()]), "is not allowed");
    assert_problem(
        &p,
        Error,
        at_tool(&long),
        &format!("the tool name `{long}` is not allowed"),
    );

    // 64 characters is a valid name; only the OTC length rule (toolkit + name) refuses it.
    let name = "a".repeat(64);
    let problems = problems_of(&[(FILE, &tool(&name, &[one()]))]);
    assert!(
        problems.iter().all(|p| !p.message.contains("is not allowed")),
        "{}",
        render(&problems)
    );
    assert!(
        problems.iter().any(|p| p.message.contains("the OTC name")),
        "{}",
        render(&problems)
    );
}

#[test]
fn toolkit_name_invalid() {
    for bad in ["9Weather", "Wea-ther", &"W".repeat(65)] {
        // A 65-character toolkit also breaks the OTC length rule; pick the name error.
        let p = error_with(&doc(&[t("forecast", &[one()]).toolkit(bad)]), "is not allowed");
        let field = format!("toolkit `{bad}`");
        let at = crate::At {
            field: Some(&field),
            ..crate::At::default()
        };
        assert_problem(&p, Error, at, &format!("the toolkit name `{bad}` is not allowed"));
    }
}

#[test]
fn input_name_invalid() {
    let long = "c".repeat(65);
    for bad in ["1city", "city-name", long.as_str()] {
        let p = the_error(&tool("forecast", &[one().input(bad, "string", "")]));
        let field = format!("input `{bad}`");
        assert_problem(
            &p,
            Error,
            at_version("forecast", "1.0.0").field(&field),
            &format!("the input name `{bad}` is not allowed"),
        );
    }
}

#[test]
fn output_name_invalid() {
    let long = "o".repeat(65);
    for bad in ["2temp", "temp-c", long.as_str()] {
        let p = the_error(&tool("forecast", &[one().output(bad, "number", "")]));
        let field = format!("output `{bad}`");
        assert_problem(
            &p,
            Error,
            at_version("forecast", "1.0.0").field(&field),
            &format!("the output name `{bad}` is not allowed"),
        );
    }
}

#[test]
fn non_snake_case_tool_name_is_only_a_warning() {
    let catalog = ok(&tool("GetForecast", &[one()]));
    assert!(catalog.find("GetForecast").is_some(), "the tool is served");
    let [w] = catalog.warnings() else {
        panic!("expected one warning, got:\n{}", render(catalog.warnings()))
    };
    assert_problem(w, Warning, at_tool("GetForecast"), "`GetForecast` is not snake_case");
    assert!(
        w.to_string().starts_with("warning: x.yaml: tool `GetForecast`: "),
        "{w}"
    );
}

#[test]
fn otc_name_longer_than_64_is_refused() {
    // "Weather_" is 8 characters: a 56-character name makes 64, a 57-character one 65.
    let fits = "f".repeat(64 - TOOLKIT.len() - 1);
    clean(&tool(&fits, &[one()]));
    let name = "f".repeat(64 - TOOLKIT.len());
    let p = the_error(&tool(&name, &[one()]));
    assert_problem(
        &p,
        Error,
        at_tool(&name),
        &format!("the OTC name `{TOOLKIT}_{name}` is 65 characters"),
    );
}

// ---------------------------------------------------------------------------------------------
// Uniqueness and ids

#[test]
fn duplicate_tool_names_across_files_name_the_first_file() {
    let a = doc(&[t("forecast", &[one()]).toolkit("Alpha")]);
    let b = doc(&[t("forecast", &[one()]).toolkit("Beta")]);
    let problems = problems_of(&[("a.yaml", &a), ("b.yaml", &b)]);
    let [p] = problems.as_slice() else {
        panic!("expected one problem, got:\n{}", render(&problems))
    };
    assert_problem_in(
        p,
        "b.yaml",
        Error,
        at_tool("forecast"),
        "the name is already used by a tool in a.yaml",
    );
}

#[test]
fn duplicate_tool_names_in_one_toolkit_also_collide_on_the_derived_id() {
    let text = doc(&[t("forecast", &[one()]), t("forecast", &[one()])]);
    let p = error_with(&text, "already used");
    assert_problem(&p, Error, at_tool("forecast"), "already used by a tool in x.yaml");
    let p = error_with(&text, "is already the id of tool");
    assert_problem(
        &p,
        Error,
        at_tool("forecast").field("id"),
        "is already the id of tool `forecast`",
    );
}

#[test]
fn duplicate_explicit_uuids_are_refused() {
    let id = "id: 0479a45d-ad0a-49d4-94db-75edf00d2ca4";
    let text = doc(&[t("forecast", &[one()]).with(id), t("alerts", &[one()]).with(id)]);
    let p = the_error(&text);
    assert_problem(
        &p,
        Error,
        at_tool("alerts").field("id"),
        "the id 0479a45d-ad0a-49d4-94db-75edf00d2ca4 is already the id of tool `forecast`",
    );
}

#[test]
fn explicit_uuid_equal_to_another_tools_derived_id_is_refused() {
    let derived = Uuid::new_v5(&TOOL_ID_NAMESPACE, b"Weather.forecast");
    let text = doc(&[
        t("forecast", &[one()]),
        t("alerts", &[one()]).with(&format!("id: {derived}")),
    ]);
    let p = the_error(&text);
    assert_problem(
        &p,
        Error,
        at_tool("alerts").field("id"),
        "is already the id of tool `forecast`",
    );
}

#[test]
fn explicit_nil_uuid_is_not_shared() {
    let id = "id: 00000000-0000-0000-0000-000000000000";
    let problems = problems_of(&[(
        FILE,
        &doc(&[t("forecast", &[one()]).with(id), t("alerts", &[one()]).with(id)]),
    )]);
    assert!(
        problems
            .iter()
            .any(|p| p.severity == Error && p.place.field.as_deref() == Some("id")),
        "{}",
        render(&problems)
    );
}

#[test]
fn bad_uuid_is_refused() {
    let p = the_error(&doc(&[t("forecast", &[one()]).with("id: not-a-uuid")]));
    assert_problem(&p, Error, at_tool("forecast").field("id"), "`not-a-uuid` is not a UUID");
}

#[test]
fn explicit_uuid_is_used_and_found() {
    let catalog = clean(&doc(&[
        t("forecast", &[one()]).with("id: 0479A45D-AD0A-49D4-94DB-75EDF00D2CA4")
    ]));
    let tool = catalog.find("forecast").expect("tool");
    assert_eq!(tool.id.to_string(), "0479a45d-ad0a-49d4-94db-75edf00d2ca4");
    assert_eq!(
        catalog
            .find("0479a45dad0a49d494db75edf00d2ca4")
            .map(|t| t.name.as_str()),
        Some("forecast")
    );
}

#[test]
fn default_tool_uuid_is_stable_uuid_v5_of_toolkit_dot_name() {
    let text = tool("forecast", &[one()]);
    let first = clean(&text).find("forecast").expect("tool").id;
    let second = clean(&text).find("forecast").expect("tool").id;
    assert_eq!(first, second, "the id is the same across loads");
    assert_eq!(first, Uuid::new_v5(&TOOL_ID_NAMESPACE, b"Weather.forecast"));
    assert_eq!(first.get_version_num(), 5);
    // The toolkit is part of the id.
    let other = clean(&doc(&[t("forecast", &[one()]).toolkit("Climate")]))
        .find("forecast")
        .expect("tool")
        .id;
    assert_eq!(other, Uuid::new_v5(&TOOL_ID_NAMESPACE, b"Climate.forecast"));
    assert_ne!(first, other);
}

// ---------------------------------------------------------------------------------------------
// Descriptions

#[test]
fn empty_description_is_refused() {
    let p = the_error(&doc(&[t("forecast", &[one()]).description("   ")]));
    assert_problem(
        &p,
        Error,
        at_tool("forecast").field("description"),
        "the description is empty",
    );
}

#[test]
fn description_of_2000_chars_is_refused_and_1999_allowed() {
    clean(&doc(&[t("forecast", &[one()]).description(&"d".repeat(1999))]));
    let p = the_error(&doc(&[t("forecast", &[one()]).description(&"d".repeat(2000))]));
    assert_problem(
        &p,
        Error,
        at_tool("forecast").field("description"),
        "the description has 2000 characters",
    );
}

#[test]
fn description_length_counts_characters_not_bytes() {
    // 1999 two-byte characters are 3998 bytes but still fewer than 2000 characters.
    clean(&doc(&[t("forecast", &[one()]).description(&"é".repeat(1999))]));
}

#[test]
fn version_description_is_checked_and_rewords() {
    let p = the_error(&tool("forecast", &[one().with("description: \"\"")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("description"),
        "the description is empty",
    );

    let catalog = clean(&tool(
        "forecast",
        &[one(), v("1.1.0").with("description: \"Reworded.\"")],
    ));
    let tool = catalog.find("forecast").expect("tool");
    assert_eq!(tool.versions[0].description, "A tool for tests.");
    assert_eq!(tool.latest().description, "Reworded.");
}

#[test]
fn input_and_output_descriptions_are_checked() {
    let p = the_error(&tool(
        "forecast",
        &[one().raw_input("{name: city, description: \"  \"}")],
    ));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("input `city`"),
        "the description is empty",
    );
    let long = "d".repeat(2000);
    let text = tool(
        "forecast",
        &[one().raw_input(&format!("{{name: city, description: {long}}}"))],
    );
    let p = the_error(&text);
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("input `city`"),
        "the description has 2000 characters",
    );
}

// ---------------------------------------------------------------------------------------------
// Versions

#[test]
fn tool_without_versions_is_refused() {
    let p = the_error(&tool("forecast", &[]));
    assert_problem(&p, Error, at_tool("forecast"), "the tool has no versions");
}

#[test]
fn unparseable_semver_is_refused() {
    for bad in ["one", "1.0", "1", "v1.0.0"] {
        let p = the_error(&tool("forecast", &[v(&format!("\"{bad}\""))]));
        assert_problem(
            &p,
            Error,
            at_version("forecast", bad),
            &format!("`{bad}` is not a semantic version"),
        );
    }
}

#[test]
fn pre_release_and_build_suffixes_are_refused() {
    for bad in ["1.0.0-beta.1", "1.0.0+build.5"] {
        let p = the_error(&tool("forecast", &[v(bad)]));
        assert_problem(
            &p,
            Error,
            at_version("forecast", bad),
            "pre-release and build suffixes are not allowed",
        );
    }
}

#[test]
fn versions_must_strictly_increase() {
    let p = the_error(&tool("forecast", &[v("1.1.0"), v("1.0.0")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0"),
        "comes after version 1.1.0 in the list but is not greater",
    );
    let p = the_error(&tool("forecast", &[v("1.0.0"), v("1.0.0")]));
    assert_problem(&p, Error, at_version("forecast", "1.0.0"), "comes after version 1.0.0");
    // Numeric, not lexical, order: 1.10.0 follows 1.9.0.
    clean(&tool("forecast", &[v("1.9.0"), v("1.10.0")]));
}

#[test]
fn version_numbers_are_positions_in_history() {
    let catalog = clean(&tool("forecast", &[v("0.1.0"), v("1.0.0"), v("2.5.1")]));
    let tool = catalog.find("forecast").expect("tool");
    let numbers: Vec<(u32, String)> = tool.versions.iter().map(|v| (v.number, v.semver.to_string())).collect();
    assert_eq!(numbers, [(1, "0.1.0".into()), (2, "1.0.0".into()), (3, "2.5.1".into())]);
    assert_eq!(tool.latest().number, 3);
}

#[test]
fn retired_version_keeps_its_number_but_is_not_resolvable() {
    let catalog = clean(&tool(
        "forecast",
        &[
            one().with("retired: true"),
            v("1.1.0"),
            v("1.2.0").with("retired: true"),
        ],
    ));
    let tool = catalog.find("forecast").expect("tool");
    assert_eq!(tool.versions.len(), 3);
    assert!(tool.versions[0].retired);
    assert_eq!(tool.versions[1].number, 2);
    assert!(
        tool.resolve(&VersionSelector::Number(1)).is_none(),
        "retired 1.0.0 is not served"
    );
    assert!(
        tool.resolve(&VersionSelector::Number(3)).is_none(),
        "retired 1.2.0 is not served"
    );
    assert!(
        tool.resolve(&VersionSelector::Semver(semver::Version::new(1, 0, 0)))
            .is_none()
    );
    assert_eq!(tool.resolve(&VersionSelector::Number(2)).map(|v| v.number), Some(2));
    // Latest skips a retired newest version.
    assert_eq!(
        tool.resolve(&VersionSelector::Latest).map(|v| v.semver.to_string()),
        Some("1.1.0".into())
    );
    let served: Vec<u32> = tool.served_versions().map(|v| v.number).collect();
    assert_eq!(served, [2]);
}

#[test]
fn all_versions_retired_is_a_warning_and_the_tool_is_absent() {
    let text = doc(&[t("forecast", &[one().with("retired: true")]), t("alerts", &[one()])]);
    let catalog = ok(&text);
    assert!(catalog.find("forecast").is_none(), "a fully retired tool is not served");
    assert!(catalog.find("alerts").is_some());
    let [w] = catalog.warnings() else {
        panic!("expected one warning, got:\n{}", render(catalog.warnings()))
    };
    assert_problem(w, Warning, at_tool("forecast"), "every version is retired");
}

// ---------------------------------------------------------------------------------------------
// Backends and timeouts

#[test]
fn unknown_backend_kind_is_refused() {
    let p = the_error(&tool("forecast", &[one().backend("{kind: http, url: \"http://x\"}")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("backend"),
        "unknown backend kind `http`; the kinds are: native",
    );
}

#[test]
fn unknown_native_function_lists_the_functions() {
    let p = the_error(&tool(
        "forecast",
        &[one().backend("{kind: native, function: weather.guess}")],
    ));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("backend"),
        "no native function `weather.guess`",
    );
    for name in [
        "calculator.add",
        "calculator.divide",
        "testing.echo",
        "testing.wrong_shape",
    ] {
        assert!(p.message.contains(name), "{p} does not list {name}");
    }
}

#[test]
fn native_backend_config_is_checked() {
    let backend = |b: &str| tool("forecast", &[one().backend(b)]);
    let at = at_version("forecast", "1.0.0").field("backend");
    let p = the_error(&backend("{kind: native}"));
    assert_problem(&p, Error, at, "`function` is missing");
    let p = the_error(&backend("{kind: native, function: testing.echo, delay_ms: soon}"));
    assert_problem(&p, Error, at, "`delay_ms` must be a whole number");
    let p = the_error(&backend("{kind: native, function: testing.echo, fnuction: x}"));
    assert_problem(&p, Error, at, "unknown key `fnuction`");
}

#[test]
fn zero_timeout_is_refused() {
    let p = the_error(&tool("forecast", &[one().with("timeout_ms: 0")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("timeout_ms"),
        "a timeout of 0 ms lets no call finish",
    );
}

#[test]
fn zero_tool_level_timeout_is_refused() {
    let p = the_error(&doc(&[t("forecast", &[one()]).with("timeout_ms: 0")]));
    assert_problem(
        &p,
        Error,
        at_tool("forecast").field("timeout_ms"),
        "a timeout of 0 ms lets no call finish",
    );
}

#[test]
fn timeouts_fall_back_from_version_to_tool_to_default() {
    let text = doc(&[t("forecast", &[one(), v("1.1.0").with("timeout_ms: 250")]).with("timeout_ms: 1500")]);
    let catalog = clean(&text);
    let found = catalog.find("forecast").expect("tool");
    assert_eq!(found.versions[0].timeout.as_millis(), 1500);
    assert_eq!(found.versions[1].timeout.as_millis(), 250);
    let catalog = clean(&tool("forecast", &[one()]));
    assert_eq!(catalog.find("forecast").expect("tool").latest().timeout.as_secs(), 30);
}

// ---------------------------------------------------------------------------------------------
// File format

#[test]
fn unknown_key_is_refused_with_the_file_named() {
    let p = the_error(&tool("forecast", &[one().input("city", "string", "requried: false")]));
    assert_problem(&p, Error, crate::At::default(), "failed to parse");
    assert!(p.message.contains("requried"), "{p} does not name the unknown key");
}

#[test]
fn yaml_syntax_error_names_the_file() {
    let problems = problems_of(&[
        ("good.yaml", &tool("forecast", &[one()])),
        ("broken.yaml", "toolkits: [\n  - name: {x\n"),
    ]);
    let [p] = problems.as_slice() else {
        panic!("expected one problem, got:\n{}", render(&problems))
    };
    assert_problem_in(p, "broken.yaml", Error, crate::At::default(), "failed to parse");
    assert!(p.to_string().starts_with("error: broken.yaml: failed to parse"), "{p}");
}

#[test]
fn json_catalog_file_loads() {
    let json = serde_json::json!({
        "toolkits": [{
            "name": "Weather",
            "description": "Weather tools.",
            "tools": [{
                "name": "forecast",
                "description": "Forecast the weather.",
                "versions": [{
                    "version": "1.0.0",
                    "inputs": [{"name": "days", "type": "int", "min": 1, "max": 16, "description": "Days ahead."}],
                    "outputs": [{"name": "days", "type": "int", "description": "Echoed days."}],
                    "backend": {"kind": "native", "function": "testing.echo"}
                }]
            }]
        }]
    });
    let catalog = load_files(&[("weather.json", &json.to_string())]).unwrap_or_else(|p| panic!("{}", render(&p)));
    let tool = catalog.find("forecast").expect("tool");
    assert_eq!(
        tool.latest().input("days").map(|p| &p.kind),
        Some(&InputType::Int { min: Some(1), max: 16 })
    );
    assert_eq!(
        catalog.toolkits().get("Weather"),
        Some(&Some("Weather tools.".to_owned()))
    );

    // A broken JSON file is reported against its own name.
    let problems = problems_of(&[("weather.json", "{\"toolkits\": [")]);
    let [p] = problems.as_slice() else {
        panic!("{}", render(&problems))
    };
    assert_problem_in(p, "weather.json", Error, crate::At::default(), "failed to parse");
}

// ---------------------------------------------------------------------------------------------
// Many problems at once

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let text = doc(&[
        t("1bad", &[one()]),
        t("forecast", &[v("nope")]),
        t("alerts", &[one().backend("{kind: carrier_pigeon}")]),
    ]);
    let problems = problems_of(&[(FILE, &text)]);
    assert_eq!(problems.len(), 3, "{}", render(&problems));
    assert_problem(
        &problems[0],
        Error,
        at_tool("1bad"),
        "the tool name `1bad` is not allowed",
    );
    assert_problem(
        &problems[1],
        Error,
        at_version("forecast", "nope"),
        "is not a semantic version",
    );
    assert_problem(
        &problems[2],
        Error,
        at_version("alerts", "1.0.0").field("backend"),
        "unknown backend kind `carrier_pigeon`",
    );
}

#[test]
fn load_errors_come_before_warnings() {
    let text = doc(&[t("Forecast", &[one()]), t("alerts", &[]), t("Rain", &[one()])]);
    let problems = problems_of(&[(FILE, &text)]);
    let severities: Vec<Severity> = problems.iter().map(|p| p.severity).collect();
    assert_eq!(severities, [Error, Warning, Warning], "{}", render(&problems));
}

#[test]
fn snake_case_warning_does_not_hide_a_loaded_catalog() {
    let catalog =
        load(&doc(&[t("Forecast", &[one()]), t("alerts", &[one()])])).unwrap_or_else(|p| panic!("{}", render(&p)));
    assert_eq!(catalog.tools().len(), 2);
    assert_eq!(catalog.warnings().len(), 1);
}

/// Files are parsed in parallel; problems still come out in file order, whichever thread
/// parsed which file.
#[test]
fn problems_of_many_files_come_in_file_order() {
    let names: Vec<String> = (0..9).map(|i| format!("f{i}.yaml")).collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "toolkits: [\n  - name: {x\n"))
        .collect();
    let problems = problems_of(&files);
    let order: Vec<&str> = problems.iter().map(|p| p.place.file.as_str()).collect();
    assert_eq!(
        order,
        names.iter().map(String::as_str).collect::<Vec<_>>(),
        "{}",
        render(&problems)
    );
}

/// A file over the YAML parser's node budget is refused with what to do about it.
#[test]
fn an_oversized_file_is_told_to_split() {
    let sources = toolhost_core::testing::generated_catalog_files(2_000, 1);
    let problems = toolhost_core::catalog::Loader::default().load(&sources).unwrap_err();
    let [p] = problems.as_slice() else {
        panic!("expected one problem, got:\n{}", render(&problems))
    };
    assert!(p.to_string().contains("split it into several files"), "{p}");
    // Too deep is another budget, which splitting would not help.
    let deep = format!("toolkits: {}{}\n", "[".repeat(100), "]".repeat(100));
    let problems = problems_of(&[("deep.yaml", deep.as_str())]);
    assert!(
        problems.iter().all(|p| !p.to_string().contains("split it")),
        "{}",
        render(&problems)
    );
}

/// Issue #13: a version without `backend` keeps the previous version's; the first one needs
/// one; a toolkit's `backend:` defaults fill what a version's backend does not set (the
/// version's own keys win), for backends of its `kind`.
#[test]
fn backends_are_inherited_from_the_previous_version_and_the_toolkit() {
    let text = r#"
toolkits:
  - name: Weather
    backend: { kind: native, function: testing.echo }
    tools:
      - name: forecast
        description: The forecast.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, description: A city. }]
            outputs: [{ name: city, type: string, description: The city. }]
            backend: { kind: native }
          - version: 1.1.0
            inputs: [{ name: city, description: A city. }, { name: days, type: int, required: false, description: Days. }]
            outputs: [{ name: city, type: string, description: The city. }]
"#;
    let catalog = crate::load(text).unwrap_or_else(|p| panic!("{p:#?}"));
    let tool = catalog.find("forecast").unwrap();
    assert_eq!(tool.versions.len(), 2);

    let own = text.replace(
        "backend: { kind: native }",
        "backend: { kind: native, function: no.such }",
    );
    let problems = crate::load(&own).unwrap_err();
    assert!(
        problems.iter().any(|p| p.message.contains("no.such")),
        "the version's own key wins: {problems:#?}"
    );

    let first_without = text.replace("            backend: { kind: native }\n", "");
    let first_without = first_without.replace("    backend: { kind: native, function: testing.echo }\n", "");
    let problems = crate::load(&first_without).unwrap_err();
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("the first version needs a `backend`")),
        "{problems:#?}"
    );
}

/// Issue #13: a version may change only the parts of its backend it names: a backend of the
/// same kind takes the keys it leaves out from the version before (a key an earlier version set
/// wins over the toolkit's default); a backend of another kind starts afresh.
#[test]
fn a_version_backend_names_only_what_it_changes() {
    let text = r#"
toolkits:
  - name: Weather
    backend: { kind: native, function: no.such.default }
    tools:
      - name: forecast
        description: The forecast.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, description: A city. }]
            outputs: [{ name: city, type: string, description: The city. }]
            backend: { kind: native, function: testing.echo }
          - version: 1.1.0
            description: The forecast, reworded.
            inputs: [{ name: city, description: A city. }]
            outputs: [{ name: city, type: string, description: The city. }]
            backend: { kind: native }
"#;
    let catalog = crate::load(text).unwrap_or_else(|p| panic!("{p:#?}"));
    assert_eq!(
        catalog.find("forecast").unwrap().versions.len(),
        2,
        "1.1.0 kept 1.0.0's function, not the default"
    );

    let other_kind = text.replace(
        "            backend: { kind: native }\n",
        "            backend: { kind: nope }\n",
    );
    let problems = crate::load(&other_kind).unwrap_err();
    assert!(
        problems.iter().any(|p| p.message.contains("nope")),
        "another kind starts afresh: {problems:#?}"
    );
}

/// Issue #31.6: `Units.convert_length` and `Units_convert.length` are both `Units_convert_length`
/// on OTC; the model would see one tool for two.
#[test]
fn tools_whose_otc_names_collide_are_refused() {
    let text = doc(&[
        t("convert_length", &[one()]).toolkit("Units"),
        t("length", &[one()]).toolkit("Units_convert"),
    ]);
    let p = the_error(&text);
    assert_problem(
        &p,
        Error,
        at_tool("length"),
        "its OTC name `Units_convert_length` ({toolkit}_{name}) is also that of tool `Units.convert_length`",
    );
}

/// Issue #31.6: an empty tag is refused, on a tool and on a toolkit.
#[test]
fn empty_tags_are_refused() {
    let p = the_error(&doc(&[t("forecast", &[one()]).with("tags: [weather, \"\"]")]));
    assert_problem(&p, Error, at_tool("forecast").field("tags"), "a tag is empty");
    let text = "toolkits:\n  - name: Weather\n    tags: [\" \"]\n    tools: []\n";
    let p = the_error(text);
    assert!(p.message.contains("a tag is empty"), "{p}");
}
