//! `toolhost verify --conformance URL`: the conformance checker (toolhost-conformance) with the
//! client's network flags. Exit status 0 when no MUST fails (with `--strict`, no SHOULD either),
//! 1 otherwise, 2 for a usage error.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use toolhost_client::{Options, Protocol};
use toolhost_conformance::{Invoke, Spec};

/// The flags of `verify --conformance`.
#[derive(Debug, Clone, Args)]
pub struct Flags {
    /// Check the N-ACT, OTC or WoA server at URL against its spec instead of a lockfile: one
    /// PASS/FAIL/SKIP per normative statement (README "Conformance checks").
    #[arg(long, value_name = "URL")]
    pub conformance: Option<String>,
    /// A tool the checker may invoke for real, as NAME or NAME=JSON (its input) (repeatable).
    /// Without it only tools the server marks read-only are invoked; the others only get
    /// requests their spec says must be refused before anything runs.
    #[arg(long = "invoke", value_name = "TOOL", requires = "conformance")]
    invoke: Vec<String>,
    /// Fail on a SHOULD that is not met too, not only on a MUST.
    #[arg(long, requires = "conformance")]
    strict: bool,
    /// How to report: text, json or junit (JUnit XML, for CI).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, requires = "conformance")]
    format: ReportFormat,
    /// The most requests the check sends.
    #[arg(long, default_value_t = 500, value_name = "N", requires = "conformance")]
    max_requests: usize,
    /// The longest the check runs, in seconds (checks not reached by then are skipped).
    #[arg(long, default_value_t = 120, value_name = "SECONDS", requires = "conformance")]
    max_seconds: u64,
    /// How many tools get the checks that need requests of their own (all get the others).
    #[arg(long, default_value_t = 10, value_name = "N", requires = "conformance")]
    max_tools: usize,
}

/// `--format` of `verify --conformance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One line per check, the evidence under each failure.
    Text,
    /// One JSON document.
    Json,
    /// JUnit XML: a test case per check.
    Junit,
}

/// Runs the checks and prints the report.
pub async fn run(flags: &Flags, url: &str, protocol: Option<Protocol>, client: Options) -> anyhow::Result<ExitCode> {
    let url = url::Url::parse(url).map_err(|e| anyhow::anyhow!("--conformance {url}: not a URL ({e})"))?;
    anyhow::ensure!(
        matches!(url.scheme(), "http" | "https"),
        "--conformance takes an http(s) URL of an N-ACT, OTC or WoA server"
    );
    let protocol = match protocol {
        None => None,
        Some(Protocol::Nact) => Some(Spec::Nact),
        Some(Protocol::Otc) => Some(Spec::Otc),
        Some(Protocol::Woa) => Some(Spec::Woa),
        Some(Protocol::Mcp) => anyhow::bail!(
            "--conformance checks N-ACT, OTC and WoA; MCP servers have the MCP project's own conformance suite"
        ),
    };
    let mut options = toolhost_conformance::Options::new(url, client);
    options.protocol = protocol;
    options.invoke = flags
        .invoke
        .iter()
        .map(|text| Invoke::parse(text))
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    options.max_requests = flags.max_requests.max(1);
    options.time_limit = Duration::from_secs(flags.max_seconds.max(1));
    options.max_tools = flags.max_tools;
    let report = toolhost_conformance::run(options).await?;
    let out = match flags.format {
        ReportFormat::Text => toolhost_conformance::render_text(&report),
        ReportFormat::Json => serde_json::to_string_pretty(&toolhost_conformance::render_json(&report))? + "\n",
        ReportFormat::Junit => toolhost_conformance::render_junit(&report, flags.strict),
    };
    super::print(&out)?;
    Ok(if report.failed(flags.strict) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
