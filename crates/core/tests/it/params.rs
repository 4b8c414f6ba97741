//! Inputs and outputs of a version (docs/protocols.md §1): names, types, constraints and enums.

use toolhost_core::catalog::DEFAULT_INT_MAX;
use toolhost_core::{InputType, Severity};

use crate::{V, assert_problem, at_tool, at_version, clean, doc, t, the_error, tool, v};

use Severity::Error;

fn one() -> V {
    v("1.0.0")
}

#[test]
fn duplicate_input_names_are_refused() {
    let p = the_error(&tool(
        "forecast",
        &[one().input("city", "string", "").input("city", "int", "")],
    ));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0"),
        "two inputs are named `city`",
    );
}

#[test]
fn duplicate_output_names_are_refused() {
    let p = the_error(&tool(
        "forecast",
        &[one().output("temp", "number", "").output("temp", "string", "")],
    ));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0"),
        "two outputs are named `temp`",
    );
}

#[test]
fn duplicate_input_ids_are_refused() {
    let text = tool(
        "forecast",
        &[one()
            .input("city", "string", "id: place")
            .input("town", "string", "id: place")],
    );
    let p = the_error(&text);
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0"),
        "two inputs have the id `place`",
    );
}

#[test]
fn duplicate_input_id_equal_to_a_later_name_is_refused() {
    let text = tool(
        "forecast",
        &[one().input("town", "string", "id: city").input("city", "string", "")],
    );
    let p = the_error(&text);
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0"),
        "two inputs have the id `city`",
    );
}

#[test]
fn constraint_on_the_wrong_type_is_refused() {
    let at = |name: &'static str| at_version("forecast", "1.0.0").field(name);
    let cases = [
        ("int", "max_length: 5", "`max_length` does not apply to a int input"),
        ("int", "pattern: \"^a$\"", "`pattern` does not apply to a int input"),
        ("string", "min: 1", "`min` does not apply to a string input"),
        ("string", "max: 1", "`max` does not apply to a string input"),
        (
            "number",
            "max_length: 3",
            "`max_length` does not apply to a number input",
        ),
        ("boolean", "min: 0", "`min` does not apply to a boolean input"),
        (
            "enum",
            "max_length: 3, values: [{name: A, description: A.}]",
            "`max_length` does not apply to a enum input",
        ),
        (
            "string",
            "values: [{name: A, description: A.}]",
            "`values` does not apply to a string input",
        ),
    ];
    for (ty, extra, phrase) in cases {
        let p = the_error(&tool("forecast", &[one().input("n", ty, extra)]));
        assert_problem(&p, Error, at("input `n`"), phrase);
    }
    let p = the_error(&tool(
        "forecast",
        &[one().output("n", "string", "values: [{name: A, description: A.}]")],
    ));
    assert_problem(
        &p,
        Error,
        at("output `n`"),
        "`values` does not apply to a string output",
    );
}

#[test]
fn min_greater_than_max_is_refused() {
    let at = at_version("forecast", "1.0.0").field("input `n`");
    let p = the_error(&tool("forecast", &[one().input("n", "int", "min: 10, max: 5")]));
    assert_problem(&p, Error, at, "`min` is greater than `max`");
    let p = the_error(&tool("forecast", &[one().input("n", "number", "min: 1.5, max: 0.5")]));
    assert_problem(&p, Error, at, "`min` is greater than `max`");
    // Against the default max of 65535.
    let p = the_error(&tool("forecast", &[one().input("n", "int", "min: 70000")]));
    assert_problem(&p, Error, at, "N-ACT's default max is 65535");
    // min == max allows exactly one value and is fine.
    clean(&tool("forecast", &[one().input("n", "int", "min: 3, max: 3")]));
}

