//! The client against servers written from each draft alone (`tests/spec-servers/`, issue #31):
//! N-ACT as Figures 2 and 3 draw it, OTC from its OpenAPI with the spec's example tools, and a
//! WoA host serving Appendix B's document.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_client::{Client, Error, Kind, NactClient, Protocol, Server, Source};

use crate::launch::SpecServer;
use crate::support::{Stub, client};

fn source(url: &str) -> Source {
    Source::parse(url).unwrap()
}

/// The N-ACT spec server, a client, and what the client discovers at its root over N-ACT.
async fn nact() -> (SpecServer, Client, Server) {
    let spec = SpecServer::start("nact_server.py", &[]);
    let client = client(Stub::new(&[]));
    let server = client
        .discover_as(&source(&format!("{}/api", spec.base)), Some(Protocol::Nact))
        .await
        .unwrap();
    (spec, client, server)
}

/// The OTC spec server, a client, and what the client discovers there over OTC.
async fn otc() -> (SpecServer, Client, Server) {
    let spec = SpecServer::start("otc_server.py", &[]);
    let client = client(Stub::new(&[]));
    let server = client
        .discover_as(&source(&spec.base), Some(Protocol::Otc))
        .await
        .unwrap();
    (spec, client, server)
}

/// Issue #31.7: Figure 2's tool `Lookup Weather` and Figure 3's input `Flight Class` are read
/// as the draft writes them, and called by those names.
#[tokio::test]
async fn nact_names_with_spaces_are_read_and_called() {
    let (_spec, client, server) = nact().await;
    assert_eq!(server.skipped, Vec::<String>::new());
    let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Book Flight", "Lookup Weather"]);
    let weather = server.tool("Lookup Weather").unwrap();
    assert_eq!(weather.version_number, Some(1), "\"version\": \"1\" is read");
    assert_eq!(weather.inputs[0].name, "City");
    assert_eq!(weather.outputs[0].name, "Temperature in Fahrenheit");
    let flight = server.tool("Book Flight").unwrap();
    let class = flight.inputs.iter().find(|p| p.name == "Flight Class").unwrap();
    assert!(class.required);
    let Kind::Typed(toolhost_core::InputType::Enum { values }) = &class.kind else {
        panic!("{:?}", class.kind)
    };
    assert_eq!(values.len(), 4);
    assert_eq!(
        flight.inputs[0].type_name(),
        "string",
        "an input without `type` is a string (§6.1)"
    );
    let problems = flight
        .check(&json!({"Destination": "Oslo", "Flight Class": "LUXURY"}))
        .unwrap_err();
    assert!(
        problems[0].message.contains("`Flight Class` expects one of ECONOMY"),
        "{problems:?}"
    );
    let booked = client
        .call(flight, json!({"Destination": "Oslo", "Flight Class": "BUSINESS"}))
        .await
        .unwrap();
    assert_eq!(booked, json!({"Booking": {"to": "Oslo", "class": "BUSINESS"}}));
}

/// Issue #31.8 (N-ACT §5.2 step 2): the designer is handed the enumeration URI itself; the
/// client takes it as the platform root's listing, with or without `--protocol`.
#[tokio::test]
async fn nact_enumeration_uri_is_accepted_as_the_root() {
    let spec = SpecServer::start("nact_server.py", &[]);
    let client = client(Stub::new(&[]));
    for protocol in [Some(Protocol::Nact), None] {
        for url in [format!("{}/api/tools", spec.base), format!("{}/api/tools/", spec.base)] {
            let server = client.discover_as(&source(&url), protocol).await.unwrap();
            assert_eq!(server.protocol, Protocol::Nact, "{url}");
            assert_eq!(server.tools.len(), 2, "{url}");
            assert_eq!(
                server.endpoint.to_string(),
                format!("{}/api", spec.base),
                "the platform root, not {url}"
            );
        }
    }
    // Through the root, the call still goes to `{root}/tools/{id}/versions/1:invoke`.
    let server = client
        .discover(&source(&format!("{}/api/tools", spec.base)))
        .await
        .unwrap();
    let weather = server.tool("Lookup Weather").unwrap();
    let answer = client.call(weather, json!({"City": "Omaha, Nebraska"})).await.unwrap();
    assert_eq!(answer, json!({"Temperature in Fahrenheit": 80}));
}

/// Issue #31.9 (N-ACT §6.4): a last page whose `next` is `""` or `null` ends the listing, for
/// the client and for the low-level `NactClient`.
#[tokio::test]
async fn nact_a_last_page_with_an_empty_or_null_next_ends_the_listing() {
    for last in ["empty", "null"] {
        let spec = SpecServer::start("nact_server.py", &["--last-next", last]);
        let client = client(Stub::new(&[]));
        let server = client
            .discover_as(&source(&format!("{}/api", spec.base)), Some(Protocol::Nact))
            .await
            .unwrap_or_else(|e| panic!("{last}: {e}"));
        assert_eq!(server.tools.len(), 2, "{last}");
        let low = NactClient::new(reqwest::Client::new(), format!("{}/api", spec.base));
        let listed = low.list_tools().await.unwrap_or_else(|e| panic!("{last}: {e}"));
        assert_eq!(listed.len(), 2, "{last}");
    }
}

