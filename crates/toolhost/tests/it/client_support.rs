//! An in-process toolhost on 127.0.0.1 whose catalog a test can swap, and client options that
//! allow loopback (the SSRF guard refuses it by default).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use toolhost_client::{Client, Options, Policy, Retry};
use toolhost_core::Engine;
use toolhost_core::catalog::{Loader, Source};

/// A running in-process toolhost; stops when dropped.
pub struct Local {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub engine: Arc<Engine>,
    _stop: oneshot::Sender<()>,
}

impl Local {
    /// Serves `yaml` (one catalog file) on a free loopback port.
    pub async fn start(yaml: &str) -> Self {
        Self::serve(catalog(yaml)).await
    }

    /// Serves the bundled example catalog.
    pub async fn bundled() -> Self {
        let catalog = Loader::default()
            .load(&toolhost_core::native::bundled_catalog())
            .unwrap_or_else(|problems| panic!("the bundled catalog does not load: {problems:#?}"));
        Self::serve(catalog).await
    }

    async fn serve(catalog: toolhost_core::Catalog) -> Self {
        let engine = Arc::new(Engine::new(catalog));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let config = toolhost_server::Config {
            listen: listener.local_addr().unwrap(),
            ..toolhost_server::Config::default()
        };
        let base = format!("http://{}", config.listen);
        let state = toolhost_server::State::new(Arc::clone(&engine), config);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(toolhost_server::serve(listener, state, async {
            let _ = stopped.await;
        }));
        Self {
            base,
            engine,
            _stop: stop,
        }
    }

    /// Serves `yaml` from now on, as a reload would.
    pub fn replace(&self, yaml: &str) {
        self.engine.replace(catalog(yaml));
    }
}

/// `yaml` loaded with the backends `serve` has that need no secrets (`native`, `static`, and
/// `http`, whose steps may call the catalog's own tools, as the conformance catalog's do).
pub fn catalog(yaml: &str) -> toolhost_core::Catalog {
    let sculpt = toolhost_sculpt::Factory::new(Default::default()).expect("the http backend starts without secrets");
    Loader::default()
        .with_backend(toolhost_sculpt::KIND, std::sync::Arc::new(sculpt))
        .load(&[Source {
            name: "test.yaml".to_owned(),
            text: yaml.to_owned(),
        }])
        .unwrap_or_else(|problems| panic!("the test catalog does not load: {problems:#?}"))
}

/// Client options for tests: loopback allowed, fast retries, no cache.
pub fn options() -> Options {
    Options {
        policy: Policy::strict().allow_private(),
        timeout: Duration::from_secs(20),
        retry: Retry {
            base: Duration::from_millis(10),
            ..Retry::default()
        },
        ..Options::default()
    }
}

pub fn client() -> Client {
    Client::new(options()).unwrap()
}

/// A catalog with one tool, `echo_city`, at the given description and versions.
pub fn echo_catalog(description: &str, versions: &[&str]) -> String {
    let mut yaml = format!(
        "toolkits:\n  - name: Demo\n    tools:\n      - name: echo_city\n        description: {description}\n        versions:\n"
    );
    for v in versions {
        yaml.push_str(&format!(
            "          - version: {v}\n            inputs: [{{ name: city, description: A city., max_length: 20 }}]\n            outputs: [{{ name: city, type: string, description: The same city. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
        ));
    }
    yaml
}

/// What the toolhost at `base` lists over MCP (`{base}/mcp`), read with `client`.
pub async fn mcp_listing(client: &Client, base: &str) -> toolhost_client::Server {
    client
        .discover_as(
            &toolhost_client::Source::parse(&format!("{base}/mcp")).unwrap(),
            Some(toolhost_client::Protocol::Mcp),
        )
        .await
        .unwrap()
}
