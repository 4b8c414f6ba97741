//! Backward compatibility between consecutive versions (N-ACT §5.4, docs/protocols.md §1,
//! `catalog/compat.rs`): every breaking change is refused at the newer version, naming the tool,
//! both versions and the parameter; every allowed change loads.

use toolhost_core::{Problem, Severity};

use crate::{V, assert_problem, at_version, clean, problems_of, render, the_error, tool, v};

const RULE: &str = "publish the change as a new tool instead";

/// The single error of a two-version history `old` → `new` (1.0.0 → 1.1.0), checked to sit at
/// tool `forecast`, version 1.1.0, and to carry `phrase` and the rule's advice.
#[track_caller]
fn breaks(old: V, new: V, phrase: &str) -> Problem {
    let p = the_error(&tool("forecast", &[old, new]));
    assert_problem(&p, Severity::Error, at_version("forecast", "1.1.0"), phrase);
    assert!(p.message.contains(RULE), "{p} lacks the advice");
    p
}

/// A history `old` → `new` that must load without errors or warnings.
#[track_caller]
fn compatible(old: V, new: V) {
    clean(&tool("forecast", &[old, new]));
}

fn v1() -> V {
    v("1.0.0")
}

fn v2() -> V {
    v("1.1.0")
}

const AB: &str = "values: [{name: A, description: A.}, {name: B, description: B.}]";
const A: &str = "values: [{name: A, description: A.}]";
const ABC: &str = "values: [{name: A, description: A.}, {name: B, description: B.}, {name: C, description: C.}]";

// ---------------------------------------------------------------------------------------------
// Breaking input changes

#[test]
fn removing_an_input_breaks() {
    let p = breaks(
        v1().input("city", "string", ""),
        v2(),
        "removes input `city` that 1.0.0 had",
    );
    assert!(!p.message.contains("renamed"), "{p}");
}

#[test]
fn renaming_an_input_breaks_and_says_renamed() {
    let old = v1().input("city", "string", "");
    let new = v2().input("town", "string", "id: city, required: false");
    breaks(old, new, "removes input `city` (renamed to `town`) that 1.0.0 had");
}

#[test]
fn making_an_optional_input_required_breaks() {
    let p = breaks(
        v1().input("city", "string", "required: false"),
        v2().input("city", "string", ""),
        "makes input `city` required, but 1.0.0 had it optional",
    );
    assert_eq!(
        p.to_string(),
        "error: x.yaml: tool `forecast` version 1.1.0: makes input `city` required, but 1.0.0 had it optional; \
         a new version may only add optional inputs (N-ACT §5.4); publish the change as a new tool instead"
    );
}

#[test]
fn adding_a_required_input_breaks() {
    breaks(
        v1().input("city", "string", ""),
        v2().input("city", "string", "").input("units", "string", ""),
        "adds input `units` as required",
    );
}

#[test]
fn changing_an_input_type_breaks() {
    breaks(
        v1().input("city", "string", ""),
        v2().input("city", "int", ""),
        "changes the type of input `city` from string in 1.0.0 to int in 1.1.0",
    );
    // int → number widens the values but is still a type change.
    let p = the_error(&tool(
        "forecast",
        &[v1().input("n", "int", ""), v2().input("n", "number", "")],
    ));
    assert!(
        p.message
            .contains("changes the type of input `n` from int in 1.0.0 to number in 1.1.0"),
        "{p}"
    );
}

#[test]
fn lowering_string_max_length_breaks() {
    breaks(
        v1().input("city", "string", "max_length: 10"),
        v2().input("city", "string", "max_length: 5"),
        "lowers `max_length` of input `city` from 10 to 5",
    );
}

#[test]
fn adding_string_max_length_breaks() {
    breaks(
        v1().input("city", "string", ""),
        v2().input("city", "string", "max_length: 5"),
        "adds `max_length: 5` to input `city`, which 1.0.0 did not limit",
    );
}

#[test]
fn changing_or_adding_a_pattern_breaks() {
    breaks(
        v1().input("code", "string", "pattern: \"^[A-Z]{2}$\""),
        v2().input("code", "string", "pattern: \"^[A-Z]{2,3}$\""),
        "changes the `pattern` of input `code`",
    );
    breaks(
        v1().input("code", "string", ""),
        v2().input("code", "string", "pattern: \"^[A-Z]+$\""),
        "changes the `pattern` of input `code`",
    );
}

#[test]
fn raising_int_min_breaks() {
    breaks(
        v1().input("n", "int", "min: 0"),
        v2().input("n", "int", "min: 1"),
        "raises the `min` of input `n` to 1",
    );
    breaks(
        v1().input("n", "int", ""),
        v2().input("n", "int", "min: -10"),
        "raises the `min` of input `n` to -10",
    );
}

