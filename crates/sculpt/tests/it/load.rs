//! Errors at load time, not at call time: each names the file, tool, version and `backend`
//! (from the loader) and the step and field (from this crate).

use crate::support::{problems, tool, tool_with};

const INPUTS: &str =
    r#"[{name: city, description: "A city."}, {name: days, type: int, required: false, description: "Days."}]"#;
const OUTPUTS: &str = r#"[{name: temp, type: number, description: "Temperature."}, {name: note, type: string, required: false, description: "A note."}]"#;

/// The problems of a one-tool catalog whose backend is `backend`.
fn errors(backend: &str) -> Vec<String> {
    problems(&tool(INPUTS, OUTPUTS, backend))
}

/// Asserts that exactly one problem contains every phrase; returns it.
#[track_caller]
fn one(problems: &[String], phrases: &[&str]) -> String {
    let found: Vec<&String> = problems
        .iter()
        .filter(|p| phrases.iter().all(|phrase| p.contains(phrase)))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one problem with {phrases:?} in:\n{}",
        problems.join("\n")
    );
    found[0].clone()
}

const GOOD_STEPS: &str = r#"
kind: http
base_url: http://127.0.0.1:9
steps:
  - name: geocode
    path: /search
    query: { name: "{{input.city}}" }
  - name: forecast
    path: /forecast/{{geocode.body.id}}
outputs: { temp: forecast.body.temp }
"#;

#[test]
fn a_good_recipe_loads() {
    let catalog = crate::support::load_with(&tool(INPUTS, OUTPUTS, GOOD_STEPS), "", &[]);
    assert!(catalog.is_ok(), "{:?}", catalog.err());
}

#[test]
fn an_unknown_input_names_file_tool_version_step_and_field() {
    let text = GOOD_STEPS.replace("input.city", "input.cty");
    let problem = one(&errors(&text), &["refers to input `cty`"]);
    assert!(
        problem.contains("x.yaml")
            && problem.contains("sculpted")
            && problem.contains("1.0.0")
            && problem.contains("backend")
            && problem.contains("step `geocode`, `query.name`: refers to input `cty`, but the inputs are: city, days"),
        "{problem}"
    );
}

#[test]
fn unknown_and_later_steps_are_refused() {
    let unknown = GOOD_STEPS.replace("geocode.body.id", "geo.body.id");
    one(
        &errors(&unknown),
        &[
            "step `forecast`, `path`",
            "`geo.body.id` starts with `geo`",
            "earlier steps: geocode",
        ],
    );
    let later = r#"
kind: http
base_url: http://127.0.0.1:9
steps:
  - { name: first, path: "/a/{{second.body.id}}" }
  - { name: second, path: /b, after: [third] }
  - { name: third, path: /c }
outputs: { temp: third.body.t }
"#;
    let problems = errors(later);
    one(&problems, &["step `first`, `path`", "`second`"]);
    one(&problems, &["step `second`, `after`", "`third` is not an earlier step"]);
}

#[test]
fn secrets_must_be_known_and_never_reach_outputs_or_messages() {
    let unknown = GOOD_STEPS.replace(
        "{ name: \"{{input.city}}\" }",
        "{ name: \"{{input.city}}\", key: \"{{secret.NOPE}}\" }",
    );
    let problem = one(&errors(&unknown), &["step `geocode`, `query.key`", "secret `NOPE`"]);
    assert!(problem.contains("SERVER_KEY"), "names the server's secrets: {problem}");
    // A secret the tool requires from the caller is known.
    let required = tool_with("requirements: { secrets: [NOPE] }", INPUTS, OUTPUTS, &unknown);
    assert!(crate::support::load_with(&required, "", &[]).is_ok());
    let in_output = GOOD_STEPS.replace(
        "temp: forecast.body.temp",
        "temp: forecast.body.temp, note: \"{{secret.SERVER_KEY}}\"",
    );
    one(&errors(&in_output), &["`outputs.note`", "secrets cannot be used here"]);
    let in_message = GOOD_STEPS.replace(
        "    path: /search\n",
        "    path: /search\n    errors: { \"404\": \"key {{secret.SERVER_KEY}} refused\" }\n",
    );
    one(
        &errors(&in_message),
        &["step `geocode`, `errors.404`", "secrets cannot be used here"],
    );
}

#[test]
fn jq_must_compile_and_may_not_read_the_environment_or_stop_the_server() {
    for (code, phrase) in [
        ("env.HOME", "`env/0` is not defined"),
        ("$ENV.HOME", "`$ENV` is not defined"),
        ("halt", "`halt/0` is not defined"),
        ("halt_error(1)", "`halt_error/1` is not defined"),
        ("input", "`input/0` is not defined"),
        ("[inputs]", "`inputs/0` is not defined"),
        ("debug", "`debug/0` is not defined"),
        ("import \\\"lib\\\" as lib; .", "cannot import"),
        (".steps | {", "expected"),
    ] {
        let backend = GOOD_STEPS.replace("temp: forecast.body.temp", &format!("temp: {{ jq: \"{code}\" }}"));
        let problem = one(&errors(&backend), &["`outputs.temp.jq`", phrase]);
        assert!(problem.contains("does not compile"), "{problem}");
    }
    let when = GOOD_STEPS.replace(
        "    path: /search\n",
        "    path: /search\n    when: \"env | length > 0\"\n",
    );
    one(
        &errors(&when),
        &["step `geocode`, `when`", "`env/0` is not defined", "turned off"],
    );
}

