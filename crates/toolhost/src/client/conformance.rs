//! `toolhost verify --conformance URL`: the conformance checker (toolhost-conformance) with the
//! client's network flags. Exit status (docs/conformance.md, "Exit status"): 0 conformant to
//! what could be observed; 1 a MUST failed (with `--strict`, a SHOULD or a warning too) that the
//! expected-failures file does not list, or no server answered; 2 a usage error; 3 nothing could
//! be measured (every check skipped); 4 checks the expected-failures file lists now pass.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use toolhost_client::{Options, Protocol};
use toolhost_conformance::{Invoke, Revision, Spec};

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
    /// The server loads the fixture catalog (examples/conformance-fixture): invoke its tools,
    /// with the fixture's inputs, even on OTC, whose definitions cannot say they are read-only.
    #[arg(long, requires = "conformance")]
    fixture: bool,
    /// Fail on a SHOULD that is not met, or a warning, too, not only on a MUST.
    #[arg(long, requires = "conformance")]
    strict: bool,
    /// The requirement set to check against: nact-00, otc-1.0 or woa-00 (a spec at one
    /// revision; by default the latest of the server's protocol, which it then also selects).
    #[arg(long, value_name = "REVISION", requires = "conformance")]
    spec_version: Option<String>,
    /// A YAML list of check ids the server is known to fail: they do not fail the run, but one
    /// that passes does (exit 4), so the list is kept true.
    #[arg(long, value_name = "FILE", requires = "conformance")]
    expected_failures: Option<std::path::PathBuf>,
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
    options.revision = match &flags.spec_version {
        Some(name) => Some(Revision::parse(name).map_err(|e| usage(&e))?),
        None => None,
    };
    if let Some(path) = &flags.expected_failures {
        let text = std::fs::read_to_string(path).map_err(|e| {
            usage(&format!(
                "--expected-failures {}: failed to read it ({e})",
                path.display()
            ))
        })?;
        options.expected = toolhost_conformance::expected::parse(&text)
            .map_err(|e| usage(&format!("--expected-failures {}: {e}", path.display())))?;
    }
    options.invoke = flags
        .invoke
        .iter()
        .map(|text| Invoke::parse(text))
        .collect::<Result<_, _>>()
        .map_err(|e| usage(&e))?;
    options.fixture = flags.fixture;
    options.max_requests = flags.max_requests.max(1);
    options.time_limit = Duration::from_secs(flags.max_seconds.max(1));
    options.max_tools = flags.max_tools;
    let report = match toolhost_conformance::run(options).await {
        Err(e @ toolhost_conformance::Error::Revision { .. }) => return Err(usage(&e.to_string())),
        report => report?,
    };
    let out = match flags.format {
        ReportFormat::Text => toolhost_conformance::render_text(&report, flags.strict),
        ReportFormat::Json => {
            serde_json::to_string_pretty(&toolhost_conformance::render_json(&report, flags.strict))? + "\n"
        }
        ReportFormat::Junit => toolhost_conformance::render_junit(&report, flags.strict),
    };
    super::print(&out)?;
    let verdict = report.verdict(flags.strict);
    if flags.format != ReportFormat::Text {
        // The text report ends with this line; the others carry it inside.
        eprintln!("toolhost: {}", report.verdict_line(flags.strict));
    }
    Ok(ExitCode::from(verdict.exit_code()))
}

/// A usage error: exit status 2, like clap's own.
fn usage(message: &str) -> anyhow::Error {
    anyhow::Error::new(super::Usage(message.to_owned()))
}
