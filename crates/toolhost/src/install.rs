//! `toolhost install CLIENT`: puts a catalog, or one agent of it, into an MCP client's
//! configuration (issue #41.2), as FastMCP's `install` does: over stdio (the client starts
//! `toolhost serve --stdio`) or over HTTP (a running server's MCP endpoint).
//!
//! Each client keeps its MCP servers in a JSON file of its own (Claude Desktop's
//! `claude_desktop_config.json`, Claude Code's project `.mcp.json`, Cursor's `~/.cursor/mcp.json`,
//! VS Code's `.vscode/mcp.json`, or a plain `mcp.json`). The entry is added under its name;
//! every other entry of the file is kept as it is, and a file that is not a JSON object is left
//! alone with an error.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};

/// The MCP clients `install` writes the configuration of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Desktop: `claude_desktop_config.json` in its configuration folder (stdio only).
    ClaudeDesktop,
    /// Claude Code: the project's `.mcp.json` (in the current directory).
    ClaudeCode,
    /// Cursor: `~/.cursor/mcp.json`.
    Cursor,
    /// VS Code: the workspace's `.vscode/mcp.json` (in the current directory).
    Vscode,
    /// A plain `mcp.json` (`{"mcpServers": {...}}`) in the current directory.
    McpJson,
}

/// What `toolhost install` is given.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The client whose configuration to write.
    #[arg(value_enum)]
    client: Client,
    /// Serve only this agent (its tools, and its procedure as the instructions).
    #[arg(long)]
    agent: Option<String>,
    /// The catalog the client's `toolhost serve --stdio` serves (made absolute).
    #[arg(long, conflicts_with = "url")]
    catalog: Option<PathBuf>,
    /// The agents folder, when not the catalog's own agents/ (made absolute).
    #[arg(long, conflicts_with = "url")]
    agents: Option<PathBuf>,
    /// The server config file (for its [secrets]) the client's `toolhost serve` reads.
    #[arg(long, conflicts_with = "url")]
    config: Option<PathBuf>,
    /// Reach a running server over HTTP instead of starting one: its root URL (the agent's
    /// endpoint `/agents/NAME/mcp`, else `/mcp`, is added) or an MCP endpoint URL.
    #[arg(long)]
    url: Option<String>,
    /// The server's name in the client [default: the agent's name, else `toolhost`].
    #[arg(long)]
    name: Option<String>,
    /// Write this file instead of the client's own.
    #[arg(long)]
    path: Option<PathBuf>,
}

impl Client {
    /// The client's configuration file.
    fn default_path(self) -> anyhow::Result<PathBuf> {
        let home = || {
            std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .map(PathBuf::from)
                .context("neither HOME nor USERPROFILE is set: give the file with --path")
        };
        Ok(match self {
            Self::ClaudeDesktop => {
                let folder = if cfg!(target_os = "macos") {
                    home()?.join("Library/Application Support")
                } else if cfg!(windows) {
                    std::env::var_os("APPDATA")
                        .map(PathBuf::from)
                        .context("APPDATA is not set: give the file with --path")?
                } else {
                    std::env::var_os("XDG_CONFIG_HOME")
                        .map_or_else(|| home().map(|h| h.join(".config")), |x| Ok(PathBuf::from(x)))?
                };
                folder.join("Claude/claude_desktop_config.json")
            }
            Self::ClaudeCode => PathBuf::from(".mcp.json"),
            Self::Cursor => home()?.join(".cursor/mcp.json"),
            Self::Vscode => PathBuf::from(".vscode/mcp.json"),
            Self::McpJson => PathBuf::from("mcp.json"),
        })
    }

    /// The key of the file's object that holds the servers.
    fn servers_key(self) -> &'static str {
        match self {
            Self::Vscode => "servers",
            Self::ClaudeDesktop | Self::ClaudeCode | Self::Cursor | Self::McpJson => "mcpServers",
        }
    }

    /// What the user does next for the client to load the entry.
    fn after(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "restart Claude Desktop to load it",
            Self::ClaudeCode => {
                "Claude Code asks to approve it when it next starts in this folder (`claude mcp list` shows it)"
            }
            Self::Cursor => "Cursor loads it on its next start (Settings > MCP shows it)",
            Self::Vscode => "VS Code offers to start it from the file (or run `MCP: List Servers`)",
            Self::McpJson => "point your MCP client at this file",
        }
    }
}

