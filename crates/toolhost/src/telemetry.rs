//! Logs (text or JSON on stderr) and, with the `otel` cargo feature and `--otlp-endpoint`,
//! request spans exported over OTLP/HTTP.

use std::io::IsTerminal as _;

use anyhow::Context as _;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::settings::LogFormat;

/// Keeps the span exporter alive; dropping it flushes what is left.
#[derive(Debug, Default)]
pub struct Guard {
    #[cfg(feature = "otel")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Sets up logging, and span export when `otlp_endpoint` is given. Call inside the tokio runtime
/// (the exporter batches on it).
pub fn init(format: LogFormat, level: &str, otlp_endpoint: Option<&str>) -> anyhow::Result<Guard> {
    let filter =
        tracing_subscriber::EnvFilter::try_new(level).with_context(|| format!("invalid log level `{level}`"))?;
    // Colours only when a person is watching; logs piped to files or collectors stay plain.
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let fmt = match format {
        LogFormat::Text => fmt.boxed(),
        LogFormat::Json => fmt.json().boxed(),
    };
    let registry = tracing_subscriber::registry().with(filter).with(fmt);
    let guard = Guard::default();
    match otlp_endpoint {
        None => registry
            .try_init()
            .map_err(|e| anyhow::anyhow!("failed to set up logging: {e}"))?,
        #[cfg(feature = "otel")]
        Some(endpoint) => {
            let (layer, provider) = otel::layer(endpoint)?;
            registry
                .with(layer)
                .try_init()
                .map_err(|e| anyhow::anyhow!("failed to set up logging: {e}"))?;
            tracing::info!(%endpoint, "exporting spans over OTLP/HTTP");
            return Ok(Guard {
                provider: Some(provider),
            });
        }
        #[cfg(not(feature = "otel"))]
        Some(_) => anyhow::bail!(
            "--otlp-endpoint needs a build with the `otel` feature: cargo build --release -p toolhost --features otel"
        ),
    }
    Ok(guard)
}

#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::WithExportConfig as _;
    use opentelemetry_sdk::trace::SdkTracerProvider;

    /// A tracing layer that exports spans to `endpoint` (e.g. `http://127.0.0.1:4318/v1/traces`).
    pub(super) fn layer<S>(
        endpoint: &str,
    ) -> anyhow::Result<(impl tracing_subscriber::Layer<S> + Send + Sync, SdkTracerProvider)>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a> + Send + Sync,
    {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(endpoint)
            .build()
            .map_err(|e| anyhow::anyhow!("failed to set up the OTLP exporter for {endpoint}: {e}"))?;
        let processor = opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor::builder(
            exporter,
            opentelemetry_sdk::runtime::Tokio,
        )
        .build();
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("toolhost")
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("toolhost");
        Ok((tracing_opentelemetry::layer().with_tracer(tracer), provider))
    }
}