/// Issue #31.10 (N-ACT §7): "if the request generates a 5xx, the executor SHOULD retry": a 503
/// of a tool with no idempotency mark is retried, and the second attempt answers.
#[tokio::test]
async fn nact_a_503_is_retried_whatever_the_tool() {
    let (spec, client, server) = nact().await;
    let weather = server.tool("Lookup Weather").unwrap();
    assert!(!weather.is_idempotent(), "the draft has no idempotency mark");
    let answer = client.call(weather, json!({"City": "Boston"})).await.unwrap();
    assert_eq!(answer, json!({"Temperature in Fahrenheit": 80}));
    assert_eq!(spec.get("/_test/calls").await, json!({"Lookup Weather": 2}));
}

/// Issue #31.12: an OTC listing without `$schema` (the OpenAPI requires only `tools`) is read,
/// named or detected.
#[tokio::test]
async fn otc_a_listing_without_schema_is_read() {
    let spec = SpecServer::start("otc_server.py", &[]);
    let client = client(Stub::new(&[]));
    for protocol in [Some(Protocol::Otc), None] {
        let server = client.discover_as(&source(&spec.base), protocol).await.unwrap();
        assert_eq!(server.protocol, Protocol::Otc);
        let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Calculator_Add", "Doorbell_Ring", "System_GetTimestamp"]);
        let add = server.tool("Calculator_Add").unwrap();
        assert_eq!(client.call(add, json!({"a": 10, "b": 5})).await.unwrap(), json!(15));
    }
}

/// Issue #31.10 (OTC call-tool "Retrying Errors"): `can_retry: true` is retried after
/// `retry_after_ms`, with a new `call_id` (the first is the failed call's), for a tool with no
/// idempotency mark.
#[tokio::test]
async fn otc_can_retry_is_retried_after_retry_after_ms() {
    let (spec, client, server) = otc().await;
    let ring = server.tool("Doorbell_Ring").unwrap();
    let started = Instant::now();
    let rang = client.call(ring, json!({"doorbell_id": "doorbell42"})).await.unwrap();
    assert_eq!(rang, Value::Null);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    let calls = spec.get("/_test/calls").await;
    let ids = calls["Doorbell_Ring"].as_array().unwrap();
    assert_eq!(ids.len(), 2, "{calls}");
    assert_ne!(ids[0], ids[1], "a retry after a tool failure is a new call");
}

/// Issue #31.11 (OTC errors: `developer_message` "SHOULD NOT be shown to the user or an AI
/// model"): it is kept on the failure (for logs and `--verbose`), never in what is shown.
#[tokio::test]
async fn otc_developer_messages_are_not_shown() {
    let (_spec, client, server) = otc().await;
    let ring = server.tool("Doorbell_Ring").unwrap();
    let failed = client
        .call(ring, json!({"doorbell_id": "doorbell1"}))
        .await
        .unwrap_err();
    let Error::Tool(failure) = &failed else {
        panic!("{failed:?}")
    };
    assert_eq!(failure.message, "Doorbell ID not found");
    assert_eq!(
        failure.developer_message.as_deref(),
        Some("The doorbell with ID 'doorbell1' does not exist."),
        "kept for logs"
    );
    for shown in [failed.to_string(), failed.prompt_for_model().unwrap()] {
        assert!(!shown.contains("does not exist"), "{shown}");
        assert!(shown.contains("ids: doorbell42,doorbell84"), "{shown}");
    }

    let stamp = server.tool("System_GetTimestamp").unwrap();
    let refused = client.call(stamp, json!({})).await.unwrap_err();
    let shown = refused.to_string();
    assert!(matches!(refused, Error::Status { status: 400, .. }), "{refused:?}");
    assert!(shown.contains("temporarily unavailable"), "{shown}");
    assert!(!shown.contains("db-primary-7"), "{shown}");
}

/// Issue #31.12 (WoA Appendix B): the agent `summarizer`, whose one operation is `default`, is
/// the tool `summarizer` with its own description, called with `operation: "default"`.
#[tokio::test]
async fn woa_appendix_b_agent_is_called_by_its_id() {
    let spec = SpecServer::start("woa_server.py", &[]);
    let client = client(Stub::new(&[]));
    for url in [format!("{}/.well-known/woa.json", spec.base), spec.base.clone()] {
        let server = client.discover(&source(&url)).await.unwrap();
        assert_eq!(server.protocol, Protocol::Woa);
        let names: Vec<&str> = server.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["summarizer"], "{url}");
        let tool = server.tool("summarizer").unwrap();
        assert_eq!(tool.description, "Summarizes English text.");
        assert_eq!(tool.title.as_deref(), Some("Document Summarizer"));
        assert!(
            server.tool("summarizer.default").is_some(),
            "the operation's own name still finds it"
        );
        let answer = client
            .call(
                tool,
                json!({"text": "The IETF is an open community of designers.", "max_words": 40}),
            )
            .await
            .unwrap();
        assert_eq!(
            answer,
            json!({"summary": "The IETF is an open community of designers."})
        );
    }
}
