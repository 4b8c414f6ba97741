//! The client subcommands: `tools`, `describe`, `call`, `lock`, `verify` (and `verify
//! --conformance`), `export`.
//!
//! Thin over toolhost-client: parse flags, run one library operation, render the answer
//! (`render`). Exit status: 0 success; 1 a failure (unreachable server, tool failed, drift);
//! 2 a call refused before sending because its arguments are invalid (or a usage error); 3 a
//! call the user declined, 4 one not confirmed (lapsed, or not decided in time): in both,
//! nothing ran (`confirm`).

mod confirm;
mod conformance;
mod render;
mod suggest;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};
use ipnet::IpNet;
use serde_json::{Map, Value};
use toolhost_client::{Client, Error, Format, Kind, Lockfile, Options, Policy, Protocol, Retry, Server, Source, Tool};

use render::Style;

/// The client subcommands, flattened into `toolhost`'s own.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List a server's tools (name, version, description); the protocol is detected.
    Tools {
        /// The server: an http(s) URL, or `stdio:COMMAND ARGS` for an MCP server run as a child.
        source: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        net: Net,
    },
    /// List the agents a toolhost server serves: name, tools, URL (which every client command
    /// takes, as a server of the agent's tools) and description.
    Agents {
        /// The server's root URL (or its `/agents` listing).
        source: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        net: Net,
    },
    /// Find a server's tools by what you want done, most relevant first: the server's own
    /// ranking (toolhost's N-ACT `?q=`), else ranked here over what it lists.
    Search {
        /// The server (as for `tools`).
        source: String,
        /// What you want done, in your words.
        query: String,
        /// At most this many tools.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        net: Net,
    },
    /// Show one tool: its inputs with what each accepts, its outputs and versions.
    Describe {
        /// The server (as for `tools`).
        source: String,
        /// The tool's name.
        tool: String,
        /// Print JSON (with the definition as the server sent it).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        net: Net,
    },
    /// Call a tool and print its result; the arguments are checked locally first.
    Call {
        /// The server (as for `tools`).
        source: String,
        /// The tool's name.
        tool: String,
        /// One argument; the value is JSON unless the parameter is a string (repeatable).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// All arguments as one JSON object.
        #[arg(long, value_name = "JSON", conflicts_with = "args")]
        input: Option<String>,
        /// OTC `context.user_id`: the end user the call is for.
        #[arg(long, value_name = "ID")]
        user_id: Option<String>,
        /// OTC `context.secrets`: `ID=env:VAR` or `ID=file:PATH` (or `ID=VALUE`, which shell
        /// history keeps) (repeatable).
        #[arg(long = "secret", value_name = "ID=SOURCE")]
        secrets: Vec<String>,
        /// OTC `context.authorization`: a provider's token, `ID=env:VAR`, `ID=file:PATH` or
        /// `ID=TOKEN` (repeatable).
        #[arg(long = "authorization", value_name = "ID=SOURCE")]
        authorization: Vec<String>,
        #[command(flatten)]
        confirm: confirm::Flags,
        #[command(flatten)]
        net: Net,
    },
    /// Pin tools: write a lockfile of each tool's server, protocol, version and signature hash.
    Lock {
        /// The servers.
        #[arg(required = true)]
        sources: Vec<String>,
        /// Only these tools (repeatable); all when absent.
        #[arg(long = "tool", value_name = "NAME")]
        tools: Vec<String>,
        /// Write here instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
        #[command(flatten)]
        net: Net,
    },
    /// Re-fetch every tool of a lockfile and report drift; exits 1 on any error. With
    /// `--conformance URL`, check an N-ACT, OTC or WoA server against its spec instead.
    Verify {
        /// The lockfile.
        #[arg(default_value = "toolhost.lock")]
        lockfile: PathBuf,
        /// Start the lockfile's `stdio:` servers (commands); without it they are reported as
        /// not started, since a lockfile may come from anyone.
        #[arg(long)]
        allow_stdio: bool,
        #[command(flatten)]
        conformance: conformance::Flags,
        #[command(flatten)]
        net: Net,
    },
    /// Write tools as function/tool definitions for an LLM API, with names unique across servers.
    Export {
        /// The servers.
        #[arg(required = true)]
        sources: Vec<String>,
        /// The definition format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Only these tools (repeatable); all when absent.
        #[arg(long = "tool", value_name = "NAME")]
        tools: Vec<String>,
        /// Also write the mapping from exported names back to server, protocol and tool.
        #[arg(long, value_name = "FILE")]
        mapping: Option<PathBuf>,
        /// Write here instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
        #[command(flatten)]
        net: Net,
    },
}