#[test]
fn outputs_must_exist_and_required_ones_must_be_mapped() {
    let unknown = GOOD_STEPS.replace(
        "temp: forecast.body.temp",
        "temp: forecast.body.temp, tmep: forecast.body.t",
    );
    one(&errors(&unknown), &["`outputs.tmep`", "no output `tmep`", "temp, note"]);
    let unmapped = GOOD_STEPS.replace("temp: forecast.body.temp", "note: forecast.body.note");
    one(&errors(&unmapped), &["`outputs.temp`", "required"]);
    let bad_shape = GOOD_STEPS.replace("temp: forecast.body.temp", "temp: { jq: \".\", path: x }");
    one(&errors(&bad_shape), &["`outputs.temp`", "write a path"]);
}

#[test]
fn requests_are_checked_method_url_path_headers_and_body() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "path: /search\n",
            "path: /search\n    method: FETCH\n",
            &["step `geocode`, `method`", "FETCH"],
        ),
        (
            "base_url: http://127.0.0.1:9",
            "base_url: ftp://127.0.0.1:9",
            &["`base_url`", "http:// or https://"],
        ),
        (
            "base_url: http://127.0.0.1:9",
            "base_url: http://u:p@127.0.0.1:9",
            &["`base_url`", "credentials"],
        ),
        (
            "base_url: http://127.0.0.1:9",
            "base_url: http://127.0.0.1:9/?x=1",
            &["`base_url`", "no query"],
        ),
        (
            "path: /search\n",
            "path: search\n",
            &["step `geocode`, `path`", "must start with `/`"],
        ),
        (
            "path: /search\n",
            "path: /a/../search\n",
            &["step `geocode`, `path`", "`..`"],
        ),
        (
            "path: /search\n",
            "path: \"/days/{{input.days}}\"\n",
            &["step `geocode`, `path`", "input `days` is optional"],
        ),
        (
            "path: /search\n",
            "path: /search\n    headers: { \"Bad Header\": x }\n",
            &["`headers.Bad Header`", "not a valid header name"],
        ),
        (
            "path: /search\n",
            "path: /search\n    body: { a: 1 }\n",
            &["step `geocode`, `body`", "GET request carries no body"],
        ),
        (
            "path: /search\n",
            "path: /search\n    method: POST\n    body: { a: 1 }\n    form: { a: 1 }\n",
            &["`body`", "not more"],
        ),
        // Issue #12.7 then #13: a `{jq}` in a request was sent literally; it is now run, and
        // compiled at load like every other program.
        (
            "path: /search\n",
            "path: /search\n    method: POST\n    body: { q: { jq: \".city |\" } }\n",
            &["step `geocode`, `body`", "the jq program does not compile"],
        ),
        (
            "path: /search\n",
            "path: /search\n    method: POST\n    form: { q: { jq: \"nope(1)\" } }\n",
            &["step `geocode`, `form.q`", "the jq program does not compile"],
        ),
        (
            "query: { name: \"{{input.city}}\" }",
            "query: { name: { a: 1 } }",
            &["`query.name`", "text, a number"],
        ),
        (
            "path: /search\n",
            "path: /search\n    retries: 50\n",
            &["`retries`", "at most 10"],
        ),
        (
            "path: /search\n",
            "path: /search\n    errors: { teapot: x }\n",
            &["`errors.teapot`", "\"404\""],
        ),
        (
            "path: /search\n",
            "path: /search\n    expect: [\"headline\"]\n",
            &["step `geocode`, `expect`", "`status`, `headers.NAME` or `body`"],
        ),
        (
            "path: /search\n",
            "path: /search\n    auth: { api_key: { value: x } }\n",
            &["step `geocode`, `auth`", "either a `header` or a `query`"],
        ),
        (
            "path: /search\n",
            "path: /search\n    methd: GET\n",
            &["step `geocode`", "unknown field `methd`"],
        ),
        ("name: forecast", "name: input", &["step `input`", "cannot name a step"]),
        (
            "name: forecast",
            "name: geocode",
            &["step `geocode`", "two steps have this name"],
        ),
    ];
    for (from, to, phrases) in cases {
        assert!(GOOD_STEPS.contains(from), "{from}");
        one(&errors(&GOOD_STEPS.replacen(from, to, 1)), phrases);
    }
    let no_base = GOOD_STEPS.replace("base_url: http://127.0.0.1:9\n", "");
    let problems = errors(&no_base);
    one(&problems, &["step `geocode`, `base_url`", "no `base_url`"]);
    one(&errors("kind: http\n"), &["missing field `steps`"]);
}