#[test]
fn int_bounds_must_be_whole_numbers() {
    let p = the_error(&tool("forecast", &[one().input("n", "int", "max: 2.5")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("input `n`"),
        "`max` of an int input must be a whole number",
    );
}

#[test]
fn int_max_defaults_to_65535() {
    assert_eq!(DEFAULT_INT_MAX, 65535);
    let catalog = clean(&tool(
        "forecast",
        &[one().input("n", "int", "").input("m", "int", "min: -5")],
    ));
    let version = catalog.find("forecast").expect("tool").latest();
    assert_eq!(
        version.input("n").map(|p| &p.kind),
        Some(&InputType::Int { min: None, max: 65535 })
    );
    assert_eq!(
        version.input("m").map(|p| &p.kind),
        Some(&InputType::Int {
            min: Some(-5),
            max: 65535
        })
    );
    assert_eq!(version.input_schema()["properties"]["n"]["maximum"], 65535);
    assert_eq!(version.input_schema()["properties"]["n"]["type"], "integer");
}

#[test]
fn input_type_defaults_to_string_and_required_to_true() {
    let catalog = clean(&tool(
        "forecast",
        &[one()
            .raw_input("{name: city, description: The city.}")
            .output("o", "string", "")],
    ));
    let version = catalog.find("forecast").expect("tool").latest();
    let city = version.input("city").expect("input");
    assert_eq!(
        city.kind,
        InputType::String {
            max_length: None,
            pattern: None
        }
    );
    assert!(city.required);
    assert_eq!(city.id, "city");
    assert!(version.outputs[0].required);
    assert_eq!(version.input_schema()["required"], serde_json::json!(["city"]));
}

#[test]
fn enum_without_values_is_refused() {
    let at = at_version("forecast", "1.0.0").field("input `mode`");
    let p = the_error(&tool("forecast", &[one().input("mode", "enum", "")]));
    assert_problem(&p, Error, at, "an enum needs `values`");
    let p = the_error(&tool("forecast", &[one().input("mode", "enum", "values: []")]));
    assert_problem(&p, Error, at, "an enum needs `values`");
}

#[test]
fn enum_value_must_be_upper_snake() {
    let at = at_version("forecast", "1.0.0").field("input `mode`");
    for bad in ["fast", "Fast", "_FAST", "FAST-LANE", "9FAST"] {
        let p = the_error(&tool(
            "forecast",
            &[one().input(
                "mode",
                "enum",
                &format!("values: [{{name: \"{bad}\", description: D.}}]"),
            )],
        ));
        assert_problem(&p, Error, at, &format!("enum value `{bad}` must be UPPER_SNAKE_CASE"));
    }
    clean(&tool(
        "forecast",
        &[one().input(
            "mode",
            "enum",
            "values: [{name: PREMIUM_ECONOMY, description: D.}, {name: A1, description: D.}]",
        )],
    ));
    // Output enums follow the same rule.
    let p = the_error(&tool(
        "forecast",
        &[one().output("kind", "enum", "values: [{name: sunny, description: D.}]")],
    ));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("output `kind`"),
        "enum value `sunny` must be UPPER_SNAKE_CASE",
    );
}

#[test]
fn duplicate_enum_value_is_refused() {
    let values = "values: [{name: FAST, description: Fast.}, {name: FAST, description: Again.}]";
    let p = the_error(&tool("forecast", &[one().input("mode", "enum", values)]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("input `mode`"),
        "enum value `FAST` is listed twice",
    );
}

#[test]
fn enum_value_description_is_checked() {
    let p = the_error(&tool(
        "forecast",
        &[one().input("mode", "enum", "values: [{name: FAST, description: \"\"}]")],
    ));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("value `FAST`"),
        "the description is empty",
    );
}

#[test]
fn unknown_input_type_is_refused() {
    let p = the_error(&tool("forecast", &[one().input("where", "object", "")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("input `where`"),
        "unknown input type `object`",
    );
    // `json` takes a schema (issue #14), and is not N-ACT's: the message says both.
    assert!(p.message.contains("or json with a `schema`"), "{p}");
    let p = the_error(&tool("forecast", &[one().input("where", "json", "")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("input `where`"),
        "a json input needs `schema`",
    );
}

#[test]
fn unknown_output_type_is_refused() {
    let p = the_error(&tool("forecast", &[one().output("days", "array", "")]));
    assert_problem(
        &p,
        Error,
        at_version("forecast", "1.0.0").field("output `days`"),
        "unknown output type `array`",
    );
}

#[test]
fn string_constraints_are_checked() {
    let at = at_version("forecast", "1.0.0").field("input `code`");
    let p = the_error(&tool("forecast", &[one().input("code", "string", "max_length: 0")]));
    assert_problem(&p, Error, at, "`max_length: 0` accepts only the empty string");
    let p = the_error(&tool("forecast", &[one().input("code", "string", "pattern: \"[a-\"")]));
    assert_problem(&p, Error, at, "`pattern` is not a valid regular expression");
}

#[test]
fn empty_tag_is_refused() {
    let p = the_error(&doc(&[t("forecast", &[one()]).with("tags: [\"\", rain]")]));
    assert_problem(&p, Error, at_tool("forecast").field("tags"), "a tag is empty");
}
