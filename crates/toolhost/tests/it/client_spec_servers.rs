//! `toolhost`'s client subcommands against servers written from each draft alone
//! (`tests/spec-servers/`, issue #31): N-ACT as Figures 2 and 3 draw it, OTC from its OpenAPI
//! with the spec's example tools, WoA Appendix B's host.

use std::process::Output;

use serde_json::{Value, json};

use crate::launch::SpecServer;
use crate::support::{BIN, Scratch};

/// `toolhost ARGS --allow-private --no-cache` (the spec servers are other processes, so this
/// may block).
fn toolhost(args: &[&str]) -> Output {
    std::process::Command::new(BIN)
        .args(args)
        .args(["--allow-private", "--no-cache"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run toolhost")
}

fn said(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Issue #31.7–10 through the CLI: the enumeration URI as the root, names with spaces listed,
/// described and called, a 503 retried, and a last page's `next: null`.
#[tokio::test]
async fn nact_as_the_figures_draw_it() {
    let spec = SpecServer::start("nact_server.py", &[]);
    let listing = format!("{}/api/tools", spec.base);

    let tools = toolhost(&["tools", &listing]);
    let (out, err) = said(&tools);
    assert!(tools.status.success(), "{err}");
    assert!(out.contains("Lookup Weather") && out.contains("Book Flight"), "{out}");
    assert!(!err.contains("skipped"), "{err}");

    let described = toolhost(&["describe", &listing, "Book Flight"]);
    let (out, err) = said(&described);
    assert!(described.status.success(), "{err}");
    assert!(out.contains("Flight Class") && out.contains("PREMIUM_ECONOMY"), "{out}");

    let called = toolhost(&["call", &listing, "Lookup Weather", "--arg", "City=Boston"]);
    let (out, err) = said(&called);
    assert!(called.status.success(), "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result, json!({"Temperature in Fahrenheit": 80}));
    assert_eq!(
        spec.get("/_test/calls").await,
        json!({"Lookup Weather": 2}),
        "the 503 was retried"
    );

    let null = SpecServer::start("nact_server.py", &["--last-next", "null"]);
    let listed = toolhost(&["tools", &format!("{}/api", null.base), "--protocol", "nact", "--json"]);
    let (out, err) = said(&listed);
    assert!(listed.status.success(), "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().len(),
        2
    );
}

/// Issue #31.7: export makes names safe only for targets that need it, and says so.
#[tokio::test]
async fn export_makes_names_safe_and_says_so() {
    let spec = SpecServer::start("nact_server.py", &[]);
    let dir = Scratch::new();
    let mapping = dir.0.join("names.json");
    let exported = toolhost(&[
        "export",
        &format!("{}/api/tools", spec.base),
        "--format",
        "openai",
        "--mapping",
        mapping.to_str().unwrap(),
    ]);
    let (out, err) = said(&exported);
    assert!(exported.status.success(), "{err}");
    let definitions: Value = serde_json::from_str(&out).unwrap();
    let flight = &definitions[0]["function"];
    assert_eq!(flight["name"], "Book_Flight");
    assert!(
        flight["parameters"]["properties"]["Flight_Class"].is_object(),
        "{flight}"
    );
    assert!(
        err.contains("note: the tool `Book Flight` is exported as `Book_Flight`")
            && err.contains("note: the input `Flight Class` of `Book_Flight` is exported as `Flight_Class`"),
        "{err}"
    );
    let names: Value = serde_json::from_str(&std::fs::read_to_string(&mapping).unwrap()).unwrap();
    assert_eq!(names["tools"]["Book_Flight"]["name"], "Book Flight");
    assert_eq!(names["tools"]["Book_Flight"]["inputs"]["Flight_Class"], "Flight Class");

    let mcp = toolhost(&["export", &format!("{}/api/tools", spec.base), "--format", "mcp-json"]);
    let (out, err) = said(&mcp);
    assert!(mcp.status.success(), "{err}");
    let definitions: Value = serde_json::from_str(&out).unwrap();
    assert!(
        definitions["tools"][0]["inputSchema"]["properties"]["Flight Class"].is_object(),
        "MCP takes any property name: {definitions}"
    );
}

/// Issue #31.10–12 through the CLI: a listing without `$schema` detected as OTC, `can_retry`
/// retried, and `developer_message` shown only with `--verbose`.
#[tokio::test]
async fn otc_from_its_openapi() {
    let spec = SpecServer::start("otc_server.py", &[]);
    let tools = toolhost(&["tools", &spec.base]);
    let (out, err) = said(&tools);
    assert!(tools.status.success(), "{err}");
    assert!(out.contains("Calculator_Add") && out.contains("Doorbell_Ring"), "{out}");

    let rang = toolhost(&["call", &spec.base, "Doorbell_Ring", "--arg", "doorbell_id=doorbell42"]);
    let (out, err) = said(&rang);
    assert!(rang.status.success(), "{err}");
    assert_eq!(out.trim(), "null");
    let calls = spec.get("/_test/calls").await;
    assert_eq!(calls["Doorbell_Ring"].as_array().unwrap().len(), 2, "{calls}");

    for (args, shown, hidden) in [
        (
            vec!["call", &spec.base, "Doorbell_Ring", "--arg", "doorbell_id=doorbell1"],
            "Doorbell ID not found",
            "does not exist",
        ),
        (
            vec!["call", &spec.base, "System_GetTimestamp"],
            "temporarily unavailable",
            "db-primary-7",
        ),
    ] {
        let failed = toolhost(&args);
        let (_, err) = said(&failed);
        assert!(!failed.status.success());
        assert!(err.contains(shown) && !err.contains(hidden), "{err}");
        let verbose = toolhost(&[args.as_slice(), &["--verbose"]].concat());
        let (_, err) = said(&verbose);
        assert!(err.contains(shown) && err.contains(hidden), "--verbose: {err}");
    }
}

/// Issue #31.12 through the CLI: Appendix B's agent is listed and called by its id, with its
/// own description.
#[tokio::test]
async fn woa_appendix_b() {
    let spec = SpecServer::start("woa_server.py", &[]);
    let tools = toolhost(&["tools", &spec.base]);
    let (out, err) = said(&tools);
    assert!(tools.status.success(), "{err}");
    assert!(
        out.contains("summarizer") && out.contains("Summarizes English text."),
        "{out}"
    );
    assert!(!out.contains("summarizer.default"), "{out}");
    let called = toolhost(&[
        "call",
        &spec.base,
        "summarizer",
        "--arg",
        "text=The IETF is an open community of designers.",
        "--arg",
        "max_words=40",
    ]);
    let (out, err) = said(&called);
    assert!(called.status.success(), "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"summary": "The IETF is an open community of designers."})
    );
    // The operation's own name still finds the agent, here as everywhere a tool is named.
    let exported = toolhost(&[
        "export",
        &spec.base,
        "--format",
        "mcp-json",
        "--tool",
        "summarizer.default",
    ]);
    let (out, err) = said(&exported);
    assert!(exported.status.success(), "{err}");
    let definitions: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(definitions["tools"][0]["name"], "summarizer", "{definitions}");
    assert_eq!(definitions["tools"][0]["description"], "Summarizes English text.");
}

/// `import tools` from the N-ACT figures' server writes no catalog `check` would refuse: a tool
/// whose parameters carry names no catalog parameter may have (`Flight Class`, `Temperature in
/// Fahrenheit`) is skipped, saying which, and with nothing left the import says why and writes
/// nothing.
#[tokio::test]
async fn importing_the_figures_tools_says_which_names_a_catalog_cannot_take() {
    let spec = SpecServer::start("nact_server.py", &[]);
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let listing = format!("{}/api/tools", spec.base);
    let imported = std::process::Command::new(BIN)
        .args(["import", "tools", &listing, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let (_, err) = said(&imported);
    assert!(!imported.status.success(), "{err}");
    assert!(
        err.contains("`Book Flight` skipped")
            && err.contains("`Flight Class`")
            && err.contains("`Temperature in Fahrenheit`"),
        "{err}"
    );
    let written = std::fs::read_dir(&out).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "nothing is written");
}
