//! Integration tests of toolhost-core: the catalog rules of docs/protocols.md §1, the engine, and the
//! catalogs shipped in `examples/`.
//!
//! Catalogs are built with the small helpers below rather than pasted YAML: [`tool`] gives a
//! one-toolkit catalog with a tool whose versions are [`V`] builders, each written as a YAML flow
//! mapping, e.g. `tool("forecast", &[v("1.0.0").input("city", "string", "")])`.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed; the panic says why

mod agents;
mod catalog_rules;
mod compat;
mod confirm;
mod engine;
mod execution;
mod human_inputs;
mod json_schema;
mod params;
mod props;
mod requirements;
mod resources;
mod shipped;
mod version_lock;

use std::fmt;

use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{Catalog, Problem, Severity};

/// The file name every single-file test catalog is loaded under.
pub const FILE: &str = "x.yaml";
/// The toolkit of [`tool`].
pub const TOOLKIT: &str = "Weather";

/// One version of a tool, written as a YAML flow mapping.
#[derive(Debug, Clone)]
pub struct V {
    semver: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
    backend: String,
    extra: Vec<String>,
}

/// A version with no inputs or outputs and the `testing.echo` backend.
pub fn v(semver: &str) -> V {
    V {
        semver: semver.to_owned(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        backend: "{kind: native, function: testing.echo}".to_owned(),
        extra: Vec::new(),
    }
}

impl V {
    /// Adds an input; `extra` is more `key: value` pairs of its flow mapping (or "").
    pub fn input(mut self, name: &str, ty: &str, extra: &str) -> Self {
        self.inputs.push(param(name, ty, extra));
        self
    }

    /// Adds an input written out in full as a flow mapping, e.g. to leave out `type`.
    pub fn raw_input(mut self, mapping: &str) -> Self {
        self.inputs.push(mapping.to_owned());
        self
    }

    /// Adds an output; `extra` as for [`V::input`].
    pub fn output(mut self, name: &str, ty: &str, extra: &str) -> Self {
        self.outputs.push(param(name, ty, extra));
        self
    }

    /// Replaces the backend flow mapping.
    pub fn backend(mut self, backend: &str) -> Self {
        self.backend = backend.to_owned();
        self
    }

    /// Adds a `key: value` pair to the version itself.
    pub fn with(mut self, pair: &str) -> Self {
        self.extra.push(pair.to_owned());
        self
    }
}

fn param(name: &str, ty: &str, extra: &str) -> String {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {extra}")
    };
    format!("{{name: {name}, type: {ty}, description: \"The {name}.\"{extra}}}")
}

impl fmt::Display for V {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{version: {}, inputs: [{}], outputs: [{}], backend: {}",
            self.semver,
            self.inputs.join(", "),
            self.outputs.join(", "),
            self.backend
        )?;
        for pair in &self.extra {
            write!(f, ", {pair}")?;
        }
        // A version without outputs says it returns nothing (N-ACT §6.1, issue #22.2).
        if self.outputs.is_empty() && !self.extra.iter().any(|p| p.starts_with("returns_nothing")) {
            f.write_str(", returns_nothing: true")?;
        }
        f.write_str("}")
    }
}

/// A tool definition: a toolkit, a name, tool-level keys and versions.
#[derive(Debug, Clone)]
pub struct T {
    toolkit: String,
    name: String,
    description: String,
    extra: Vec<String>,
    versions: Vec<V>,
}

/// A tool in toolkit [`TOOLKIT`] with a plain description.
pub fn t(name: &str, versions: &[V]) -> T {
    T {
        toolkit: TOOLKIT.to_owned(),
        name: name.to_owned(),
        description: "A tool for tests.".to_owned(),
        extra: Vec::new(),
        versions: versions.to_vec(),
    }
}

impl T {
    /// Moves the tool to another toolkit.
    pub fn toolkit(mut self, toolkit: &str) -> Self {
        self.toolkit = toolkit.to_owned();
        self
    }

    /// Replaces the tool's description.
    pub fn description(mut self, description: &str) -> Self {
        self.description = description.to_owned();
        self
    }

    /// Adds a tool-level `key: value` line, e.g. `id: ...` or `timeout_ms: 10`.
    pub fn with(mut self, line: &str) -> Self {
        self.extra.push(line.to_owned());
        self
    }
}

impl fmt::Display for T {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  - name: {}", self.toolkit)?;
        writeln!(f, "    tools:")?;
        writeln!(f, "      - name: {}", self.name)?;
        // Debug quoting of plain ASCII text is a valid YAML double-quoted scalar.
        writeln!(f, "        description: {:?}", self.description)?;
        for line in &self.extra {
            writeln!(f, "        {line}")?;
        }
        if self.versions.is_empty() {
            return writeln!(f, "        versions: []");
        }
        writeln!(f, "        versions:")?;
        for version in &self.versions {
            writeln!(f, "          - {version}")?;
        }
        Ok(())
    }
}

