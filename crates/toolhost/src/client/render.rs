//! Terminal and JSON output of the client subcommands.
//!
//! Everything a server sent is untrusted: text shown in tables goes through
//! `toolhost_client::text` (control and bidirectional characters stripped, lengths bounded),
//! and JSON output escapes the characters JSON itself would let through raw (DEL, C1 controls,
//! bidirectional overrides) as `\uXXXX`, so printing it cannot drive the terminal.

use std::io::IsTerminal as _;

use comfy_table::{Attribute, Cell, ContentArrangement, Table, presets};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use toolhost_client::lock::{Finding, Locked, LockedAgent};
use toolhost_client::text::{self, one_line};
use toolhost_client::{Agent, Server, Tool};
use toolhost_core::validate::Expects as _;

use super::Colour;

/// Whether to style output.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    colour: bool,
}

impl Style {
    /// Colours on a terminal (unless `NO_COLOR` is set), or as `--color` says.
    pub fn new(colour: Colour) -> Self {
        let colour = match colour {
            Colour::Always => true,
            Colour::Never => false,
            Colour::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        Self { colour }
    }

    fn table(self) -> Table {
        let mut table = Table::new();
        table.load_style(presets::NOTHING);
        table.set_content_arrangement(ContentArrangement::Dynamic);
        if !std::io::stdout().is_terminal() {
            table.force_no_tty();
        }
        if self.colour {
            table.enforce_styling();
        }
        table
    }

    fn header(self, names: &[&str]) -> Vec<Cell> {
        names
            .iter()
            .map(|n| {
                let cell = Cell::new(n);
                if self.colour {
                    cell.add_attribute(Attribute::Bold)
                } else {
                    cell
                }
            })
            .collect()
    }

    fn bold(self, text: &str) -> String {
        if self.colour {
            format!("\u{1b}[1m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }
}

/// `toolhost tools`: name, version, description.
pub fn tools_table(server: &Server, style: Style) -> String {
    let mut table = style.table();
    table.set_header(style.header(&["NAME", "VERSION", "DESCRIPTION"]));
    for tool in &server.tools {
        table.add_row(vec![
            one_line(&tool.name, text::MAX_NAME),
            one_line(tool.version.as_deref().unwrap_or("-"), 40),
            one_line(&tool.description, 120),
        ]);
    }
    format!(
        "{table}\n{} tools over {} at {}",
        server.tools.len(),
        server.protocol,
        one_line(&server.endpoint.to_string(), 200)
    )
}

/// `toolhost describe`: the signature in words.
pub fn describe(server: &Server, tool: &Tool, style: Style) -> String {
    let mut out = String::new();
    let mut heading = one_line(&tool.name, text::MAX_NAME);
    if let Some(v) = &tool.version {
        heading.push_str(&format!(" {}", one_line(v, 40)));
    }
    if let Some(n) = tool.version_number {
        heading.push_str(&format!(" (N-ACT version {n})"));
    }
    out.push_str(&style.bold(&heading));
    if let Some(title) = &tool.title {
        out.push_str(&format!(" — {}", one_line(title, 200)));
    }
    out.push_str(&format!(
        "\n{} at {}\n\n{}\n",
        server.protocol,
        one_line(&server.endpoint.to_string(), 200),
        text::clean(&tool.description, text::MAX_DESCRIPTION)
    ));
    out.push_str(&format!("\n{}\n", style.bold("Inputs")));
    if tool.inputs.is_empty() {
        out.push_str("  (none)\n");
    } else {
        let mut table = style.table();
        table.set_header(style.header(&["NAME", "REQUIRED", "ACCEPTS", "DESCRIPTION"]));
        for p in &tool.inputs {
            table.add_row(vec![
                one_line(&p.name, text::MAX_NAME),
                if p.required { "yes" } else { "no" }.to_owned(),
                one_line(&p.expects(), 200),
                one_line(&p.description, 200),
            ]);
        }
        out.push_str(&format!("{table}\n"));
    }
    out.push_str(&format!("\n{}\n", style.bold("Outputs")));
    if tool.outputs.is_empty() {
        let schema = tool.output_schema.as_ref().map(toolhost_client::describe_schema);
        out.push_str(&format!(
            "  {}\n",
            schema.unwrap_or_else(|| "(not declared)".to_owned())
        ));
    } else {
        let mut table = style.table();
        table.set_header(style.header(&["NAME", "TYPE", "ALWAYS", "DESCRIPTION"]));
        for o in &tool.outputs {
            table.add_row(vec![
                one_line(&o.name, text::MAX_NAME),
                one_line(&o.kind, 40),
                if o.required { "yes" } else { "no" }.to_owned(),
                one_line(&o.description, 200),
            ]);
        }
        out.push_str(&format!("{table}\n"));
    }
    if tool.versions.len() > 1 {
        let versions: Vec<String> = tool.versions.iter().map(|v| one_line(v, 40)).collect();
        out.push_str(&format!("\nVersions: {}\n", versions.join(", ")));
    }
    out
}

/// A tool as JSON, for `--json`.
pub fn tool_json(tool: &Tool) -> Value {
    json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "version": tool.version,
        "version_number": tool.version_number,
        "versions": tool.versions,
        "protocol": tool.protocol,
        "server": tool.endpoint.to_string(),
        "inputs": tool.inputs.iter().map(|p| json!({
            "name": p.name,
            "type": p.type_name(),
            "required": p.required,
            "accepts": p.expects(),
            "description": p.description,
        })).collect::<Vec<_>>(),
        "outputs": tool.outputs.iter().map(|o| json!({
            "name": o.name,
            "type": o.kind,
            "required": o.required,
            "description": o.description,
        })).collect::<Vec<_>>(),
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
    })
}

/// A call's result: text as it is (cleaned), anything else as JSON.
pub fn result(value: &Value) -> String {
    match value {
        Value::String(s) => text::clean(s, usize::MAX),
        other => json(other),
    }
}

/// `verify`'s report: one row per pinned tool.
pub fn findings(findings: &[(Locked, Finding)], agents: &[(LockedAgent, Finding)], style: Style) -> String {
    let mut table = style.table();
    table.set_header(style.header(&["TOOL", "VERSION", "SERVER", "STATUS"]));
    for (locked, finding) in findings {
        let status = status_of(finding);
        table.add_row(vec![
            one_line(&locked.name, text::MAX_NAME),
            one_line(locked.version.as_deref().unwrap_or("-"), 40),
            format!("{} {}", locked.protocol, one_line(&locked.server.to_string(), 120)),
            one_line(&status, 400),
        ]);
    }
    for (locked, finding) in agents {
        table.add_row(vec![
            format!("agent {} (procedure)", one_line(&locked.name, text::MAX_NAME)),
            "-".to_owned(),
            one_line(&locked.url.to_string(), 120),
            one_line(&status_of(finding), 400),
        ]);
    }
    table.to_string()
}

fn status_of(finding: &Finding) -> String {
    if finding.is_error() {
        format!("ERROR: {finding}")
    } else {
        format!("ok: {finding}")
    }
}

/// The agents of a server as a table: name, tools, URL, description.
pub fn agents_table(agents: &[Agent], style: Style) -> String {
    if agents.is_empty() {
        return "(the server serves no agents)".to_owned();
    }
    let mut table = style.table();
    table.set_header(style.header(&["AGENT", "TOOLS", "URL", "DESCRIPTION"]));
    for agent in agents {
        table.add_row(vec![
            one_line(&agent.name, text::MAX_NAME),
            agent.tools.len().to_string(),
            one_line(agent.url.as_str(), 200),
            one_line(&agent.description, 200),
        ]);
    }
    table.to_string()
}

/// One agent as JSON.
pub fn agent_json(agent: &Agent) -> Value {
    serde_json::json!({
        "name": agent.name,
        "description": agent.description,
        "url": agent.url.as_str(),
        "tools": agent.tools,
        "endpoints": agent.endpoints.iter().map(|(p, u)| (p.to_string(), Value::String(u.to_string()))).collect::<serde_json::Map<_, _>>(),
    })
}

/// Pretty JSON that is safe to print on a terminal (module docs).
pub fn json(value: &Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let unsafe_char = c == '\u{7f}'
            || ('\u{80}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}');
        if unsafe_char {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A progress bar on stderr for multi-server work; hidden when stderr is not a terminal or
/// there is only one server.
pub fn progress(len: u64, what: &'static str) -> ProgressBar {
    if len < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len).with_prefix(what);
    if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_cannot_drive_a_terminal() {
        let text = json(&json!({"a": "x\u{1b}[2J\u{9b}y\u{202e}z"}));
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["a"], "x\u{1b}[2J\u{9b}y\u{202e}z", "the data is unchanged");
    }
}
