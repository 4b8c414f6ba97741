//! `toolhost eval search`: how well search finds the tool a request means (issue #42.4), on a
//! catalog or on a server, from a file of requests and the tools that answer them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use serde::{Deserialize, Serialize};

use crate::client::{self, Net};

/// The results each query is scored over: recall@5 reads the first 5, MRR the first 10.
const DEPTH: usize = 10;

/// `toolhost eval …`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure search: for a file of `{"q": "...", "want": ["tool", ...]}` lines, recall@1,
    /// recall@5, MRR (over the first 10) and the queries whose tools were not in the first 5.
    /// Against a server (its N-ACT `?q=`, or ranked here over what it lists), a catalog
    /// (`--catalog DIR`), or the bundled catalog when neither is given.
    Search {
        /// The query file (JSON lines; blank lines are skipped).
        queries: PathBuf,
        /// The server to search (as for `tools`).
        #[arg(conflicts_with = "catalog")]
        source: Option<String>,
        /// Search this catalog (a directory or one file) without a server.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        net: Net,
    },
}

/// One line of the query file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Query {
    /// The request, in a user's words.
    q: String,
    /// The tools that answer it; any one found counts.
    want: Vec<String>,
}

/// A query whose tools were not in the first five.
#[derive(Debug, Serialize)]
struct Miss {
    q: String,
    want: Vec<String>,
    /// The first five found.
    got: Vec<String>,
    /// Where the first wanted tool was found (1-based), if in the first [`DEPTH`].
    rank: Option<usize>,
}

/// The figures of one run.
#[derive(Debug, Serialize)]
struct Report {
    queries: usize,
    recall_at_1: f64,
    recall_at_5: f64,
    mrr: f64,
    /// Who ranked: `catalog`, `server` or `client`.
    ranked_by: &'static str,
    misses: Vec<Miss>,
}

pub fn run(command: Command) -> ExitCode {
    let Command::Search {
        queries,
        source,
        catalog,
        json,
        net,
    } = command;
    let result = read_queries(&queries).and_then(|queries| match source {
        Some(source) => on_server(&queries, source, net),
        None => on_catalog(&queries, catalog.as_deref()),
    });
    match result {
        Ok(report) => {
            let out = if json {
                serde_json::to_string_pretty(&report).unwrap_or_default()
            } else {
                text(&report)
            };
            match client::print(&out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("toolhost: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("toolhost: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn read_queries(path: &Path) -> anyhow::Result<Vec<Query>> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("failed to read {}: {e}", path.display()))?;
    let mut queries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let query: Query = serde_json::from_str(line).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}: expected {{\"q\": \"a request\", \"want\": [\"tool\", ...]}}, but {e}",
                path.display(),
                n + 1
            )
        })?;
        if query.want.is_empty() {
            anyhow::bail!(
                "{}:{}: `want` names no tool; name the tools that answer the request",
                path.display(),
                n + 1
            );
        }
        queries.push(query);
    }
    if queries.is_empty() {
        anyhow::bail!("{} holds no queries", path.display());
    }
    Ok(queries)
}

/// Scores the queries on a catalog loaded here (as `check` loads it).
fn on_catalog(queries: &[Query], dir: Option<&Path>) -> anyhow::Result<Report> {
    let loader = toolhost_core::catalog::Loader::default()
        .with_backend(
            toolhost_sculpt::KIND,
            Arc::new(toolhost_sculpt::Factory::for_checking()?),
        )
        .with_backend(toolhost_upstream::KIND, Arc::new(toolhost_upstream::Factory::default()));
    let catalog = crate::load_catalog(dir, None, &loader).map_err(|problems| {
        crate::report(&problems);
        anyhow::anyhow!("the catalog does not load; `toolhost check` lists why")
    })?;
    let found = queries
        .iter()
        .map(|q| {
            catalog
                .search(&q.q, DEPTH, |_| true)
                .into_iter()
                .map(|(t, _)| t.name.clone())
                .collect()
        })
        .collect::<Vec<Vec<String>>>();
    Ok(score(queries, &found, "catalog"))
}