/// A catalog file holding these tools (each under its own toolkit entry).
pub fn doc(tools: &[T]) -> String {
    let mut text = String::from("toolkits:\n");
    for tool in tools {
        text.push_str(&tool.to_string());
    }
    text
}

/// A catalog file with one tool in toolkit [`TOOLKIT`].
pub fn tool(name: &str, versions: &[V]) -> String {
    doc(&[t(name, versions)])
}

/// Loads named sources with the default loader.
pub fn load_files(files: &[(&str, &str)]) -> Result<Catalog, Vec<Problem>> {
    let sources: Vec<Source> = files
        .iter()
        .map(|(name, text)| Source {
            name: (*name).to_owned(),
            text: (*text).to_owned(),
        })
        .collect();
    Loader::default().load(&sources)
}

/// Loads one source named [`FILE`].
pub fn load(text: &str) -> Result<Catalog, Vec<Problem>> {
    load_files(&[(FILE, text)])
}

/// Loads a catalog that must load; panics with every problem otherwise.
#[track_caller]
pub fn ok(text: &str) -> Catalog {
    match load(text) {
        Ok(catalog) => catalog,
        Err(problems) => panic!(
            "expected the catalog to load, got:\n{}\n--- catalog ---\n{text}",
            render(&problems)
        ),
    }
}

/// Loads a catalog that must load with no warnings either.
#[track_caller]
pub fn clean(text: &str) -> Catalog {
    let catalog = ok(text);
    assert!(
        catalog.warnings().is_empty(),
        "unexpected warnings:\n{}",
        render(catalog.warnings())
    );
    catalog
}

/// Loads a catalog that must fail; returns its problems.
#[track_caller]
pub fn problems_of(files: &[(&str, &str)]) -> Vec<Problem> {
    match load_files(files) {
        Ok(catalog) => panic!(
            "expected load errors, but the catalog loaded with {} tools",
            catalog.tools().len()
        ),
        Err(problems) => {
            assert!(
                problems.iter().any(|p| p.severity == Severity::Error),
                "Err without any error:\n{}",
                render(&problems)
            );
            problems
        }
    }
}

/// Loads one [`FILE`] that must fail with exactly one error; returns that error.
#[track_caller]
pub fn the_error(text: &str) -> Problem {
    let problems = problems_of(&[(FILE, text)]);
    let errors: Vec<&Problem> = problems.iter().filter(|p| p.severity == Severity::Error).collect();
    assert_eq!(
        errors.len(),
        1,
        "expected exactly one error, got:\n{}\n--- catalog ---\n{text}",
        render(&problems)
    );
    errors[0].clone()
}

/// The one error of [`FILE`] whose message contains `phrase` (other errors may exist).
#[track_caller]
pub fn error_with(text: &str, phrase: &str) -> Problem {
    let problems = problems_of(&[(FILE, text)]);
    let found: Vec<&Problem> = problems
        .iter()
        .filter(|p| p.severity == Severity::Error && p.message.contains(phrase))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one error containing {phrase:?}, got:\n{}",
        render(&problems)
    );
    found[0].clone()
}

/// Where a problem is expected: tool, version and field of its [`toolhost_core::catalog::Place`].
#[derive(Debug, Clone, Copy, Default)]
pub struct At<'a> {
    pub tool: Option<&'a str>,
    pub version: Option<&'a str>,
    pub field: Option<&'a str>,
}

/// In tool `tool`, outside any version.
pub fn at_tool(tool: &str) -> At<'_> {
    At {
        tool: Some(tool),
        ..At::default()
    }
}

/// In `version` of `tool`.
pub fn at_version<'a>(tool: &'a str, version: &'a str) -> At<'a> {
    At {
        tool: Some(tool),
        version: Some(version),
        field: None,
    }
}

impl<'a> At<'a> {
    /// The same place, narrowed to a field.
    pub fn field(self, field: &'a str) -> Self {
        Self {
            field: Some(field),
            ..self
        }
    }
}

/// Asserts severity, place (file [`FILE`] unless `file` is given) and a phrase of the message.
#[track_caller]
pub fn assert_problem(problem: &Problem, severity: Severity, at: At<'_>, phrase: &str) {
    assert_problem_in(problem, FILE, severity, at, phrase);
}

/// [`assert_problem`] for a problem in another file.
#[track_caller]
pub fn assert_problem_in(problem: &Problem, file: &str, severity: Severity, at: At<'_>, phrase: &str) {
    assert_eq!(problem.severity, severity, "severity of {problem}");
    assert_eq!(problem.place.file, file, "file of {problem}");
    assert_eq!(problem.place.tool.as_deref(), at.tool, "tool of {problem}");
    assert_eq!(problem.place.version.as_deref(), at.version, "version of {problem}");
    assert_eq!(problem.place.field.as_deref(), at.field, "field of {problem}");
    assert!(
        problem.message.contains(phrase),
        "message of {problem} lacks {phrase:?}"
    );
}

/// Every problem on its own line, for assertion messages.
pub fn render(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

/// A JSON object from a `json!` literal.
#[track_caller]
pub fn obj(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}