/// `--format` of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// `[{"type": "function", "function": {name, description, parameters}}]`.
    Openai,
    /// `[{name, description, input_schema}]`.
    Anthropic,
    /// `{"tools": [{name, description, inputSchema, outputSchema?}]}`.
    McpJson,
}

/// How the client reaches servers: shared by every client subcommand.
#[derive(Debug, Clone, Args)]
pub struct Net {
    /// Use this protocol instead of detecting it: nact, otc, woa or mcp.
    #[arg(long, value_parser = clap::value_parser!(Protocol))]
    protocol: Option<Protocol>,
    /// Allow loopback and private addresses (RFC 1918, CGNAT, unique-local), which the SSRF
    /// guard refuses by default; link-local and metadata addresses stay refused.
    #[arg(long, env = "TOOLHOST_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    allow_private: bool,
    /// Allow this range, e.g. 10.1.0.0/16 or 127.0.0.1 (repeatable, or comma-separated).
    #[arg(long = "allow-net", value_name = "CIDR", env = "TOOLHOST_ALLOW_NET", value_delimiter = ',', value_parser = parse_net)]
    allow_net: Vec<IpNet>,
    /// The limit on each request and each call attempt, in milliseconds.
    #[arg(long, env = "TOOLHOST_TIMEOUT_MS", default_value_t = 30_000)]
    timeout_ms: u64,
    /// Attempts per call, the first included (retries follow docs/protocols.md §7).
    #[arg(long, default_value_t = 3)]
    attempts: u32,
    /// Do not read or write the catalog cache.
    #[arg(long)]
    no_cache: bool,
    /// Where catalogs are cached [default: $XDG_CACHE_HOME/toolhost/catalogs or ~/.cache/toolhost/catalogs].
    #[arg(long, env = "TOOLHOST_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Colours in terminal output.
    #[arg(long, value_enum, default_value_t = Colour::Auto)]
    color: Colour,
    /// Also write the client's log to stderr: retries and their waits, and what servers say for
    /// developers only (OTC's `developer_message`, which is never shown otherwise).
    #[arg(long, short)]
    verbose: bool,
    #[command(flatten)]
    credentials: Credentials,
}

/// Credentials for the server the user names: shared by the client subcommands and `import
/// tools`.
#[derive(Debug, Clone, Args)]
pub struct Credentials {
    /// Send `Authorization: Bearer TOKEN` to the server you name (never to another origin).
    #[arg(long, value_name = "TOKEN", env = "TOOLHOST_BEARER", hide_env_values = true)]
    bearer: Option<String>,
    /// Send `OTC-API-Key: KEY` (the API key header of toolhost and OTC) to the server you name.
    #[arg(long, value_name = "KEY", env = "TOOLHOST_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Send this header to the server you name (repeatable), e.g. 'X-Api-Key: abc'.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// Credentials per server, by URL prefix [default: $XDG_CONFIG_HOME/toolhost/servers.toml
    /// or ~/.config/toolhost/servers.toml, when it exists].
    #[arg(long, value_name = "FILE", env = "TOOLHOST_SERVERS")]
    servers: Option<PathBuf>,
}

