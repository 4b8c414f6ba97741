//! Catalog-declared resources (`resources:`) and agents as prompts (`arguments:`, `attach:`):
//! what loads, what each mistake says at load, and how a template and a prompt are filled.

use toolhost_core::catalog::prompt::fill;
use toolhost_core::catalog::resource::Content;
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{Catalog, Problem, Severity};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn load(resources: &str, agents: &[(&str, &str)]) -> Result<Catalog, Vec<Problem>> {
    let mut sources = toolhost_core::native::bundled_catalog();
    sources.push(Source {
        name: "docs.yaml".into(),
        text: format!("resources:\n{resources}"),
    });
    sources.extend(agents.iter().map(|(name, text)| Source {
        name: format!("agents/{name}.md"),
        text: (*text).to_owned(),
    }));
    Loader::default().load(&sources)
}

fn errors(resources: &str, agents: &[(&str, &str)]) -> Vec<String> {
    load(resources, agents)
        .expect_err("refused")
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(ToString::to_string)
        .collect()
}

#[track_caller]
fn refused_with(resources: &str, agents: &[(&str, &str)], wanted: &str) {
    let errors = errors(resources, agents);
    assert!(
        errors.iter().any(|e| e.contains(wanted)),
        "wanted an error containing {wanted:?}, got {errors:#?}"
    );
}

const DOCS: &str = r#"  - { uri: "docs://style", name: style, text: "Write plainly." }
  - { uri: "img://logo", name: logo, mime_type: image/png, blob: "PNG" }
  - { uri_template: "rec://{id}/data", name: rec, mime_type: application/json, text: '{"id":"{id}"}' }
"#;

fn docs() -> String {
    DOCS.replace("\"PNG\"", &format!("\"{PNG}\""))
}

#[test]
fn declared_resources_are_read_with_templates_filled() {
    let catalog = load(&docs(), &[]).unwrap();
    assert_eq!(catalog.resources().len(), 3);
    let (style, content) = catalog.read_resource("docs://style").unwrap();
    assert_eq!(style.mime_type, "text/plain");
    assert_eq!(content, Content::Text("Write plainly.".into()));
    let (_, logo) = catalog.read_resource("img://logo").unwrap();
    assert!(matches!(logo, Content::Blob(b) if b.starts_with(b"\x89PNG")));
    let (_, record) = catalog.read_resource("rec://a\"b/data").unwrap();
    assert_eq!(
        record,
        Content::Text(r#"{"id":"a\"b"}"#.into()),
        "a value is JSON-escaped in JSON"
    );
    assert!(
        catalog.read_resource("rec:///data").is_none(),
        "a variable is not empty"
    );
    assert!(catalog.read_resource("docs://other").is_none());
}

#[test]
fn each_resource_mistake_is_a_load_error_that_says_what_to_write() {
    refused_with("  - { name: a, text: x }\n", &[], "give exactly one of `uri`");
    refused_with("  - { uri: nothing, name: a, text: x }\n", &[], "is not a URI");
    refused_with(
        "  - { uri: \"toolhost://x\", name: a, text: x }\n",
        &[],
        "are the server's own",
    );
    refused_with(
        "  - { uri: \"a://x\", name: a }\n",
        &[],
        "give exactly one of `text` and `blob`",
    );
    refused_with(
        "  - { uri: \"a://x\", name: a, mime_type: image/png, blob: \"%%%\" }\n",
        &[],
        "is not base64",
    );
    refused_with(
        "  - { uri: \"a://x\", name: a, blob: \"AAAA\" }\n",
        &[],
        "bytes need a `mime_type`",
    );
    refused_with(
        "  - { uri: \"a://x\", name: a, mime_type: png, text: x }\n",
        &[],
        "is not a media type",
    );
    refused_with(
        "  - { uri_template: \"a://{id\", name: a, text: x }\n",
        &[],
        "is not closed",
    );
    refused_with(
        "  - { uri_template: \"a://{a}{b}\", name: a, text: x }\n",
        &[],
        "follows another variable",
    );
    refused_with(
        "  - { uri_template: \"a://x\", name: a, text: x }\n",
        &[],
        "has no `{variable}`",
    );
    refused_with(
        "  - { uri: \"a://x\", name: a, text: x }\n  - { uri: \"a://x\", name: b, text: y }\n",
        &[],
        "another resource is at `a://x`",
    );
    refused_with("  - { uri: \"a://x\", name: a, txt: x }\n", &[], "unknown field");
}

const PLAN: &str = "---\nname: plan\ndescription: Plans a trip.\ntools: [divide_numbers]\narguments:\n  - { name: city, description: Where to., values: [Paris, Lisbon] }\n  - { name: note, required: false, description: Anything else. }\nattach: [docs://style, img://logo]\n---\nPlan a trip to {{city}}. {{note}} Use divide_numbers() to split costs.\n";

#[test]
fn an_agent_declares_prompt_arguments_and_attachments() {
    let catalog = load(&docs(), &[("plan", PLAN)]).unwrap();
    let plan = catalog.agent("plan").unwrap();
    let names: Vec<(&str, bool)> = plan.arguments.iter().map(|a| (a.name.as_str(), a.required)).collect();
    assert_eq!(names, [("city", true), ("note", false)]);
    assert_eq!(plan.arguments[0].values, ["Paris", "Lisbon"]);
    assert_eq!(plan.attach, ["docs://style", "img://logo"]);
    let values = [("city".to_owned(), "Paris".to_owned())].into_iter().collect();
    assert_eq!(
        fill(&plan.procedure, &plan.arguments, &values),
        "Plan a trip to Paris.  Use divide_numbers() to split costs.\n"
    );
}

#[test]
fn each_prompt_mistake_is_a_load_error_that_names_the_field() {
    let with = |front: &str, body: &str| {
        format!(
            "---\nname: plan\ndescription: Plans.\ntools: [divide_numbers]\n{front}---\n{body} Use divide_numbers().\n"
        )
    };
    let cases = [
        (
            with("", "Go to {{city}}."),
            "uses `{{city}}`, which no argument declares",
        ),
        (
            with("arguments:\n  - { name: 1city, description: x }\n", "Go."),
            "`1city` is not an argument name",
        ),
        (
            with(
                "arguments:\n  - { name: c, description: x }\n  - { name: c, description: y }\n",
                "Go.",
            ),
            "`c` is declared twice",
        ),
        (
            with("attach: [docs://nowhere]\n", "Go."),
            "is not a resource the catalog declares",
        ),
        (
            with("attach: [\"{{page}}\"]\n", "Go."),
            "uses `{{page}}`, which no argument declares",
        ),
    ];
    for (text, wanted) in cases {
        refused_with(&docs(), &[("plan", &text)], wanted);
    }
}