#[test]
fn lowering_int_max_breaks() {
    breaks(
        v1().input("n", "int", "max: 20"),
        v2().input("n", "int", "max: 19"),
        "lowers the `max` of input `n` from 20 to 19",
    );
    // Against N-ACT's default max.
    breaks(
        v1().input("n", "int", ""),
        v2().input("n", "int", "max: 100"),
        "lowers the `max` of input `n` from 65535 to 100",
    );
}

#[test]
fn tightening_number_bounds_breaks() {
    breaks(
        v1().input("x", "number", "min: 0"),
        v2().input("x", "number", "min: 0.5"),
        "raises the `min` of input `x` to 0.5",
    );
    breaks(
        v1().input("x", "number", "max: 10"),
        v2().input("x", "number", "max: 9.5"),
        "lowers the `max` of input `x` to 9.5",
    );
    breaks(
        v1().input("x", "number", ""),
        v2().input("x", "number", "max: 1"),
        "lowers the `max` of input `x` to 1",
    );
    // Both at once: two problems.
    let problems = problems_of(&[(
        crate::FILE,
        &tool(
            "forecast",
            &[
                v1().input("x", "number", "min: 0, max: 10"),
                v2().input("x", "number", "min: 1, max: 9"),
            ],
        ),
    )]);
    assert_eq!(problems.len(), 2, "{}", render(&problems));
}

#[test]
fn dropping_an_enum_input_value_breaks() {
    breaks(
        v1().input("mode", "enum", AB),
        v2().input("mode", "enum", A),
        "drops value `B` of enum input `mode`",
    );
}

// ---------------------------------------------------------------------------------------------
// Breaking output changes

#[test]
fn removing_an_output_breaks() {
    breaks(
        v1().output("temp", "number", ""),
        v2(),
        "removes output `temp` that 1.0.0 had",
    );
}

#[test]
fn changing_an_output_type_breaks() {
    breaks(
        v1().output("temp", "number", ""),
        v2().output("temp", "string", ""),
        "changes the type of output `temp` from number in 1.0.0 to string in 1.1.0",
    );
    breaks(
        v1().output("kind", "enum", A),
        v2().output("kind", "string", ""),
        "changes the type of output `kind` from enum in 1.0.0 to string in 1.1.0",
    );
}

#[test]
fn making_an_output_optional_breaks() {
    breaks(
        v1().output("temp", "number", ""),
        v2().output("temp", "number", "required: false"),
        "makes output `temp` optional",
    );
}

#[test]
fn adding_an_enum_output_value_breaks() {
    breaks(
        v1().output("kind", "enum", AB),
        v2().output("kind", "enum", ABC),
        "adds value `C` to enum output `kind`",
    );
}

// ---------------------------------------------------------------------------------------------
// Where and how the check runs

#[test]
fn only_consecutive_versions_are_compared_and_each_break_is_named_at_the_newer_version() {
    let text = tool(
        "forecast",
        &[
            v1().input("city", "string", "max_length: 50"),
            v2().input("city", "string", "max_length: 60"),
            v("1.2.0").input("city", "string", "max_length: 55"),
        ],
    );
    let p = the_error(&text);
    assert_problem(
        &p,
        Severity::Error,
        at_version("forecast", "1.2.0"),
        "lowers `max_length` of input `city` from 60 to 55",
    );
}

#[test]
fn retired_versions_are_still_part_of_the_history() {
    let text = tool(
        "forecast",
        &[v1().input("city", "string", "").with("retired: true"), v2()],
    );
    let p = the_error(&text);
    assert_problem(
        &p,
        Severity::Error,
        at_version("forecast", "1.1.0"),
        "removes input `city`",
    );
}

#[test]
fn several_breaks_in_one_version_are_all_reported() {
    let old = v1()
        .input("city", "string", "required: false")
        .input("days", "int", "")
        .output("temp", "number", "");
    let new = v2().input("city", "string", "").input("days", "number", "");
    let problems = problems_of(&[(crate::FILE, &tool("forecast", &[old, new]))]);
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(problems.len(), 3, "{}", render(&problems));
    assert!(messages[0].starts_with("makes input `city` required"), "{messages:?}");
    assert!(
        messages[1].starts_with("changes the type of input `days`"),
        "{messages:?}"
    );
    assert!(messages[2].starts_with("removes output `temp`"), "{messages:?}");
}

// ---------------------------------------------------------------------------------------------
// Allowed changes

