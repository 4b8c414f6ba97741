//! Catalog sources: reading files and folders, and parsing them into the file types.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};

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

/// How many files the parsers may run ahead of the files built: enough to keep every core
/// busy, few enough that the parse trees held at once stay a handful of files, not the catalog
/// (issue #42.1: holding every file's parse set the peak of a large load).
const AHEAD_PER_THREAD: usize = 2;

/// Parses every file and hands each to `each` in the order of `sources`, with its problems, so
/// that problems and tools come out the same whatever the threads do. Files are parsed on as
/// many threads as there are cores, a few files ahead of `each` (which runs on the calling
/// thread and builds the file's tools meanwhile); each file's text is dropped once parsed and
/// its parse once `each` took it, so a large catalog is never held whole as text or as trees.
pub(super) fn parse_each(sources: Vec<Cow<'_, Source>>, mut each: impl FnMut(usize, Option<FileDef>, Vec<Problem>)) {
    let parse_one = |source: &Source| {
        let mut problems = Vec::new();
        (parse(source, &mut problems), problems)
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads < 2 || sources.len() < 2 {
        for (i, source) in sources.into_iter().enumerate() {
            let (file, problems) = parse_one(&source);
            drop(source);
            each(i, file, problems);
        }
        return;
    }
    let count = sources.len();
    let slots: Vec<Mutex<Option<Cow<'_, Source>>>> = sources.into_iter().map(|s| Mutex::new(Some(s))).collect();
    let next = AtomicUsize::new(0);
    // How many files `each` has taken; `usize::MAX` once the caller stopped (it panicked).
    let taken = (Mutex::new(0_usize), Condvar::new());
    let ahead = threads * AHEAD_PER_THREAD;
    std::thread::scope(|scope| {
        let (sender, parsed) = mpsc::channel();
        for _ in 0..threads {
            let sender = sender.clone();
            let (slots, next, taken) = (&slots, &next, &taken);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    {
                        let mut done = taken.0.lock().unwrap_or_else(PoisonError::into_inner);
                        while *done != usize::MAX && i >= *done + ahead {
                            done = taken.1.wait(done).unwrap_or_else(PoisonError::into_inner);
                        }
                        if *done == usize::MAX {
                            break;
                        }
                    }
                    let Some(source) = slots[i].lock().unwrap_or_else(PoisonError::into_inner).take() else {
                        break;
                    };
                    let result = parse_one(&source);
                    drop(source);
                    if sender.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // Lets the parsers go if `each` panics, so the scope can end and the panic surface.
        struct Stop<'a>(&'a (Mutex<usize>, Condvar));
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                *self.0.0.lock().unwrap_or_else(PoisonError::into_inner) = usize::MAX;
                self.0.1.notify_all();
            }
        }
        let _stop = Stop(&taken);
        let mut early = BTreeMap::new();
        let mut want = 0;
        // Ends when every parser is done; a parser that panicked leaves a gap, and the scope
        // then re-raises its panic where it happened.
        for (i, result) in parsed {
            early.insert(i, result);
            while let Some((file, problems)) = early.remove(&want) {
                each(want, file, problems);
                want += 1;
                *taken.0.lock().unwrap_or_else(PoisonError::into_inner) = want;
                taken.1.notify_all();
            }
        }
    });
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