/// One entry of the servers file.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerEntry {
    /// A URL prefix: its origin, optionally with a path (`https://tools.example.com/team/`).
    url: String,
    #[serde(default)]
    bearer: Option<String>,
    /// The environment variable holding the bearer token (the file then holds no secret).
    #[serde(default)]
    bearer_env: Option<String>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
}

/// The servers file.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ServersFile {
    #[serde(default)]
    server: Vec<ServerEntry>,
}

impl Credentials {
    /// The servers file's headers by URL prefix: the one given, else the default one when it
    /// exists. A variable it names that is unset is an error naming it.
    pub fn server_headers(&self) -> anyhow::Result<toolhost_client::ServerHeaders> {
        let path = match &self.servers {
            Some(path) => path.clone(),
            None => {
                let config = std::env::var_os("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
                match config.map(|c| c.join("toolhost/servers.toml")) {
                    Some(path) if path.exists() => path,
                    _ => return Ok(Vec::new()),
                }
            }
        };
        let text = std::fs::read_to_string(&path).with_context(|| format!("failed to read {}", path.display()))?;
        let file: ServersFile = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let env = |name: &str| {
            std::env::var(name)
                .map_err(|_| anyhow::anyhow!("{}: the environment variable `{name}` is not set", path.display()))
        };
        let mut out = Vec::new();
        for entry in file.server {
            let url = url::Url::parse(&entry.url)
                .map_err(|e| anyhow::anyhow!("{}: `{}` is not a URL ({e})", path.display(), entry.url))?;
            let mut headers: Vec<(String, String)> = entry.headers.into_iter().collect();
            let bearer = match (&entry.bearer, &entry.bearer_env) {
                (_, Some(name)) => Some(env(name)?),
                (Some(token), None) => Some(token.clone()),
                (None, None) => None,
            };
            if let Some(token) = bearer {
                headers.push(("Authorization".to_owned(), format!("Bearer {}", token.trim())));
            }
            let key = match (&entry.api_key, &entry.api_key_env) {
                (_, Some(name)) => Some(env(name)?),
                (Some(key), None) => Some(key.clone()),
                (None, None) => None,
            };
            if let Some(key) = key {
                headers.push(("OTC-API-Key".to_owned(), key.trim().to_owned()));
            }
            out.push((url, headers));
        }
        Ok(out)
    }

    /// The headers `--bearer`, `--api-key` and `--header` ask for.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = self.headers.clone();
        if let Some(token) = &self.bearer {
            headers.push(("Authorization".to_owned(), format!("Bearer {}", token.trim())));
        }
        if let Some(key) = &self.api_key {
            headers.push(("OTC-API-Key".to_owned(), key.trim().to_owned()));
        }
        headers
    }
}

/// `--header 'NAME: VALUE'`.
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| "a header is `NAME: VALUE`, e.g. 'X-Api-Key: abc'".to_owned())?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
    {
        return Err(format!("`{name}` is not a header name"));
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Colour {
    /// Only when standard output is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

fn parse_net(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| format!("`{text}` is not a CIDR range or an IP address, e.g. 10.0.0.0/8 or 127.0.0.1"))
}

impl Net {
    /// The protocol `--protocol` names, if any.
    pub(crate) fn protocol(&self) -> Option<Protocol> {
        self.protocol
    }

    fn options(&self) -> anyhow::Result<Options> {
        let mut policy = Policy::strict();
        if self.allow_private {
            policy = policy.allow_private();
        }
        for net in &self.allow_net {
            policy = policy.allow(*net);
        }
        Ok(Options {
            policy,
            cache_dir: if self.no_cache {
                None
            } else {
                self.cache_dir.clone().or_else(toolhost_client::default_cache_dir)
            },
            timeout: Duration::from_millis(self.timeout_ms.max(1)),
            retry: Retry {
                attempts: self.attempts.max(1),
                ..Retry::default()
            },
            headers: self.credentials.headers(),
            server_headers: self.credentials.server_headers()?,
            ..Options::default()
        })
    }
}

/// A mistake in how a command was invoked (a flag's value, a file it names): exit status 2, as
/// clap's own usage errors.
#[derive(Debug)]
pub(crate) struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Runs a client subcommand to its exit status.
pub fn run(command: Command) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolhost: failed to start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(command)) {
        Ok(code) => code,
        Err(e) => {
            let unconfirmed = e.downcast_ref::<Error>().and_then(confirm::exit_code);
            let code = match (e.downcast_ref::<Error>(), unconfirmed) {
                (_, Some(code)) => ExitCode::from(code),
                (Some(Error::InvalidArguments { .. }), None) => ExitCode::from(2),
                _ if e.downcast_ref::<Usage>().is_some() => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            };
            eprintln!("toolhost: {e:#}");
            code
        }
    }
}

