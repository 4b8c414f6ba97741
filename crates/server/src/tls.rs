//! Serving https directly with rustls (WoA requires https on the open Internet), with the
//! certificate and key reloaded when their files change.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum_server::tls_rustls::RustlsConfig;

use crate::State;

/// The PEM files of the server's certificate chain and private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

impl TlsFiles {
    fn modified(&self) -> (Option<SystemTime>, Option<SystemTime>) {
        let at = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        (at(&self.cert), at(&self.key))
    }

    /// Loads the files, saying which one is wrong.
    pub async fn load(&self) -> std::io::Result<RustlsConfig> {
        // One crypto provider for the process; an error means one is installed already.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        RustlsConfig::from_pem_file(&self.cert, &self.key).await.map_err(|e| {
            std::io::Error::other(format!(
                "failed to load the TLS certificate {} and key {}: {e}",
                self.cert.display(),
                self.key.display()
            ))
        })
    }
}

/// Serves `state` over https on `listener` until `shutdown` resolves; requests in flight then
/// get the configured shutdown timeout. The files are checked every `reload_every` and a
/// changed pair is loaded without a restart (a bad pair is logged; the old one keeps serving).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    files: TlsFiles,
    reload_every: Option<Duration>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::adapter::woa::announce(&state.config);
    let config = files.load().await?;
    if let Some(every) = reload_every {
        tokio::spawn(watch(config.clone(), files, every));
    }
    let (limits, grace) = (state.config.connections, state.config.shutdown_timeout);
    let app = crate::app(state);
    crate::http::accept::serve(listener, app, Handshake(config), limits, shutdown, grace).await
}

/// The TLS handshake, with the certificate in force now (reloads take effect for new
/// connections).
#[derive(Clone)]
struct Handshake(RustlsConfig);

impl std::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handshake")
    }
}

impl crate::http::accept::Handshake for Handshake {
    type Stream = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    async fn handshake(&self, tcp: tokio::net::TcpStream) -> Option<Self::Stream> {
        match tokio_rustls::TlsAcceptor::from(self.0.get_inner()).accept(tcp).await {
            Ok(stream) => Some(stream),
            Err(e) => {
                tracing::debug!(error = %e, "TLS handshake failed");
                None
            }
        }
    }
}

async fn watch(config: RustlsConfig, files: TlsFiles, every: Duration) {
    let mut last = files.modified();
    loop {
        tokio::time::sleep(every).await;
        let now = files.modified();
        if now == last {
            continue;
        }
        last = now;
        match config.reload_from_pem_file(&files.cert, &files.key).await {
            Ok(()) => tracing::info!(cert = %files.cert.display(), "TLS certificate reloaded"),
            Err(e) => {
                tracing::error!(cert = %files.cert.display(), "failed to reload the TLS certificate; still serving the previous one: {e}")
            }
        }
    }
}