#[test]
fn adding_an_optional_input_is_allowed() {
    compatible(
        v1().input("city", "string", ""),
        v2().input("city", "string", "")
            .input("units", "string", "required: false"),
    );
}

#[test]
fn making_a_required_input_optional_is_allowed() {
    compatible(
        v1().input("city", "string", ""),
        v2().input("city", "string", "required: false"),
    );
}

#[test]
fn adding_an_output_is_allowed() {
    compatible(
        v1().output("temp", "number", "").output("wind", "number", ""),
        v2().output("temp", "number", "")
            .output("wind", "number", "")
            .output("humidity", "number", ""),
    );
}

// ---------------------------------------------------------------------------------------------
// Judged on every protocol's projection (issue #31.2)

#[test]
fn a_second_output_on_a_one_output_tool_breaks_otc() {
    // OTC answers `"value": 4.82` for one output and `"value": {...}` for two.
    let p = breaks(
        v1().output("temp", "number", ""),
        v2().output("temp", "number", "").output("humidity", "number", ""),
        "adds output `humidity` to a tool whose 1.0.0 has one output",
    );
    assert!(p.message.contains("OTC"), "{p}");
}

#[test]
fn outputs_added_to_a_tool_that_returned_nothing_break_nact() {
    let p = breaks(
        v1().with("returns_nothing: true"),
        v2().output("temp", "number", ""),
        "returns nothing",
    );
    assert!(p.message.contains("N-ACT"), "{p}");
}

/// Issue #38.2: an optional input N-ACT cannot show is left out of its signature there, so
/// adding one breaks no protocol; adding a required array input breaks every caller.
#[test]
fn an_optional_json_input_may_be_added_and_a_required_one_breaks() {
    crate::ok(&tool(
        "forecast",
        &[
            v1().input("city", "string", "").output("temp", "number", ""),
            v2().input("city", "string", "")
                .input("tags", "json", &format!("required: false, {TAGS}"))
                .output("temp", "number", ""),
        ],
    ));
    breaks(
        v1().input("city", "string", "").output("temp", "number", ""),
        v2().input("city", "string", "")
            .input("tags", "json", TAGS)
            .output("temp", "number", ""),
        "adds input `tags` as required",
    );
}

#[test]
fn making_an_optional_output_required_is_allowed() {
    compatible(
        v1().output("temp", "number", "required: false"),
        v2().output("temp", "number", ""),
    );
}

#[test]
fn loosening_constraints_is_allowed() {
    compatible(
        v1().input("city", "string", "max_length: 10, pattern: \"^[a-z]+$\"")
            .input("n", "int", "min: 1, max: 10")
            .input("x", "number", "min: 0, max: 1"),
        v2().input("city", "string", "max_length: 20")
            .input("n", "int", "min: 0, max: 20")
            .input("x", "number", "min: -1"),
    );
    compatible(
        v1().input("city", "string", "max_length: 10"),
        v2().input("city", "string", ""),
    );
    compatible(v1().input("n", "int", "min: 5, max: 10"), v2().input("n", "int", ""));
}

#[test]
fn keeping_a_pattern_is_allowed() {
    let code = |s: V| s.input("code", "string", "pattern: \"^[A-Z]{2}$\"");
    compatible(code(v1()), code(v2()));
}

#[test]
fn adding_an_enum_input_value_is_allowed() {
    compatible(v1().input("mode", "enum", AB), v2().input("mode", "enum", ABC));
}

#[test]
fn dropping_an_enum_output_value_is_allowed() {
    compatible(v1().output("kind", "enum", ABC), v2().output("kind", "enum", AB));
}

#[test]
fn rewording_descriptions_is_allowed() {
    let catalog = clean(&tool(
        "forecast",
        &[
            v1().raw_input("{name: city, description: The city.}"),
            v2().raw_input("{name: city, description: The city or town to forecast.}")
                .with("description: \"Forecast the weather in a city or town.\""),
        ],
    ));
    let tool = catalog.find("forecast").expect("tool");
    assert_eq!(tool.latest().description, "Forecast the weather in a city or town.");
    assert_eq!(
        tool.latest().input("city").map(|p| p.description.as_str()),
        Some("The city or town to forecast.")
    );
}

#[test]
fn changing_the_backend_and_timeout_is_allowed() {
    compatible(
        v1().input("a", "number", "")
            .input("b", "number", "")
            .output("sum", "number", "")
            .backend("{kind: native, function: calculator.add}"),
        v2().input("a", "number", "")
            .input("b", "number", "")
            .output("sum", "number", "")
            .with("timeout_ms: 5"),
    );
}

// ---------------------------------------------------------------------------------------------
// json inputs (issue #14): their schema never changes within a tool