#[test]
fn every_problem_is_reported_at_once() {
    let backend = r#"
kind: http
base_url: http://127.0.0.1:9
steps:
  - { name: a, method: FETCH, path: "/x/{{input.nope}}" }
  - { name: b, path: /y, when: "halt" }
outputs: { temp: { jq: "env" } }
"#;
    let problems = errors(backend);
    assert!(problems.len() >= 4, "{}", problems.join("\n"));
}

/// The YAML block after `marker` in docs/sculpting.md, without its first line (`backend:`), dedented.
fn readme_backend(marker: &str) -> String {
    let readme = include_str!("../../../../docs/sculpting.md");
    let start = readme
        .find(marker)
        .unwrap_or_else(|| panic!("docs/sculpting.md has {marker:?}"));
    let block = &readme[start..];
    let block = &block[block.find("```yaml\n").unwrap() + 8..];
    let block = &block[..block.find("```").unwrap()];
    let mut lines = block.lines();
    assert_eq!(lines.next(), Some("backend:"));
    lines
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_readme_examples_load() {
    let simple = readme_backend("The simple case is one request");
    let outputs = r#"[{name: temp_c, type: number, description: "t"}, {name: city, type: string, description: "c"}]"#;
    let inputs = r#"[{name: city, description: "A city."}]"#;
    let catalog = crate::support::load_with(&tool(inputs, outputs, &simple), "", &[]);
    assert!(
        catalog.is_ok(),
        "{}",
        crate::support::render(&catalog.err().unwrap_or_default())
    );

    let full = readme_backend("Every key, in one backend:");
    let outputs = r#"[{name: place, type: string, description: "p"}, {name: temperature_c, type: number, description: "c"}, {name: temperature_f, type: number, description: "f"}, {name: alerts, type: json, description: "a"}, {name: source, type: string, description: "s"}]"#;
    let catalog = crate::support::load_with(&tool(INPUTS, outputs, &full), "", &[("API_TOKEN", "t")]);
    assert!(
        catalog.is_ok(),
        "{}",
        crate::support::render(&catalog.err().unwrap_or_default())
    );
}

#[test]
fn a_tool_step_takes_input_and_no_request_parts() {
    let problems = errors(
        r#"
kind: http
base_url: http://127.0.0.1:9
steps:
  - { name: both, tool: other, path: /x, method: POST, input: { a: 1 } }
  - { name: listed, tool: other, input: [1, 2] }
  - { name: versioned, tool: "other@one" }
  - { name: request, path: /y, input: { a: 1 } }
"#,
    );
    one(
        &problems,
        &["step `both`, `path`: a `tool` step calls another tool of the catalog"],
    );
    one(&problems, &["step `both`, `method`: a `tool` step"]);
    one(&problems, &["step `listed`, `input`: the input of a tool is an object"]);
    one(&problems, &["step `versioned`, `tool`: `one` is not a version"]);
    one(&problems, &["step `request`, `input`: `input` goes with `tool`"]);
}

#[test]
fn a_provider_token_is_read_only_for_a_required_provider() {
    let backend = r#"
kind: http
base_url: http://127.0.0.1:9
steps:
  - { name: me, path: /me, headers: { Authorization: "Bearer {{authorization.github}}", X-Other: "{{authorization.gitlab}}" } }
outputs: { temp: me.body.temp }
"#;
    let problems = problems(&tool_with(
        "requirements: { authorization: [{ id: github }] }",
        INPUTS,
        OUTPUTS,
        backend,
    ));
    one(
        &problems,
        &["refers to the token of provider `gitlab`, which is not in the tool's `requirements.authorization` (github)"],
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
}

/// Issue #38.3: a styled query value and a cookie are checked at load, each named.
#[test]
fn styled_query_values_and_cookies_are_checked() {
    let styled = r#"
kind: http
base_url: http://127.0.0.1:9
steps:
  - name: geocode
    path: /search
    query:
      name: { value: "{{input.city}}", style: pipeDelimited, explode: false }
      near: { value: "{{input.city}}", style: matrix }
      far: { value: "{{input.city}}", stile: form }
    cookies: { "bad name": "{{input.city}}", session: "{{input.cty}}" }
outputs: { temp: geocode.body.temp }
"#;
    let problems = errors(styled);
    one(
        &problems,
        &["step `geocode`, `query.near`", "`style: matrix` is not a query style"],
    );
    one(
        &problems,
        &[
            "step `geocode`, `query.far`",
            "`stile` is not a key of a styled query value",
        ],
    );
    one(
        &problems,
        &["step `geocode`, `cookies.bad name`", "not a valid cookie name"],
    );
    one(
        &problems,
        &["step `geocode`, `cookies.session`", "refers to input `cty`"],
    );
    assert!(!problems.iter().any(|p| p.contains("query.name")), "{problems:?}");
}
