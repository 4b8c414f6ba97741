//! `toolhost`: serve a tool catalog over N-ACT, OTC, WoA and MCP, check it, and the client subcommands.

mod approvals;
mod auth_config;
mod check;
mod check_report;
mod client;
mod eval;
mod import_next;
mod install;
mod reload;
mod settings;
mod telemetry;
mod versions;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use toolhost_core::catalog::lock::VersionLock;
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{Catalog, Engine, Problem, Severity};

use settings::ServeArgs;

/// The process allocator: a request allocates often and briefly, which glibc's malloc did at 18% of
/// a native call's CPU; mimalloc takes 15-30% more calls a second (BENCHMARKS.md, issue #9).
/// Built with the `system-allocator` feature (heap profiling only: heaptrack and valgrind see
/// malloc, not mimalloc's own pages), the system allocator serves instead.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A tool server and client for AI agents: one catalog over N-ACT, OTC, Web of Agents and MCP.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a catalog (the bundled example catalog when --catalog is not given).
    Serve(Box<ServeArgs>),
    /// Check a catalog and print every problem; exits 1 if any is an error. With --config, as
    /// `serve --config` would load it: `{{secret.NAME}}` checked against its [secrets], its
    /// tag scopes and call timeout applied.
    Check {
        /// The catalog: a directory (its *.yaml, *.yml, *.json files) or one file. With
        /// --config, the config's `catalog` when left out.
        path: Option<PathBuf>,
        /// The server's config file (TOML), as `serve --config` takes it.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Add the catalog's versions that are not locked yet to `versions.lock` beside it
        /// (created when missing); locked versions are checked, never rewritten.
        #[arg(long)]
        lock: bool,
        /// The folder of agent files (*.md) to check over the catalog, instead of the
        /// catalog's own agents/ folder.
        #[arg(long)]
        agents: Option<PathBuf>,
    },
    /// Run one tool of a catalog without a server, showing each upstream step's request as sent
    /// (secrets masked), its answer, and the result: how a catalog author sees what a sculpted
    /// tool does.
    Try(TryArgs),
    /// Write a catalog of sculpted tools from an API description.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Print the SHA-256 of an API key, for `[[auth.api_keys]] sha256` (reads the key from stdin
    /// when not given, so it stays out of shell history).
    HashKey {
        /// The key; omit to read it from stdin.
        key: Option<String>,
    },
    /// Add the catalog, or one agent of it, to an MCP client's configuration (Claude Desktop,
    /// Claude Code, Cursor, VS Code or a plain mcp.json), over stdio or HTTP, keeping the
    /// file's other servers.
    Install(install::InstallArgs),
    /// List a server's pending and recent confirmations (who asked, which call, who decided),
    /// with an operator's credential (docs/approvals.md).
    Approvals {
        /// The server's root URL.
        server: String,
        /// An operator's API key or token (sent as a bearer token).
        #[arg(long, env = "TOOLHOST_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Print JSON, with each confirmation's signed audit records.
        #[arg(long)]
        json: bool,
    },
    /// Measure the server's own quality (search: `toolhost eval search QUERIES.jsonl`).
    #[command(subcommand)]
    Eval(eval::Command),
    #[command(flatten)]
    Client(client::Command),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Client(command) => client::run(command),
        Command::Approvals { server, token, json } => match approvals::run(&server, token.as_deref(), json) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Eval(command) => eval::run(command),
        Command::Check {
            path,
            config,
            lock,
            agents,
        } => check::run(path, config, lock, agents),
        Command::Import(command) => match import_openapi(command) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("toolhost: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Install(args) => match install::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("toolhost: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Try(args) => match try_tool(args) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("toolhost: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::HashKey { key } => {
            let key = key.unwrap_or_else(|| {
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
                line.trim_end_matches(['\r', '\n']).to_owned()
            });
            #[allow(clippy::print_stdout)] // the hash is the command's output
            {
                println!("{}", toolhost_server::auth::hash_key(&key));
            }
            ExitCode::SUCCESS
        }
        Command::Serve(args) => match serve(*args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("toolhost: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// `toolhost import …`.
#[derive(Debug, Subcommand)]
enum ImportCommand {
    /// An OpenAPI 3.0/3.1 or Swagger 2.0 description (YAML or JSON, a file or an http(s) URL):
    /// one `http` tool per operation, in a catalog file `toolhost check` accepts and `toolhost
    /// serve` serves as it is. Into an existing file, a re-import keeps every version there and
    /// adds changed signatures as next versions (or new tools when they break callers).
    Openapi {
        /// The description: a file, or an http(s) URL.
        spec: String,
        /// The toolkit's name (default: the overlay's, else from the document's title).
        #[arg(long)]
        toolkit: Option<String>,
        /// The upstream's base URL (default: the document's first server; without a usable one,
        /// the tools read it from the secret `TOOLKIT_BASE_URL` at serve time).
        #[arg(long)]
        base_url: Option<String>,
        /// Only operations whose name matches one of these globs (comma-separated).
        #[arg(long, value_delimiter = ',')]
        operations: Vec<String>,
        /// Only operations with one of these tags (comma-separated).
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// A sculpt overlay (YAML): renames, kept and fixed inputs, trimmed outputs, combined
        /// operations (see the README).
        #[arg(long)]
        overlay: Option<PathBuf>,
        /// The directory to write the catalog file into (created when missing).
        #[arg(long, default_value = "catalog")]
        out: PathBuf,
        /// Print each operation's tool name, operationId, method and path (and why any would be
        /// skipped) instead of writing anything: what --operations, --tags and --overlay select.
        #[arg(long)]
        list: bool,
        /// Let a URL description (and the files it refers to) be read from loopback and private
        /// addresses, and take a description whose server URL is one (link-local addresses such
        /// as the cloud metadata service never are; `--base-url` is always taken as written).
        #[arg(long)]
        allow_private: bool,
    },
    /// Another tool server's tools (MCP over stdio or streamable HTTP, N-ACT, OTC, WoA) as
    /// catalog tools of kind `upstream`, each pinned to the signature the server gives now: a
    /// later change upstream withdraws the tool until it is imported again, when the catalog's
    /// compatibility rules make it a next version or a new tool.
    Tools {
        /// The server: an http(s) URL, or `stdio:COMMAND ARGS` for an MCP server run as a child.
        source: String,
        /// The protocol to speak (default: probed).
        #[arg(long)]
        protocol: Option<toolhost_client::Protocol>,
        /// The toolkit's name (default: the overlay's, else from the source).
        #[arg(long)]
        toolkit: Option<String>,
        /// Only tools whose upstream name matches one of these globs (comma-separated).
        #[arg(long, value_delimiter = ',')]
        include: Vec<String>,
        /// Leave out tools whose upstream name matches one of these globs (comma-separated).
        #[arg(long, value_delimiter = ',')]
        exclude: Vec<String>,
        /// Put this before every tool's name.
        #[arg(long, default_value = "")]
        prefix: String,
        /// A sculpt overlay (YAML): renames, descriptions, kept inputs, trimmed outputs, skips.
        #[arg(long)]
        overlay: Option<PathBuf>,
        /// The directory to write the catalog file into (created when missing).
        #[arg(long, default_value = "catalog")]
        out: PathBuf,
        /// Credentials to list the server with; the catalog reads them from `[secrets]`, whose
        /// names are printed.
        #[command(flatten)]
        credentials: client::Credentials,
    },
}

/// The most bytes of one description file read from a URL.
const MAX_DESCRIPTION_BYTES: usize = 64 << 20;

/// `toolhost import openapi`: writes (or merges into) the catalog file and says what was left
/// out and what changed.
fn import_openapi(command: ImportCommand) -> anyhow::Result<ExitCode> {
    let (spec, toolkit, base_url, operations, tags, overlay, out, list, allow_private) = match command {
        ImportCommand::Openapi {
            spec,
            toolkit,
            base_url,
            operations,
            tags,
            overlay,
            out,
            list,
            allow_private,
        } => (
            spec,
            toolkit,
            base_url,
            operations,
            tags,
            overlay,
            out,
            list,
            allow_private,
        ),
        ImportCommand::Tools {
            source,
            protocol,
            toolkit,
            include,
            exclude,
            prefix,
            overlay,
            out,
            credentials,
        } => {
            let options = toolhost_import::tools::Options {
                toolkit,
                include,
                exclude,
                prefix,
                overlay: read_overlay(overlay)?,
                headers: credentials.headers(),
            };
            return import_tools(&source, protocol, &options, &out);
        }
    };
    let overlay = read_overlay(overlay)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut read = |at: &str| -> Result<String, String> {
        if at.starts_with("http://") || at.starts_with("https://") {
            let url = url::Url::parse(at).map_err(|e| format!("{at} is not a URL: {e}"))?;
            let mut policy = toolhost_client::Policy::strict();
            if allow_private {
                policy = policy.allow_private();
            }
            let body = runtime
                .block_on(toolhost_client::fetch_document(
                    &url,
                    policy,
                    std::time::Duration::from_secs(30),
                    MAX_DESCRIPTION_BYTES,
                ))
                .map_err(|e| e.to_string())?;
            String::from_utf8(body).map_err(|_| format!("{at} is not UTF-8 text"))
        } else {
            std::fs::read_to_string(at).map_err(|e| format!("failed to read {at}: {e}"))
        }
    };
    let doc = toolhost_import::document::load(&spec, &mut read)
        .and_then(toolhost_import::document::normalize)
        .map_err(|e| anyhow::anyhow!("{spec}: {e}"))?;
    let options = toolhost_import::Options {
        toolkit,
        base_url,
        operations,
        tags,
        overlay,
        location: Some(spec.clone()),
        allow_private,
    };
    let imported = toolhost_import::import(&doc, &options).map_err(|e| anyhow::anyhow!("{spec}: {e}"))?;
    if list {
        return Ok(import_next::list(&imported));
    }
    write_import(imported, &out)
}

/// The overlay file named by `--overlay`, read.
fn read_overlay(path: Option<PathBuf>) -> anyhow::Result<Option<toolhost_import::overlay::Overlay>> {
    let Some(path) = path else { return Ok(None) };
    let text = std::fs::read_to_string(&path).with_context(|| format!("failed to read {}", path.display()))?;
    Ok(Some(
        toolhost_import::overlay::Overlay::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
    ))
}

/// `toolhost import tools`: lists the server's tools and writes (or merges into) the catalog.
fn import_tools(
    source: &str,
    protocol: Option<toolhost_client::Protocol>,
    options: &toolhost_import::tools::Options,
    out: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let parsed = toolhost_client::Source::parse(source).map_err(|e| anyhow::anyhow!("{e}"))?;
    // The operator typed the address: its own origin is trusted, and a command is theirs to run.
    let mut policy = toolhost_client::Policy::strict();
    if let toolhost_client::Source::Url(url) = &parsed {
        policy = policy.trust(url);
    }
    let client = toolhost_client::Client::new(toolhost_client::Options {
        policy,
        allow_stdio: true,
        headers: options.headers.clone(),
        ..toolhost_client::Options::default()
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (server, resources) = runtime.block_on(async {
        let found = client.discover_as(&parsed, protocol).await;
        // An MCP upstream's resources and templates are imported beside its tools (#39.5).
        let resources = match &found {
            Ok(server) if server.protocol == toolhost_client::Protocol::Mcp => Some(
                client
                    .mcp_resources(&parsed, None, toolhost_import::resources::MAX_IMPORTED)
                    .await,
            ),
            _ => None,
        };
        client.close().await;
        (found, resources)
    });
    let mut imported =
        toolhost_import::tools::import(&server?, options).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    match resources {
        Some(Ok(listed)) => {
            imported.resources = toolhost_import::resources::entries(&listed.resources);
            imported.notes.extend(listed.skipped);
        }
        Some(Err(e)) => imported
            .notes
            .push(format!("its resources could not be listed, so none were imported: {e}")),
        None => {}
    }
    write_import(imported, out)
}

/// Writes an import into `out` (merging into the file a previous import wrote) and says what
/// was left out and what changed.
fn write_import(mut imported: toolhost_import::Imported, out: &std::path::Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(out).with_context(|| format!("failed to create {}", out.display()))?;
    // A toolkit renamed (by an overlay's `toolkit:` or --toolkit) goes on in the file the same
    // description was imported into, not into a second one with every tool twice (issue #32.7).
    let mut file = out.join(imported.file_name());
    if !file.exists()
        && let Some(earlier) = imported_from(out, &imported)
    {
        eprintln!(
            "note: {} holds an earlier import of {}: toolkit `{}` goes there, not into a second file",
            earlier.display(),
            imported.title,
            imported.toolkit
        );
        file = earlier;
    }
    let (tools, report) = match std::fs::read_to_string(&file) {
        Ok(existing) => {
            let mut merged = toolhost_import::merge::merge(&existing, &file.display().to_string(), &imported)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            merged.report.extend(toolhost_import::resources::report(
                &existing,
                &imported.toolkit,
                &imported.resources,
            ));
            imported.defaults = merged.defaults;
            // What the file reads after the merge: its own values kept, its older versions too.
            imported.secrets = toolhost_import::overlay::secret_names(
                std::iter::once(&imported.defaults).chain(merged.tools.iter().map(|(_, t)| t)),
            );
            (merged.tools, Some(merged.report))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (toolhost_import::merge::fresh(&imported), None),
        Err(e) => return Err(anyhow::anyhow!("failed to read {}: {e}", file.display())),
    };
    let yaml = toolhost_import::render(&imported, &tools);
    std::fs::write(&file, &yaml).with_context(|| format!("failed to write {}", file.display()))?;
    for note in &imported.notes {
        eprintln!("note: {note}");
    }
    match report {
        None => eprintln!("wrote {} tools to {}", tools.len(), file.display()),
        Some(report) if report.is_empty() => {
            eprintln!("re-imported into {}: no tool changed", file.display());
        }
        Some(report) => {
            eprintln!("re-imported into {}:", file.display());
            for line in &report {
                eprintln!("  {line}");
            }
        }
    }
    import_next::say(&imported.secrets, out)?;
    Ok(ExitCode::SUCCESS)
}

/// The file of `out` an earlier import of the same description wrote, when it holds a tool of
/// the same name (a `--prefix` that makes every name new is a second toolkit, not a duplicate).
fn imported_from(out: &std::path::Path, imported: &toolhost_import::Imported) -> Option<PathBuf> {
    let first_line = format!("# Imported from {} by `toolhost import", imported.title);
    let names: std::collections::HashSet<&str> = imported.tools.iter().map(|t| t.name.as_str()).collect();
    let holds_a_name = |text: &str| {
        text.lines()
            .filter_map(|l| l.trim_start().trim_start_matches("- ").strip_prefix("name: "))
            .any(|name| names.contains(name.trim().trim_matches(['"', '\''])))
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(out)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files.into_iter().find(|p| {
        std::fs::read_to_string(p)
            .ok()
            .is_some_and(|text| text.lines().next().is_some_and(|l| l.starts_with(&first_line)) && holds_a_name(&text))
    })
}

/// What `toolhost try` is given.
#[derive(Debug, clap::Args)]
struct TryArgs {
    /// The catalog: a directory or one file.
    catalog: PathBuf,
    /// The tool's name.
    tool: String,
    /// One argument, `NAME=VALUE`: text for a string or enum input, else JSON (repeatable).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// All arguments as one JSON object.
    #[arg(long, value_name = "JSON", conflicts_with = "args")]
    input: Option<String>,
    /// Run this version (`1`, `1.2.0`) instead of the latest.
    #[arg(long)]
    version: Option<String>,
    /// The server's config file, for its `[secrets]` and call timeout.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Send only GET and HEAD requests; show any other and stop before it.
    #[arg(long)]
    dry_run: bool,
}

/// `toolhost try`: one call of one tool, its upstream steps shown on stderr as they happen
/// (sculpt's `toolhost::try` trace events), the result on stdout.
fn try_tool(a: TryArgs) -> anyhow::Result<ExitCode> {
    let settings = match &a.config {
        Some(config) => Some(ServeArgs::for_check(config.clone(), Some(a.catalog.clone())).resolve()?),
        None => None,
    };
    // No server config: secret names are not checked, and a secret has no value here.
    let factory = match &settings {
        Some(settings) => toolhost_sculpt::Factory::new(settings.secrets.clone())?,
        None => toolhost_sculpt::Factory::for_checking()?,
    };
    let factory = if a.dry_run { factory.dry_run() } else { factory };
    let mut loader = Loader::default().with_backend(toolhost_sculpt::KIND, Arc::new(factory));
    if let Some(settings) = &settings {
        loader = loader
            .with_default_timeout(settings.call_timeout)
            .with_tag_scopes(settings.tag_scopes.clone())
            .with_confirmation_for_actions(settings.require_confirmation);
    }
    let catalog = match load(Some(&a.catalog), None, None, &loader) {
        Ok((catalog, _)) => catalog,
        Err(problems) => {
            report(&problems);
            anyhow::bail!("the catalog has errors; `toolhost check` lists them");
        }
    };
    let found = catalog
        .find(&a.tool)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the catalog has no tool `{}`", a.tool))?;
    let selector = match &a.version {
        None => toolhost_core::VersionSelector::Latest,
        Some(text) => toolhost_core::VersionSelector::pin(text).map_err(anyhow::Error::msg)?,
    };
    let version = found
        .resolve(&selector)
        .ok_or_else(|| anyhow::anyhow!("`{}` has no served version {}", found.name, selector))?;
    let input = match &a.input {
        Some(json) => match serde_json::from_str(json)? {
            serde_json::Value::Object(map) => map,
            _ => anyhow::bail!("--input takes a JSON object"),
        },
        None => {
            let mut map = serde_json::Map::new();
            for pair in &a.args {
                let (name, value) = pair
                    .split_once('=')
                    .ok_or_else(|| anyhow::anyhow!("--arg takes NAME=VALUE, got `{pair}`"))?;
                let text_input = version.input(name).is_some_and(|p| {
                    matches!(
                        p.kind,
                        toolhost_core::InputType::String { .. } | toolhost_core::InputType::Enum { .. }
                    )
                });
                let value = if text_input {
                    serde_json::Value::String(value.to_owned())
                } else {
                    serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()))
                };
                map.insert(name.to_owned(), value);
            }
            map
        }
    };
    // The steps, as they happen, and nothing else.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(format!(
            "{}=trace",
            toolhost_sculpt::TRY
        )))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .with_target(false)
        .with_level(false)
        .try_init();
    let engine = Engine::new(catalog);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = runtime.block_on(engine.invoke(toolhost_core::Invocation {
        tool: found.name.clone(),
        version: selector,
        input,
        context: toolhost_core::CallContext::default(),
    }));
    match result {
        Ok(outcome) => {
            #[allow(clippy::print_stdout)] // the result is the command's output
            {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::Value::Object(outcome.output))?
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("toolhost: {} {}: {e}", found.name, version.semver);
            if let toolhost_core::Error::Failed { failure, .. } = &e
                && let Some(detail) = &failure.developer_message
            {
                eprintln!("  detail: {detail}");
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

fn report(problems: &[Problem]) {
    for p in problems {
        eprintln!("{p}");
    }
    let errors = problems.iter().filter(|p| p.severity == Severity::Error).count();
    eprintln!("{errors} errors, {} warnings", problems.len() - errors);
}

/// Loads the catalog in `dir` (a directory or one file), or the bundled one, with the agents of
/// `agents` (a folder of `*.md`; by default the catalog's own `agents/`), and checks it against
/// the versions recorded for it (`versions::Record`: the `versions.lock` beside it and the one in
/// `state_dir`): a recorded version changed in place, removed or renumbered is an error (issues
/// #22.1, #31.1). Also returns the record's warnings (versions not locked yet).
fn load(
    dir: Option<&std::path::Path>,
    agents: Option<&std::path::Path>,
    state_dir: Option<&std::path::Path>,
    loader: &Loader,
) -> Result<(Catalog, Vec<Problem>), Vec<Problem>> {
    let catalog = load_catalog(dir, agents, loader)?;
    let Some(dir) = dir else {
        return Ok((catalog, Vec::new()));
    };
    let warnings = versions::Record::new(dir, state_dir).verify(&catalog)?;
    Ok((catalog, warnings))
}

/// Loads the catalog in `dir` (a directory or one file), or the bundled one, with the agents of
/// `agents` (by default the catalog's own `agents/`), without checking it against the versions
/// recorded for it.
fn load_catalog(
    dir: Option<&std::path::Path>,
    agents: Option<&std::path::Path>,
    loader: &Loader,
) -> Result<Catalog, Vec<Problem>> {
    let mut sources = match dir {
        Some(dir) => Source::read_dir(dir)?,
        None => toolhost_core::native::bundled_catalog(),
    };
    if let Some(agents) = agents {
        sources.retain(|s| !s.is_agent());
        sources.extend(Source::read_agents(agents)?);
    }
    loader.load_owned(sources)
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut settings = args.clone().resolve()?;
    // As resolved, for a config reload to compare with (the listen port is bound below).
    let running = settings.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let _telemetry = {
        let _inside = runtime.enter();
        telemetry::init(
            settings.log_format,
            &settings.log_level,
            settings.otlp_endpoint.as_deref(),
        )?
    };
    // Before anything is read: a file changed from here on is a change the watcher sees.
    let seen = reload::Seen::now(
        settings.catalog.as_deref(),
        settings.agents.as_deref(),
        settings.config_file.as_deref(),
    );
    let loader = Arc::new(make_loader(&settings)?);
    // Inside the runtime: backends that watch their upstreams start their watchers on it.
    if settings.dev {
        let Some(dir) = &settings.catalog else {
            anyhow::bail!(
                "--dev designs a catalog of your own: give it with --catalog DIR (or `catalog` in the config file)"
            );
        };
        settings.server.design = Some(VersionLock::path_for(dir));
    }
    let loaded = {
        let _inside = runtime.enter();
        if settings.dev {
            // Designing: served as it is, checked against no record, and nothing recorded.
            load_catalog(settings.catalog.as_deref(), settings.agents.as_deref(), &loader).map(|c| (c, Vec::new()))
        } else {
            load(
                settings.catalog.as_deref(),
                settings.agents.as_deref(),
                settings.state_dir.as_deref(),
                &loader,
            )
        }
    };
    let catalog = match loaded {
        Ok((catalog, _)) if settings.dev => {
            versions::log_unpublished(settings.server.design.as_deref(), &catalog);
            catalog
        }
        Ok((catalog, lock_warnings)) => {
            for warning in lock_warnings {
                tracing::warn!("{warning}");
            }
            if let Some(dir) = &settings.catalog {
                // What is served now is what a restart must serve under the same numbers.
                let record = versions::Record::new(dir, settings.state_dir.as_deref());
                if let Some((file, added)) = record.record(&catalog).map_err(|problems| {
                    anyhow::anyhow!(
                        "{}",
                        problems
                            .iter()
                            .map(|p| p.message.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    )
                })? {
                    tracing::info!(
                        file = %file.display(),
                        added,
                        "recorded the served versions not locked yet: a restart refuses a catalog that changes them in place, removes or renumbers them; commit the file with the catalog"
                    );
                }
            }
            catalog
        }
        Err(problems) => {
            report(&problems);
            anyhow::bail!(
                "the catalog has errors; fix them (`toolhost check --config FILE CATALOG` lists them) and start again"
            );
        }
    };
    for warning in catalog.warnings() {
        tracing::warn!("{warning}");
    }
    if settings.server.auth.has_issuers() && settings.server.auth.max_token_lifetime().is_none() {
        tracing::warn!(
            "bearer JWTs are accepted whatever their lifetime: OTC recommends short-lived tokens; set max_token_lifetime_secs in the config file (e.g. 3600) to refuse longer-lived ones"
        );
    }
    let refusing = settings.server.auth.issuers_refusing_aud();
    if !refusing.is_empty() {
        tracing::warn!(
            issuers = %refusing.join(", "),
            "tokens of these issuers that carry `aud` are refused, since there is nothing to check it against (OTC: a present aud MUST be validated); set the issuer's `audience` in [[auth.jwt]], or `public_url`"
        );
    }
    let source = settings
        .catalog
        .as_ref()
        .map_or_else(|| "bundled example catalog".to_owned(), |d| d.display().to_string());
    let agents: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    tracing::info!(tools = catalog.tools().len(), agents = %agents.join(", "), catalog = %source, "catalog loaded");
    let engine = Arc::new(Engine::new(catalog));
    if settings.stdio {
        // Whoever starts the process is the caller: stdio has no credentials to check, so an
        // `[auth]` section does not apply, and that must not go unsaid (issue #21.13).
        if settings.server.auth.enabled() {
            tracing::warn!(
                "serving MCP over stdio: the [auth] settings do not apply here; every tool, whatever its scopes, is served to the process that started this one"
            );
        }
        let mut state = toolhost_server::State::new(engine, settings.server);
        if let Some(name) = &settings.agent {
            state = state.agent_named(name).ok_or_else(|| {
                let catalog = state.engine.catalog();
                let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
                anyhow::anyhow!(
                    "--agent {name}: the catalog has no such agent; its agents are: {} (agent files are the *.md of --agents, by default the catalog's agents/ folder)",
                    if names.is_empty() { "(none)".to_owned() } else { names.join(", ") }
                )
            })?;
            tracing::info!(agent = %name, tools = state.engine.catalog().tools().len(), "serving one agent over MCP on stdio");
        } else {
            tracing::info!("serving MCP over stdio");
        }
        return runtime
            .block_on(toolhost_server::serve_stdio(state))
            .context("MCP over stdio failed");
    }
    let design = settings.server.design.clone();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(settings.server.listen)
            .await
            .with_context(|| format!("failed to listen on {}", settings.server.listen))?;
        let address = listener.local_addr()?;
        // The bound address (the port, when 0 was asked for) is what the WoA document advertises
        // unless a public URL is configured.
        settings.server.listen = address;
        settings.server.https = settings.tls.is_some();
        toolhost_server::adapter::woa::check_transport(&settings.server).map_err(anyhow::Error::msg)?;
        let scheme = if settings.server.https { "https" } else { "http" };
        tracing::info!(
            %address,
            "listening; N-ACT at {scheme}://{address}{}/tools, OTC at {scheme}://{address}{}/tools, MCP at {scheme}://{address}{}",
            settings.server.nact_prefix,
            settings.server.otc_prefix,
            settings.server.mcp.path
        );
        if settings.server.ui {
            tracing::info!(url = %format!("{scheme}://{address}/ui"), "the catalog page is at {scheme}://{address}/ui");
        }
        let state = match &settings.state {
            None => toolhost_server::State::new(engine, settings.server),
            Some((url, password)) => {
                let shared = toolhost_server::shared::Shared::connect(url, password.as_ref())
                    .await
                    .map_err(anyhow::Error::msg)?;
                // Longer than any call runs: the longest version timeout, twice, at least a minute.
                let longest = engine
                    .catalog()
                    .tools()
                    .iter()
                    .flat_map(|t| t.versions.iter().map(|v| v.timeout))
                    .max()
                    .unwrap_or(settings.call_timeout);
                let lease = settings
                    .state_lease
                    .unwrap_or_else(|| (longest * 2).max(std::time::Duration::from_secs(60)));
                tracing::info!(store = %shared.shown(), lease_secs = lease.as_secs(), "call_id results, rate limits and OAuth tokens are shared through the store");
                toolhost_sculpt::share_tokens(Arc::new(shared.clone()));
                toolhost_server::State::with_shared(engine, settings.server, shared, lease)
            }
        };
        // The config file is watched whatever the catalog: a revoked API key must not stay
        // valid until a restart because the bundled catalog is served (issue #21.7).
        if settings.catalog.is_some() || settings.agents.is_some() || settings.config_file.is_some() {
            let watch = reload::Watch {
                catalog: settings.catalog.clone(),
                agents: settings.agents.clone(),
                state_dir: settings.state_dir.clone(),
                design,
                interval: settings.reload_interval,
                config: settings.config_file.clone().map(|path| reload::Reconfigure {
                    path,
                    args,
                    running,
                    make_loader,
                }),
            };
            tokio::spawn(reload::run(watch, seen, Arc::clone(&loader), Arc::clone(&state)));
        }
        match settings.tls {
            Some(files) => toolhost_server::tls::serve(listener, state, files, settings.reload_interval, shutdown_signal()).await,
            None => toolhost_server::serve(listener, state, shutdown_signal()).await,
        }
        .context("server failed")?;
        tracing::info!("stopped");
        Ok(())
    })
}

/// The catalog loader with every backend kind this build knows, for start and for reloads.
fn make_loader(settings: &settings::Settings) -> anyhow::Result<Loader> {
    let sculpt = toolhost_sculpt::Factory::new(settings.secrets.clone())?;
    // Token endpoints of upstream tool servers are asked as sculpted tools ask theirs.
    let upstreams = toolhost_upstream::Factory::new(settings.secrets.clone(), sculpt.client().clone());
    Ok(Loader::default()
        .with_backend(toolhost_sculpt::KIND, Arc::new(sculpt))
        .with_backend(toolhost_upstream::KIND, Arc::new(upstreams))
        .with_default_timeout(settings.call_timeout)
        .with_tag_scopes(settings.tag_scopes.clone())
        .with_confirmation_for_actions(settings.require_confirmation))
}

/// Resolves on Ctrl-C or SIGTERM; in-flight requests then finish before the server exits.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: no new connections; finishing requests in flight");
}