/// Scores the queries on a server, through the client's search.
fn on_server(queries: &[Query], source: String, net: Net) -> anyhow::Result<Report> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let protocol = net.protocol();
    let mut report = None;
    let slot = &mut report;
    runtime.block_on(client::with_client(&net, vec![source.clone()], false, |c| async move {
        let server = client::discover(&c, &source, protocol).await?;
        let mut found = Vec::with_capacity(queries.len());
        let mut by = "client";
        for query in queries {
            let (tools, ranked) = c.search(&server, &query.q, DEPTH).await?;
            if ranked == toolhost_client::search::RankedBy::Server {
                by = "server";
            }
            found.push(tools.into_iter().map(|t| t.name).collect());
        }
        *slot = Some(score(queries, &found, by));
        Ok(ExitCode::SUCCESS)
    }))?;
    report.ok_or_else(|| anyhow::anyhow!("the search did not run"))
}

/// The figures of `found` (each query's results, best first) against what each query wants.
fn score(queries: &[Query], found: &[Vec<String>], ranked_by: &'static str) -> Report {
    let mut at_1 = 0usize;
    let mut at_5 = 0usize;
    let mut reciprocal = 0f64;
    let mut misses = Vec::new();
    for (query, got) in queries.iter().zip(found) {
        let rank = got
            .iter()
            .take(DEPTH)
            .position(|name| query.want.contains(name))
            .map(|i| i + 1);
        at_1 += usize::from(rank == Some(1));
        at_5 += usize::from(rank.is_some_and(|r| r <= 5));
        reciprocal += rank.map_or(0.0, |r| 1.0 / r as f64);
        if rank.is_none_or(|r| r > 5) {
            misses.push(Miss {
                q: query.q.clone(),
                want: query.want.clone(),
                got: got.iter().take(5).cloned().collect(),
                rank,
            });
        }
    }
    let n = queries.len().max(1) as f64;
    Report {
        queries: queries.len(),
        recall_at_1: at_1 as f64 / n,
        recall_at_5: at_5 as f64 / n,
        mrr: reciprocal / n,
        ranked_by,
        misses,
    }
}

fn text(report: &Report) -> String {
    let mut out = format!(
        "{} queries, ranked by the {}: recall@1 {:.2}, recall@5 {:.2}, MRR {:.2}\n",
        report.queries, report.ranked_by, report.recall_at_1, report.recall_at_5, report.mrr
    );
    if !report.misses.is_empty() {
        out.push_str(&format!("{} not in the first 5:\n", report.misses.len()));
    }
    for miss in &report.misses {
        let clean = |s: &str| toolhost_client::text::one_line(s, 120);
        let rank = miss
            .rank
            .map_or_else(|| format!("not in the first {DEPTH}"), |r| format!("at {r}"));
        out.push_str(&format!(
            "  {:?}: want {} ({rank}); got {}\n",
            clean(&miss.q),
            miss.want.join(" or "),
            if miss.got.is_empty() {
                "nothing".to_owned()
            } else {
                miss.got.iter().map(|g| clean(g)).collect::<Vec<_>>().join(", ")
            }
        ));
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_count_the_first_wanted_tool_found() {
        let queries: Vec<Query> = [("a", "x"), ("b", "y"), ("c", "z")]
            .iter()
            .map(|(q, w)| Query {
                q: (*q).to_owned(),
                want: vec![(*w).to_owned()],
            })
            .collect();
        let found = vec![
            vec!["x".to_owned()],
            ["p", "q", "y"].map(String::from).to_vec(),
            ["p", "q", "r", "s", "t", "z"].map(String::from).to_vec(),
        ];
        let report = score(&queries, &found, "catalog");
        assert!((report.recall_at_1 - 1.0 / 3.0).abs() < 1e-9);
        assert!((report.recall_at_5 - 2.0 / 3.0).abs() < 1e-9);
        assert!((report.mrr - (1.0 + 1.0 / 3.0 + 1.0 / 6.0) / 3.0).abs() < 1e-9);
        assert_eq!(report.misses.len(), 1);
        assert_eq!(report.misses[0].rank, Some(6));
    }
}
