//! `toolhost approvals SERVER`: a server's pending and recent confirmations (issue #40.6), read
//! from its `GET /approvals` with an operator's credential.

use std::io::Write as _;
use std::process::ExitCode;

use serde_json::Value;

/// Prints the confirmations of the server at `server` (its root URL), as a table or JSON.
pub fn run(server: &str, token: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let url = format!("{}/approvals", server.trim_end_matches('/'));
    let answer: Value = runtime.block_on(async {
        let mut request = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()?
            .get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let reply = request.send().await?;
        let status = reply.status();
        let body: Value = reply.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let detail = body["detail"].as_str().unwrap_or("no detail").to_owned();
            anyhow::bail!("failed to list confirmations at {url}: {status}: {detail}");
        }
        Ok::<_, anyhow::Error>(body)
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&answer)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let items = answer["confirmations"].as_array().cloned().unwrap_or_default();
    writeln!(
        out,
        "{:<10} {:<10} {:<24} {:<9} {:<28} {:<21} DECIDED BY",
        "ID", "STATUS", "TOOL", "VERSION", "ASKED BY", "ASKED AT"
    )?;
    for item in &items {
        let text = |key: &str| item[key].as_str().unwrap_or("-").to_owned();
        writeln!(
            out,
            "{:<10} {:<10} {:<24} {:<9} {:<28} {:<21} {}",
            text("confirmation").chars().take(8).collect::<String>(),
            text("status"),
            text("tool"),
            text("version"),
            text("principal"),
            text("created"),
            text("decided_by"),
        )?;
    }
    if items.is_empty() {
        writeln!(out, "(no confirmations)")?;
    }
    Ok(ExitCode::SUCCESS)
}
