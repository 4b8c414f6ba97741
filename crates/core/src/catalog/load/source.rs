//! Catalog sources: reading files and folders, and parsing them into the file types.

use std::path::Path;

use crate::catalog::file::FileDef;
use crate::catalog::problem::{Place, Problem, Severity};

/// One catalog file's name and text.
#[derive(Debug, Clone)]
pub struct Source {
    /// The name used in messages: the file's path as found under the directory given, or a
    /// bundled name.
    pub name: String,
    /// The file's contents, YAML or JSON.
    pub text: String,
}

impl Source {
    /// Whether this is an agent file (Markdown with front matter) rather than a catalog file.
    pub fn is_agent(&self) -> bool {
        self.name.ends_with(".md")
    }

    /// Reads every `*.md` file directly in `dir` (a catalog's `agents/` folder, or the one
    /// `--agents` names) but `README.md`, sorted by name: the agents. A missing folder has none.
    pub fn read_agents(dir: &Path) -> Result<Vec<Source>, Vec<Problem>> {
        let problem = |file: &Path, message: String| Problem {
            severity: Severity::Error,
            place: Place {
                file: file.display().to_string(),
                ..Place::default()
            },
            message,
        };
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(vec![problem(dir, format!("failed to read the agents folder: {e}"))]),
        };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().and_then(|e| e.to_str()) == Some("md"))
            // A folder's README says what its agents are for; it is not one of them.
            .filter(|p| !p.file_name().is_some_and(|n| n.eq_ignore_ascii_case("README.md")))
            .collect();
        paths.sort();
        let mut sources = Vec::with_capacity(paths.len());
        let mut problems = Vec::new();
        for path in paths {
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            if size > crate::catalog::agent::MAX_AGENT_BYTES as u64 {
                problems.push(problem(
                    &path,
                    format!(
                        "the agent file has {size} bytes; at most {} are read",
                        crate::catalog::agent::MAX_AGENT_BYTES
                    ),
                ));
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => sources.push(Source {
                    name: path.display().to_string(),
                    text,
                }),
                Err(e) => problems.push(problem(&path, format!("failed to read the file: {e}"))),
            }
        }
        if problems.is_empty() {
            Ok(sources)
        } else {
            Err(problems)
        }
    }

    /// Reads every `*.yaml`, `*.yml` and `*.json` file directly in `dir`, sorted by name; or,
    /// when `dir` is a file, that one file.
    pub fn read_dir(dir: &Path) -> Result<Vec<Source>, Vec<Problem>> {
        if dir.is_file() {
            return match std::fs::read_to_string(dir) {
                Ok(text) => Ok(vec![Source {
                    name: dir.display().to_string(),
                    text,
                }]),
                Err(e) => Err(vec![Problem {
                    severity: Severity::Error,
                    place: Place {
                        file: dir.display().to_string(),
                        ..Place::default()
                    },
                    message: format!("failed to read the catalog file: {e}"),
                }]),
            };
        }
        let place = |message: String| {
            vec![Problem {
                severity: Severity::Error,
                place: Place {
                    file: dir.display().to_string(),
                    ..Place::default()
                },
                message,
            }]
        };
        let entries = std::fs::read_dir(dir).map_err(|e| {
            place(format!(
                "failed to read the catalog: {e}; pass an existing directory or catalog file"
            ))
        })?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")))
            .collect();
        paths.sort();
        if paths.is_empty() {
            return Err(place(
                "no catalog files (*.yaml, *.yml, *.json) in this directory".to_owned(),
            ));
        }
        let mut sources = Vec::with_capacity(paths.len());
        let mut problems = Vec::new();
        match Self::read_agents(&dir.join("agents")) {
            Ok(agents) => sources.extend(agents),
            Err(found) => problems.extend(found),
        }
        for path in paths {
            match std::fs::read_to_string(&path) {
                Ok(text) => sources.push(Source {
                    name: path.display().to_string(),
                    text,
                }),
                Err(e) => problems.push(Problem {
                    severity: Severity::Error,
                    place: Place {
                        file: path.display().to_string(),
                        ..Place::default()
                    },
                    message: format!("failed to read the file: {e}"),
                }),
            }
        }
        if problems.is_empty() {
            Ok(sources)
        } else {
            Err(problems)
        }
    }
}

/// Parses every file, on as many threads as there are cores when there are several files:
/// parsing is most of loading a large catalog, and the files are independent. Results keep
/// the order of `sources`, so problems and tools come out the same either way.
pub(super) fn parse_all(sources: &[&Source]) -> Vec<(Option<FileDef>, Vec<Problem>)> {
    let parse_one = |source: &&Source| {
        let mut problems = Vec::new();
        (parse(source, &mut problems), problems)
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads < 2 || sources.len() < 2 {
        return sources.iter().map(parse_one).collect();
    }
    let chunk = sources.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = sources
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(parse_one).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                // A panic in a parser is a bug; surface it where it happened.
                w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

fn parse(source: &Source, problems: &mut Vec<Problem>) -> Option<FileDef> {
    let result = if source.name.ends_with(".json") {
        serde_json::from_str::<FileDef>(&source.text).map_err(|e| format!("failed to parse: {e}"))
    } else {
        serde_saphyr::from_str::<FileDef>(&source.text).map_err(|e| {
            if too_large(&e) {
                format!(
                    "the file is larger than one catalog file may be ({} YAML nodes, about 1,000 to 5,000 tools); \
                     split it into several files, e.g. one per toolkit: a catalog is a directory ({e})",
                    serde_saphyr::Budget::default().max_nodes
                )
            } else {
                format!("failed to parse: {e}")
            }
        })
    };
    result
        .map_err(|message| {
            problems.push(Problem {
                severity: Severity::Error,
                place: Place {
                    file: source.name.clone(),
                    ..Place::default()
                },
                message,
            });
        })
        .ok()
}

/// Whether the YAML parser refused a file for its size (serde-saphyr's guard against huge or
/// hostile YAML), rather than for its depth or its aliases, which splitting would not help.
fn too_large(error: &serde_saphyr::Error) -> bool {
    use serde_saphyr::budget::BudgetBreach;
    let mut error = error;
    while let serde_saphyr::Error::WithSnippet { error: inner, .. }
    | serde_saphyr::Error::AliasError { error: inner, .. } = error
    {
        error = inner;
    }
    matches!(
        error,
        serde_saphyr::Error::Budget {
            breach: BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. },
            ..
        }
    )
}