/// The entry of one server: a command to start, or a URL to reach.
fn entry(client: Client, args: &InstallArgs) -> anyhow::Result<Value> {
    if let Some(url) = &args.url {
        if client == Client::ClaudeDesktop {
            anyhow::bail!(
                "Claude Desktop's config file starts local servers only: leave out --url to have it start `toolhost serve --stdio`, or add the URL under Settings > Connectors"
            );
        }
        let mut url = url::Url::parse(url).map_err(|e| anyhow::anyhow!("--url {url}: not a URL ({e})"))?;
        if !url.path().trim_end_matches('/').ends_with("/mcp") {
            let path = match &args.agent {
                Some(agent) => format!("{}/agents/{agent}/mcp", url.path().trim_end_matches('/')),
                None => format!("{}/mcp", url.path().trim_end_matches('/')),
            };
            url.set_path(&path);
        }
        return Ok(match client {
            Client::ClaudeCode | Client::Vscode => json!({"type": "http", "url": url.as_str()}),
            Client::ClaudeDesktop | Client::Cursor | Client::McpJson => json!({"url": url.as_str()}),
        });
    }
    let absolute = |flag: &str, path: &Path| {
        std::fs::canonicalize(path).with_context(|| format!("{flag} {}: not found", path.display()))
    };
    let program = std::env::current_exe().context("failed to find this toolhost's own path")?;
    let mut command = vec!["serve".to_owned(), "--stdio".to_owned()];
    let catalog = args.catalog.as_deref().map(|c| absolute("--catalog", c)).transpose()?;
    for (flag, path) in [
        ("--catalog", catalog),
        (
            "--agents",
            args.agents.as_deref().map(|a| absolute("--agents", a)).transpose()?,
        ),
        (
            "--config",
            args.config.as_deref().map(|c| absolute("--config", c)).transpose()?,
        ),
    ] {
        if let Some(path) = path {
            command.push(flag.to_owned());
            command.push(path.display().to_string());
        }
    }
    if let Some(agent) = &args.agent {
        command.push("--agent".to_owned());
        command.push(agent.clone());
    }
    let mut entry = json!({"command": program.display().to_string(), "args": command});
    if matches!(client, Client::ClaudeCode | Client::Vscode) {
        entry["type"] = json!("stdio");
    }
    Ok(entry)
}

/// `toolhost install`: writes the entry, keeping the file's others, and says where.
pub fn run(args: &InstallArgs) -> anyhow::Result<()> {
    let client = args.client;
    let name = args
        .name
        .clone()
        .or_else(|| args.agent.clone())
        .unwrap_or_else(|| "toolhost".to_owned());
    let entry = entry(client, args)?;
    let path = match &args.path {
        Some(path) => path.clone(),
        None => client.default_path()?,
    };
    let mut file = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) | Err(_) => anyhow::bail!(
                "{} is not a JSON object, so it is left as it is: fix it, or write elsewhere with --path",
                path.display()
            ),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(anyhow::anyhow!("failed to read {}: {e}", path.display())),
    };
    let key = client.servers_key();
    let servers = file.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        anyhow::bail!(
            "{}: `{key}` is not an object, so the file is left as it is",
            path.display()
        );
    };
    let replaced = servers.insert(name.clone(), entry).is_some();
    let others: Vec<String> = servers.keys().filter(|k| **k != name).cloned().collect();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(file))? + "\n";
    std::fs::write(&path, text).with_context(|| format!("failed to write {}", path.display()))?;
    eprintln!(
        "{} the MCP server `{name}` in {}{}; {}",
        if replaced { "replaced" } else { "added" },
        path.display(),
        if others.is_empty() {
            String::new()
        } else {
            format!(" (kept: {})", others.join(", "))
        },
        client.after()
    );
    Ok(())
}