const TAGS: &str = "schema: {type: array, items: {type: string}}";
const TAGS_BOUNDED: &str = "schema: {type: array, items: {type: string}, maxItems: 5}";

#[test]
fn a_json_inputs_schema_is_fixed_and_its_description_may_change() {
    breaks(
        v1().input("tags", "json", TAGS),
        v2().input("tags", "json", TAGS_BOUNDED),
        "changes the schema of json input `tags`",
    );
    let catalog = crate::ok(&tool(
        "forecast",
        &[v1().input("tags", "json", TAGS), v2().input("tags", "json", TAGS)],
    ));
    // It loads without a word about protocols: what N-ACT shows of it is N-ACT's projection.
    assert!(catalog.warnings().is_empty(), "{}", render(catalog.warnings()));
    let version = catalog.tools()[0].latest();
    assert_eq!(
        version.input_schema()["properties"]["tags"]["items"],
        serde_json::json!({"type": "string"})
    );
}

#[test]
fn json_input_mistakes_are_load_errors() {
    for (input, phrase) in [
        (v1().input("tags", "json", ""), "a json input needs `schema`"),
        (
            v1().input("tags", "json", "schema: {type: nope}"),
            "`schema` is not a valid JSON Schema",
        ),
        (
            v1().input("tags", "string", TAGS),
            "`schema` applies to a json input, not a string one",
        ),
        (
            v1().input("tags", "json", "max_length: 3, schema: {type: array}"),
            "`max_length` does not apply to a json input",
        ),
    ] {
        let problems = problems_of(&[(crate::FILE, &tool("forecast", &[input]))]);
        let text = render(&problems);
        assert!(text.contains(phrase), "expected {phrase:?} in\n{text}");
    }
}

/// Issue #32.2: a name that keeps its place but sends another wire value breaks callers; two
/// names sending one value, or a value that is not a scalar, are refused at load.
#[test]
fn a_changed_wire_value_is_breaking_and_wire_values_are_scalars_and_distinct() {
    let with = |wire: &str| format!("values: [{{name: OPEN, description: Open., value: {wire}}}]");
    let text = crate::tool(
        "t",
        &[
            crate::v("1.0.0").input("s", "enum", &with("open")),
            crate::v("1.1.0").input("s", "enum", &with("opened")),
        ],
    );
    crate::error_with(&text, "changes what enum value `OPEN` of input `s` sends upstream");
    let same = crate::tool(
        "t",
        &[crate::v("1.0.0").input(
            "s",
            "enum",
            "values: [{name: A_B, description: x, value: a-b}, {name: A_B_2, description: y, value: a-b}]",
        )],
    );
    crate::error_with(&same, "sends \"a-b\", as another value does");
    let object = crate::tool("t", &[crate::v("1.0.0").input("s", "enum", &with("{x: 1}"))]);
    crate::error_with(&object, "must be a string, a number or a boolean");
}

/// Issue #31.6, N-ACT §6.1: ids provide uniqueness across versions, so an input's or an
/// output's id never changes for the same name.
#[test]
fn changing_a_parameters_id_breaks() {
    breaks(
        v1().input("city", "string", "id: city_v1"),
        v2().input("city", "string", "id: city_v2"),
        "changes the id of input `city` from `city_v1` to `city_v2`",
    );
    breaks(
        v1().input("city", "string", "")
            .output("temp", "number", "")
            .output("wind", "number", ""),
        v2().input("city", "string", "")
            .output("temp", "number", "id: temperature")
            .output("wind", "number", ""),
        "changes the id of output `temp` from `temp` to `temperature`",
    );
}

/// Issue #38.2: what ties inputs together never tightens (whether a JSON Schema change loosens
/// cannot be told), nor does a json output's schema change once given; removing rules is fine.
#[test]
fn input_rules_and_json_output_schemas_are_fixed() {
    let rules = "input_rules: {anyOf: [{required: [a]}, {required: [b]}]}";
    let two = || {
        v1().input("a", "string", "required: false")
            .input("b", "string", "required: false")
    };
    let two_later = || {
        v2().input("a", "string", "required: false")
            .input("b", "string", "required: false")
    };
    breaks(two(), two_later().with(rules), "changes `input_rules`");
    crate::ok(&tool("forecast", &[two().with(rules), two_later()]));
    breaks(
        v1().output("tags", "json", "schema: {type: array}"),
        v2().output("tags", "json", "schema: {type: array, maxItems: 3}"),
        "changes the schema of json output `tags`",
    );
    crate::ok(&tool(
        "forecast",
        &[
            v1().output("tags", "json", ""),
            v2().output("tags", "json", "schema: {type: array}"),
        ],
    ));
}
