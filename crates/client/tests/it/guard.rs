//! The SSRF guard (docs/protocols.md §7): literals in every odd form, a stub resolver, redirects.
//! Every refusal must happen before a connection: a loopback listener records whether anything
//! connected, and no address outside loopback is ever dialled.

use std::time::Duration;

use axum::response::Redirect;
use axum::routing::get;
use serde_json::json;
use toolhost_client::{Client, Error, Options, Policy, Source};

use crate::support::{Stub, client, options, page, serve, signature};

/// A listener on 127.0.0.1 that nobody should connect to; `untouched` checks that.
struct Trap {
    listener: std::net::TcpListener,
    port: u16,
}

impl Trap {
    fn new() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        Self { listener, port }
    }

    fn untouched(&self) -> bool {
        matches!(self.listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }
}

async fn refused(client: &Client, url: &str) -> String {
    let source = Source::parse(url).unwrap();
    match client.discover(&source).await {
        Err(e @ Error::Refused { .. }) => e.to_string(),
        other => panic!("{url} must be refused, got {other:?}"),
    }
}

#[tokio::test]
async fn loopback_literals_in_every_form_are_refused_before_connecting() {
    let trap = Trap::new();
    let client = Client::new(Options::default()).unwrap();
    let p = trap.port;
    for url in [
        format!("http://127.0.0.1:{p}/nact"),
        format!("http://127.1:{p}/nact"),
        format!("http://0x7f.0.0.1:{p}/nact"),
        format!("http://2130706433:{p}/nact"),
        format!("http://0177.0.0.1:{p}/nact"),
        format!("http://[::1]:{p}/nact"),
        format!("http://[::ffff:127.0.0.1]:{p}/nact"),
        format!("http://[::ffff:7f00:1]:{p}/nact"),
    ] {
        let message = refused(&client, &url).await;
        assert!(message.contains("--allow-private"), "{message}");
    }
    // "This network" is not private: --allow-private does not open it, so it is not offered.
    for url in [format!("http://0.0.0.0:{p}/nact"), format!("http://0:{p}/nact")] {
        let message = refused(&client, &url).await;
        assert!(
            !message.contains("--allow-private") && message.contains("--allow-net"),
            "{message}"
        );
    }
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://10.0.0.1/",
        "http://192.168.1.1:8080/",
        "http://100.100.100.200/",
        "http://[fe80::1]/",
    ] {
        refused(&client, url).await;
    }
    assert!(trap.untouched(), "nothing may connect before the guard says yes");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(trap.untouched());
}

#[tokio::test]
async fn host_names_are_vetted_by_what_they_resolve_to() {
    let trap = Trap::new();
    let stub = Stub::new(&[
        ("internal.test", &["10.0.0.1"]),
        ("metadata.test", &["169.254.169.254"]),
        ("loop.test", &["127.0.0.1", "::1"]),
        ("mapped.test", &["::ffff:192.168.0.1"]),
    ]);
    let client = Client::new(Options {
        lookup: Some(stub.clone()),
        ..Options::default()
    })
    .unwrap();
    let p = trap.port;
    for host in ["internal.test", "metadata.test", "loop.test", "mapped.test"] {
        let message = refused(&client, &format!("http://{host}:{p}/nact")).await;
        assert!(message.contains("resolves only to denied addresses"), "{message}");
    }
    let message = refused(&client, "http://metadata.test/").await;
    assert!(message.contains("link-local"), "{message}");
    assert!(stub.asked.lock().unwrap().contains(&"internal.test".to_owned()));
    assert!(trap.untouched());
}

#[tokio::test]
async fn only_vetted_addresses_are_dialled() {
    // `mixed.test` resolves to an allowed loopback address and a denied private one; the guard
    // hands reqwest only the first, so the call reaches the stub and nothing else is tried.
    let app = axum::Router::new().route(
        "/nact/tools",
        get(|| async { axum::Json(page(vec![signature("echo", "Echo.")])) }),
    );
    let base = serve(app).await;
    let port = base.rsplit(':').next().unwrap();
    let stub = Stub::new(&[("mixed.test", &["10.9.9.9", "127.0.0.1"])]);
    let client = client(stub);
    let server = client
        .discover(&Source::parse(&format!("http://mixed.test:{port}/nact")).unwrap())
        .await
        .unwrap();
    assert_eq!(server.tools[0].name, "echo");
}

#[tokio::test]
async fn allow_lists_open_exactly_what_they_name() {
    let app = axum::Router::new().route("/nact/tools", get(|| async { axum::Json(page(vec![])) }));
    let base = serve(app).await;
    let source = Source::parse(&format!("{base}/nact")).unwrap();
    let private = Client::new(Options {
        policy: Policy::strict().allow_private(),
        ..Options::default()
    })
    .unwrap();
    assert!(private.discover(&source).await.unwrap().tools.is_empty());
    let elsewhere = Client::new(Options {
        policy: Policy::strict().allow("127.0.0.2/32".parse().unwrap()),
        ..Options::default()
    })
    .unwrap();
    assert!(matches!(elsewhere.discover(&source).await, Err(Error::Refused { .. })));
}