async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Tools { source, json, net } => {
            let style = Style::new(net.color);
            with_client(&net, vec![source.clone()], false, |client| async move {
                let server = discover(&client, &source, net.protocol).await?;
                for skipped in &server.skipped {
                    eprintln!("toolhost: {}", toolhost_client::text::one_line(skipped, 300));
                }
                let out = if json {
                    render::json(&Value::Array(server.tools.iter().map(render::tool_json).collect()))
                } else {
                    render::tools_table(&server, style)
                };
                print(&out)?;
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Agents { source, json, net } => {
            let style = Style::new(net.color);
            with_client(&net, vec![source.clone()], false, |client| async move {
                let Source::Url(url) = Source::parse(&source).map_err(anyhow::Error::msg)? else {
                    return Err(Usage("agents are listed by a toolhost server's URL, not a command".to_owned()).into());
                };
                let agents = client.agents(&url).await?;
                let out = if json {
                    render::json(&Value::Array(agents.iter().map(render::agent_json).collect()))
                } else {
                    render::agents_table(&agents, style)
                };
                print(&out)?;
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Search {
            source,
            query,
            limit,
            json,
            net,
        } => {
            let style = Style::new(net.color);
            with_client(&net, vec![source.clone()], false, |client| async move {
                let mut server = discover(&client, &source, net.protocol).await?;
                let (found, by) = client.search(&server, &query, limit).await?;
                if by == toolhost_client::search::RankedBy::Client {
                    eprintln!("toolhost: note: the server does not rank searches; ranked here over the tools it lists");
                }
                server.tools = found;
                let out = if json {
                    render::json(&Value::Array(server.tools.iter().map(render::tool_json).collect()))
                } else if server.tools.is_empty() {
                    "no tool matches; try other words".to_owned()
                } else {
                    render::tools_table(&server, style)
                };
                print(&out)?;
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Describe {
            source,
            tool,
            json,
            net,
        } => {
            let style = Style::new(net.color);
            with_client(&net, vec![source.clone()], false, |client| async move {
                let server = discover(&client, &source, net.protocol).await?;
                let tool = find(&server, &tool)?;
                let out = if json {
                    let mut value = render::tool_json(tool);
                    value["definition"] = tool.definition.clone();
                    render::json(&value)
                } else {
                    render::describe(&server, tool, style)
                };
                print(&out)?;
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Call {
            source,
            tool,
            args,
            input,
            user_id,
            secrets,
            authorization,
            confirm,
            net,
        } => {
            let context = toolhost_client::CallContext {
                user_id,
                secrets: secrets
                    .iter()
                    .map(|s| context_value("--secret", s))
                    .collect::<anyhow::Result<_>>()?,
                authorization: authorization
                    .iter()
                    .map(|s| context_value("--authorization", s))
                    .collect::<anyhow::Result<_>>()?,
                ..Default::default()
            };
            with_client(&net, vec![source.clone()], false, |client| async move {
                let server = discover(&client, &source, net.protocol).await?;
                let tool = find(&server, &tool)?;
                let arguments = arguments(tool, &args, input.as_deref())?;
                if !context.is_empty() && tool.protocol != Protocol::Otc {
                    eprintln!("toolhost: note: --user-id, --secret and --authorization are OTC's `context`; {} has no place for them, so they are not sent", tool.protocol);
                }
                let result = client
                    .call_confirming(tool, arguments, &context, confirm.wait(), |asked| confirm.tell(asked))
                    .await?;
                print(&render::result(&result))?;
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Lock {
            sources,
            tools,
            output,
            net,
        } => {
            with_client(&net, sources.clone(), false, |client| async move {
                let servers = discover_all(&client, &sources, net.protocol).await?;
                let selected = select(&servers, &tools)?;
                let lockfile = Lockfile::new(selected.iter().copied())
                    .with_agents(servers.iter().filter_map(|s| s.agent.as_ref()));
                write_out(output.as_deref(), &lockfile.to_json())?;
                eprintln!(
                    "toolhost: locked {} tools from {} servers",
                    lockfile.tools.len(),
                    servers.len()
                );
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Verify {
            lockfile,
            allow_stdio,
            conformance,
            net,
        } => {
            if let Some(url) = &conformance.conformance {
                let options = options_for(&net, std::slice::from_ref(url), false)?;
                return conformance::run(&conformance, url, net.protocol, options).await;
            }
            let style = Style::new(net.color);
            // A lockfile's servers were not typed now: they stay under the SSRF guard.
            with_client(&net, Vec::new(), allow_stdio, |client| async move {
                let text = std::fs::read_to_string(&lockfile)
                    .with_context(|| format!("failed to read the lockfile {}", lockfile.display()))?;
                let locked = Lockfile::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", lockfile.display()))?;
                let servers = locked
                    .tools
                    .iter()
                    .map(|t| (t.server.to_string(), t.protocol))
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                let bar = render::progress(servers as u64, "verifying");
                let findings = toolhost_client::lock::verify(&client, &locked, |_| bar.inc(1)).await;
                let agents = toolhost_client::lock::verify_agents(&client, &locked).await;
                bar.finish_and_clear();
                print(&render::findings(&findings, &agents, style))?;
                let errors = findings.iter().map(|(_, f)| f).chain(agents.iter().map(|(_, f)| f)).filter(|f| f.is_error()).count();
                if errors > 0 {
                    eprintln!(
                        "toolhost: {errors} of {} pinned tools{} failed verification",
                        findings.len() + agents.len(),
                        if agents.is_empty() { "" } else { " and agents" }
                    );
                    // Said once, not on every line: which flag opens a lockfile's local servers.
                    let refused = findings.iter().map(|(_, f)| f).chain(agents.iter().map(|(_, f)| f)).any(
                        |f| matches!(f, toolhost_client::Finding::Unreachable { error } if error.contains("--allow-private")),
                    );
                    if refused {
                        eprintln!(
                            "toolhost: the lockfile names loopback or private addresses, which the client refuses unless told: pass --allow-private (or --allow-net CIDR) to verify them"
                        );
                    }
                    return Ok(ExitCode::FAILURE);
                }
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Export {
            sources,
            format,
            tools,
            mapping,
            output,
            net,
        } => {
            with_client(&net, sources.clone(), false, |client| async move {
                let servers = discover_all(&client, &sources, net.protocol).await?;
                let selected = select(&servers, &tools)?;
                let format = match format {
                    ExportFormat::Openai => Format::OpenAi,
                    ExportFormat::Anthropic => Format::Anthropic,
                    ExportFormat::McpJson => Format::McpJson,
                };
                let mut exported = toolhost_client::export::export(&selected, format);
                // One agent's tools: its procedure goes where the format takes instructions.
                let agents: Vec<_> = servers.iter().filter_map(|s| s.agent.as_ref()).collect();
                match agents.as_slice() {
                    [] => {}
                    [agent] => exported = exported.with_procedure(format, &agent.procedure),
                    _ => anyhow::bail!(
                        "export takes one agent at a time (its procedure is the one system prompt); give one agent's URL"
                    ),
                }
                for note in &exported.notes {
                    eprintln!("toolhost: note: {note}");
                }
                write_out(output.as_deref(), &render::json(&exported.definitions))?;
                if let Some(path) = mapping {
                    let text = serde_json::to_string_pretty(&exported.names)? + "\n";
                    std::fs::write(&path, text)
                        .with_context(|| format!("failed to write the mapping to {}", path.display()))?;
                }
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
    }
}

/// One `ID=SOURCE` of `--secret` or `--authorization`: `env:VAR` and `file:PATH` read the
/// value there (a file's trailing newline dropped), anything else is the value itself. Errors
/// name the flag, the id and the source, never a value.
fn context_value(flag: &str, text: &str) -> anyhow::Result<(String, toolhost_core::Secret)> {
    let (id, source) = text.split_once('=').filter(|(id, _)| !id.is_empty()).ok_or_else(|| {
        anyhow::anyhow!("{flag} takes ID=env:VAR, ID=file:PATH or ID=VALUE; got something without `ID=`")
    })?;
    let value = if let Some(variable) = source.strip_prefix("env:") {
        std::env::var(variable)
            .map_err(|_| anyhow::anyhow!("{flag} {id}: the environment variable `{variable}` is not set"))?
    } else if let Some(path) = source.strip_prefix("file:") {
        let text =
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{flag} {id}: cannot read {path}: {e}"))?;
        text.strip_suffix('\n')
            .map_or(text.clone(), |t| t.strip_suffix('\r').unwrap_or(t).to_owned())
    } else {
        source.to_owned()
    };
    if value.is_empty() {
        anyhow::bail!("{flag} {id}: the value is empty");
    }
    Ok((id.to_owned(), toolhost_core::Secret::new(value)))
}

/// Runs `body` with a client, then closes the client's MCP sessions whatever happened. The
/// origins of the URLs in `typed` (what the user gave on the command line) are reachable even on
/// loopback or a private address, with a note; everything learned from a server stays guarded.
/// A lockfile's commands run only with `allow_stdio`.
pub(crate) async fn with_client<F, Fut>(
    net: &Net,
    typed: Vec<String>,
    allow_stdio: bool,
    body: F,
) -> anyhow::Result<ExitCode>
where
    F: FnOnce(std::sync::Arc<Client>) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<ExitCode>>,
{
    if net.verbose {
        verbose_log();
    }
    let options = options_for(net, &typed, allow_stdio)?;
    let client = std::sync::Arc::new(Client::new(options)?);
    let result = body(std::sync::Arc::clone(&client)).await;
    client.close().await;
    result
}

/// The client options of `net`, the origins of the URLs in `typed` reachable (with a note when
/// the guard would refuse them otherwise).
fn options_for(net: &Net, typed: &[String], allow_stdio: bool) -> anyhow::Result<Options> {
    let mut options = net.options()?;
    options.allow_stdio = allow_stdio;
    // Said once per run, naming every such address (issue #32.10).
    let mut reached = std::collections::BTreeSet::new();
    for text in typed {
        let Ok(Source::Url(url)) = Source::parse(text) else {
            continue;
        };
        let host = url.host_str().unwrap_or_default();
        let literal = host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().ok();
        let local_name = host.eq_ignore_ascii_case("localhost") || host.ends_with(".localhost");
        let refused = literal.map_or(local_name, |ip| options.policy.check(ip).is_err());
        if refused && !options.policy.allows_private() {
            reached.insert(url.origin().ascii_serialization());
        }
        options.policy = options.policy.trust(&url);
    }
    if !reached.is_empty() {
        eprintln!(
            "toolhost: note: reaching {} because you gave it; addresses a server names (redirects, WoA transports, lockfiles) stay refused without --allow-private",
            reached.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(options)
}

/// `--verbose`: the client library's log (debug and above) on stderr, as plain lines.
fn verbose_log() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("toolhost_client=debug"))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time()
        .with_target(false)
        .try_init();
}

pub(crate) async fn discover(client: &Client, source: &str, protocol: Option<Protocol>) -> anyhow::Result<Server> {
    let source = Source::parse(source).map_err(anyhow::Error::msg)?;
    Ok(client.discover_as(&source, protocol).await?)
}

/// Discovers every source in turn, with progress on a terminal.
async fn discover_all(client: &Client, sources: &[String], protocol: Option<Protocol>) -> anyhow::Result<Vec<Server>> {
    let bar = render::progress(sources.len() as u64, "discovering");
    let mut servers = Vec::with_capacity(sources.len());
    for source in sources {
        bar.set_message(toolhost_client::text::one_line(source, 60));
        servers.push(discover(client, source, protocol).await?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(servers)
}

fn find<'a>(server: &'a Server, name: &str) -> anyhow::Result<&'a Tool> {
    server.tool(name).ok_or_else(|| {
        let source = toolhost_client::text::shown_url(&server.source.to_string());
        Error::UnknownTool {
            server: server.source.to_string(),
            name: toolhost_client::text::one_line(name, 100),
            known: suggest::nearest(name, server.tools.iter().map(|t| t.name.as_str()), &source),
        }
        .into()
    })
}

/// The tools named by `--tool` (each must exist somewhere), or every tool, in server order.
fn select<'a>(servers: &'a [Server], names: &[String]) -> anyhow::Result<Vec<&'a Tool>> {
    let all = servers.iter().flat_map(|s| &s.tools);
    if names.is_empty() {
        return Ok(all.collect());
    }
    for name in names {
        if !servers.iter().any(|s| s.tool(name).is_some()) {
            let names = servers.iter().flat_map(|s| &s.tools).map(|t| t.name.as_str());
            anyhow::bail!(
                "no server lists a tool `{}`; the names are: {}",
                toolhost_client::text::one_line(name, 100),
                suggest::nearest(name, names, "SOURCE")
            );
        }
    }
    // Each server's own reading of a name (a WoA `agent.default` is the agent).
    let named: Vec<&Tool> = servers
        .iter()
        .flat_map(|s| names.iter().filter_map(|name| s.tool(name)))
        .collect();
    Ok(all.filter(|t| named.iter().any(|n| std::ptr::eq(*n, *t))).collect())
}

/// The call's arguments from `--input JSON` or `--arg NAME=VALUE` pairs.
fn arguments(tool: &Tool, pairs: &[String], input: Option<&str>) -> anyhow::Result<Value> {
    if let Some(text) = input {
        let value: Value =
            serde_json::from_str(text).context("--input is not JSON; give an object, e.g. '{\"a\": 1}'")?;
        anyhow::ensure!(
            value.is_object(),
            "--input must be a JSON object of arguments, e.g. '{{\"a\": 1}}'"
        );
        return Ok(value);
    }
    let mut map = Map::new();
    for pair in pairs {
        let (name, text) = pair
            .split_once('=')
            .with_context(|| format!("--arg `{pair}` has no `=`; write --arg NAME=VALUE"))?;
        let literal = tool
            .inputs
            .iter()
            .find(|p| p.name == name)
            .is_some_and(|p| match &p.kind {
                Kind::Typed(kind) => matches!(kind.name(), "string" | "enum"),
                Kind::Schema => p.schema.get("type").and_then(Value::as_str) == Some("string"),
            });
        let value = if literal {
            Value::String(text.to_owned())
        } else {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
        };
        anyhow::ensure!(
            map.insert(name.to_owned(), value).is_none(),
            "--arg `{name}` is given twice"
        );
    }
    Ok(Value::Object(map))
}

pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

fn write_out(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => std::fs::write(path, text).with_context(|| format!("failed to write {}", path.display())),
        None => print(text),
    }
}