#[tokio::test]
async fn redirects_are_checked_hop_by_hop() {
    let trap = Trap::new();
    let p = trap.port;
    let app = axum::Router::new()
        .route(
            "/to-literal/tools",
            get(move || async move { Redirect::temporary(&format!("http://127.0.0.2:{p}/nact/tools")) }),
        )
        .route(
            "/to-mapped/tools",
            get(move || async move { Redirect::temporary(&format!("http://[::ffff:10.0.0.1]:{p}/nact/tools")) }),
        )
        .route(
            "/to-name/tools",
            get(move || async move { Redirect::temporary(&format!("http://internal.test:{p}/nact/tools")) }),
        )
        .route(
            "/to-file/tools",
            get(|| async { Redirect::temporary("file:///etc/passwd") }),
        )
        .route("/fine/tools", get(|| async { Redirect::temporary("/nact/tools") }))
        .route(
            "/nact/tools",
            get(|| async { axum::Json(page(vec![signature("echo", "Echo.")])) }),
        );
    let base = serve(app).await;
    let client = client(Stub::new(&[("internal.test", &["10.0.0.1"])]));
    for path in ["to-literal", "to-mapped", "to-name"] {
        let message = refused(&client, &format!("{base}/{path}")).await;
        assert!(message.contains("refused"), "{path}: {message}");
    }
    // reqwest does not follow a redirect to another scheme at all; the answer stays a 307.
    let file = client
        .discover(&Source::parse(&format!("{base}/to-file")).unwrap())
        .await;
    assert!(file.is_err());
    assert!(trap.untouched());
    let server = client
        .discover_as(
            &Source::parse(&format!("{base}/fine")).unwrap(),
            Some(toolhost_client::Protocol::Nact),
        )
        .await
        .unwrap();
    assert_eq!(server.tools.len(), 1, "a redirect within the allowed range is followed");
}

#[tokio::test]
async fn woa_invoke_urls_from_the_document_are_guarded_too() {
    // The document points its REST base at a metadata address; the call is refused. (Over
    // plain http the agent is not even listed: WoA REST must use https.)
    let app = axum::Router::new().route(
        "/.well-known/woa.json",
        get(|| async {
            axum::Json(json!({
                "woa_version": "1",
                "agents": [{"id": "grab", "name": "grab", "description": "d.",
                            "inputs": {"type": "object", "properties": {}}, "outputs": {"type": "object"},
                            "transports": ["rest"]}],
                "transports": {"rest": {"base": "https://169.254.169.254", "invoke_path": "/agents/{agent_id}/invoke"}}
            }))
        }),
    );
    let base = serve(app).await;
    let client = client(Stub::new(&[]));
    let server = client.discover(&Source::parse(&base).unwrap()).await.unwrap();
    assert_eq!(server.protocol, toolhost_client::Protocol::Woa);
    let err = client.call(&server.tools[0], json!({})).await.unwrap_err();
    assert!(matches!(err, Error::Refused { .. }), "{err}");
}

#[test]
fn options_in_tests_allow_only_loopback() {
    let o = options(Stub::new(&[]));
    assert!(o.policy.check("127.0.0.1".parse().unwrap()).is_ok());
    assert!(o.policy.check("10.0.0.1".parse().unwrap()).is_err());
}

/// A name that does not resolve is a transport failure, not an SSRF refusal: `--allow-private`
/// would not help it, and the message must not say it would. A metadata address is refused
/// without that hint, since `--allow-private` never opens it.
#[tokio::test]
async fn an_unresolvable_name_is_not_a_refusal_and_metadata_is_never_private() {
    let client = client(Stub::new(&[
        ("metadata.test", &["169.254.169.254"]),
        ("inside.test", &["10.1.2.3"]),
    ]));
    let err = client
        .discover(&Source::parse("http://nowhere.test/").unwrap())
        .await
        .unwrap_err();
    assert!(!matches!(err, Error::Refused { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("failed to resolve nowhere.test"), "{message}");
    assert!(
        !message.contains("allow-private") && !message.contains("SSRF"),
        "{message}"
    );
    match client.discover(&Source::parse("http://metadata.test/").unwrap()).await {
        Err(Error::Refused { private, .. }) => assert!(!private, "--allow-private never opens link-local"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    match client.discover(&Source::parse("http://inside.test/").unwrap()).await {
        Err(Error::Refused { private, .. }) => assert!(private, "--allow-private opens 10/8"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A resolver that answers an allowed address first and a denied one after: DNS rebinding.
#[derive(Debug, Default)]
struct Rebinding {
    asked: std::sync::atomic::AtomicUsize,
}

impl toolhost_client::guard::Lookup for Rebinding {
    fn lookup<'a>(
        &'a self,
        _host: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<std::net::IpAddr>>> + Send + 'a>> {
        let n = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let ip = if n == 0 { "127.0.0.1" } else { "127.0.0.2" };
        Box::pin(async move { Ok(vec![ip.parse().unwrap()]) })
    }
}

/// Issue #12.4 (WoA §8.2): a name checked as allowed and then rebound to a denied address is
/// never dialled there: the connection uses only addresses the guard vetted at connect time.
#[tokio::test]
async fn a_name_rebound_after_the_check_is_never_dialled() {
    let listener = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let trap = Trap {
        port: listener.local_addr().unwrap().port(),
        listener,
    };
    let lookup = std::sync::Arc::new(Rebinding::default());
    let client = Client::new(Options {
        lookup: Some(lookup.clone()),
        ..options(Stub::new(&[]))
    })
    .unwrap();
    let source = Source::parse(&format!("http://rebind.test:{}/nact", trap.port)).unwrap();
    let result = client.discover(&source).await;
    assert!(result.is_err(), "{result:?}");
    assert!(
        lookup.asked.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "the name was looked up again to connect"
    );
    assert!(trap.untouched(), "the rebound, denied address was dialled");
}
