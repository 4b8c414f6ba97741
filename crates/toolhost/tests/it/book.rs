//! The book (README.md and docs/*.md) as tests read it: its pages, its fenced command blocks
//! with the marker that says which test runs each or why none does, and a shell that runs a
//! block as written. Issue #41.1: every command block is run, or says why it cannot be.
//!
//! A command block is a fenced `sh` (or `bash`, `shell`, `console`) block, or a `text` block
//! whose first line is a command (`$ …`) followed by its output. The line before its fence is
//! one of
//! - `<!-- run: GROUP -->`: the test of that group (see [`GROUPS`]) runs it as written;
//! - `<!-- not run: REASON -->`: a reason a reader would accept that no test can run it here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::client_peers::free_port;
use crate::deploy::repo;
use crate::support::{BIN, Scratch, copy_tree};

/// Every group a `<!-- run: GROUP -->` marker may name, with the test that runs its blocks.
pub const GROUPS: &[(&str, &str)] = &[
    ("walkthrough", "walkthrough::the_readme_walkthrough_runs_as_written"),
    (
        "client",
        "docs_blocks::the_client_and_agent_pages_blocks_run_as_written",
    ),
    ("import", "docs_blocks::the_import_pages_blocks_run_as_written"),
    ("catalog", "docs_blocks::the_catalog_pages_design_block_runs_as_written"),
    ("sculpting", "docs_blocks::the_sculpting_pages_blocks_run_as_written"),
    ("serving", "docs_blocks::the_serving_pages_blocks_run_as_written"),
    (
        "serving-peers",
        "docs_blocks::the_serving_pages_inspector_block_runs_as_written",
    ),
    (
        "conformance",
        "docs_blocks::the_conformance_pages_blocks_run_as_written",
    ),
];

/// One page of the book: its name as linked (`README.md`, `docs/serving.md`) and its text.
pub struct Page {
    pub name: String,
    pub text: String,
}

/// The README, then every page of `docs/` in name order.
pub fn pages() -> Vec<Page> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    names.sort();
    let mut pages = vec![Page {
        name: "README.md".to_owned(),
        text: std::fs::read_to_string(repo().join("README.md")).unwrap(),
    }];
    for path in names {
        pages.push(Page {
            name: format!("docs/{}", path.file_name().unwrap().to_string_lossy()),
            text: std::fs::read_to_string(&path).unwrap(),
        });
    }
    pages
}

/// What the line before a block's fence says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// `<!-- run: GROUP -->`.
    Run(String),
    /// `<!-- not run: REASON -->`.
    NotRun(String),
    /// No marker, or an HTML comment that is neither.
    None,
}

/// A fenced block of a page.
#[derive(Debug, Clone)]
pub struct Block {
    pub page: String,
    /// The line of its opening fence, from 1.
    pub line: usize,
    pub lang: String,
    /// Its text, without the fences and the fence's indentation.
    pub text: String,
    pub marker: Marker,
}

impl Block {
    /// Whether it holds commands a reader would type (see the module docs).
    pub fn is_command(&self) -> bool {
        matches!(self.lang.as_str(), "sh" | "bash" | "shell" | "console")
            || (self.lang == "text" && self.text.starts_with("$ "))
    }

    /// Where it is, for messages: `docs/serving.md:10`.
    pub fn at(&self) -> String {
        format!("{}:{}", self.page, self.line)
    }
}

/// Every fenced block of every page, in book order.
pub fn blocks() -> Vec<Block> {
    pages().iter().flat_map(blocks_of).collect()
}

/// The fenced blocks of one page (fences may be indented, as in a list item).
pub fn blocks_of(page: &Page) -> Vec<Block> {
    let lines: Vec<&str> = page.text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let Some(lang) = trimmed.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - trimmed.len();
        let marker = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map_or(Marker::None, |l| marker(l.trim()));
        let start = i;
        let mut text = String::new();
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            text.push_str(lines[i].get(indent..).unwrap_or(lines[i].trim_start()));
            text.push('\n');
            i += 1;
        }
        blocks.push(Block {
            page: page.name.clone(),
            line: start + 1,
            lang: lang.trim().to_owned(),
            text,
            marker,
        });
        i += 1;
    }
    blocks
}

fn marker(line: &str) -> Marker {
    let Some(inner) = line.strip_prefix("<!--").and_then(|l| l.strip_suffix("-->")) else {
        return Marker::None;
    };
    let inner = inner.trim();
    if let Some(reason) = inner.strip_prefix("not run:") {
        Marker::NotRun(reason.trim().to_owned())
    } else if let Some(group) = inner.strip_prefix("run:") {
        Marker::Run(group.split_whitespace().next().unwrap_or_default().to_owned())
    } else {
        Marker::None
    }
}

/// The command blocks marked `<!-- run: GROUP -->`, in book order; `GROUP` must be one of
/// [`GROUPS`].
pub fn group(group: &str) -> Vec<Block> {
    assert!(
        GROUPS.iter().any(|(g, _)| *g == group),
        "`{group}` is not in book::GROUPS"
    );
    blocks()
        .into_iter()
        .filter(|b| b.is_command() && b.marker == Marker::Run(group.to_owned()))
        .collect()
}

/// A scratch checkout (a copy of `examples/`) where blocks run as a reader runs them from the
/// repository's root: this build's `toolhost` first on PATH, `HOME` in the scratch directory,
/// bounded in time. The only change made to a block's text is its ports: 8080 (`serve`'s
/// default, also moved by `TOOLHOST_LISTEN`) and 8765 (the weather stand-in's, also in the
/// copied catalogs) become free ones, so that tests may run side by side.
pub struct Shell {
    pub dir: Scratch,
    /// What 8080 becomes.
    pub port: u16,
    /// What 8765 becomes.
    pub upstream: u16,
    envs: Vec<(String, String)>,
    /// Directories put on PATH after this build's and before the inherited PATH.
    paths: Vec<PathBuf>,
}

impl Shell {
    pub fn new() -> Self {
        let dir = Scratch::new();
        copy_tree(&repo().join("examples"), &dir.0.join("examples"));
        let upstream = free_port();
        let weather = dir.0.join("examples/weather/weather.yaml");
        let text = std::fs::read_to_string(&weather).unwrap();
        std::fs::write(
            &weather,
            text.replace("127.0.0.1:8765", &format!("127.0.0.1:{upstream}")),
        )
        .unwrap();
        Self {
            dir,
            port: free_port(),
            upstream,
            envs: Vec::new(),
            paths: Vec::new(),
        }
    }

    /// The scratch directory.
    pub fn path(&self) -> &Path {
        &self.dir.0
    }

    /// Sets an environment variable for the blocks run after.
    pub fn env(&mut self, name: &str, value: impl Into<String>) {
        self.envs.push((name.to_owned(), value.into()));
    }

    /// Puts `dir` on PATH for the blocks run after (after this build's `toolhost`).
    pub fn path_add(&mut self, dir: &Path) {
        self.paths.push(dir.to_path_buf());
    }

    /// The block's text with its ports swapped.
    pub fn script(&self, text: &str) -> String {
        text.replace("8080", &self.port.to_string())
            .replace("8765", &self.upstream.to_string())
    }

    /// Runs `block` with bash (`set -e`, its background jobs killed when it ends) bounded to
    /// `secs`; its stdout and stderr, which must come from a success.
    pub fn run(&self, block: &Block, secs: u32) -> String {
        let (ok, said) = self.run_text(&block.text, secs);
        assert!(ok, "{} failed as written:\n{}\n---\n{said}", block.at(), block.text);
        said
    }

    /// Runs `text` as [`Shell::run`] does; whether it succeeded, and what it said.
    pub fn run_text(&self, text: &str, secs: u32) -> (bool, String) {
        let mut path: Vec<PathBuf> = vec![Path::new(BIN).parent().unwrap().to_path_buf()];
        path.extend(self.paths.iter().cloned());
        path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        let out = Command::new("timeout")
            .current_dir(self.path())
            .env("PATH", std::env::join_paths(path).unwrap())
            .env("HOME", self.path())
            .env_remove("XDG_CONFIG_HOME")
            .env("TOOLHOST_LISTEN", format!("127.0.0.1:{}", self.port))
            .env("TOOLHOST_CACHE_DIR", self.path().join("cache"))
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .args([&secs.to_string(), "bash", "-c"])
            .arg(format!(
                "set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{}",
                self.script(text)
            ))
            .output()
            .unwrap();
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    }
}

/// Issue #41.1: a command block that no test runs and that does not say why fails here, so a
/// page cannot gain one unnoticed; so does a marker naming a group no test runs, a reason too
/// short to be one, and a group whose test would find nothing to run.
#[test]
fn every_command_block_of_the_book_is_run_or_says_why_not() {
    let blocks: Vec<Block> = blocks().into_iter().filter(Block::is_command).collect();
    let mut unmarked = Vec::new();
    let (mut run, mut not_run) = (0, 0);
    for block in &blocks {
        match &block.marker {
            Marker::Run(group) => {
                assert!(
                    GROUPS.iter().any(|(g, _)| g == group),
                    "{} is marked `run: {group}`, which no test runs (book::GROUPS)",
                    block.at()
                );
                run += 1;
            }
            Marker::NotRun(reason) => {
                assert!(
                    reason.split_whitespace().count() >= 4,
                    "{}: `not run: {reason}` gives no reason a reader could weigh",
                    block.at()
                );
                not_run += 1;
            }
            Marker::None => unmarked.push(block.at()),
        }
    }
    assert!(
        unmarked.is_empty(),
        "command blocks neither run by a test nor marked `<!-- not run: REASON -->`: {unmarked:?} \
         (put `<!-- run: GROUP -->` before the fence and run the group in its test, see book::GROUPS)"
    );
    for (group, test) in GROUPS {
        assert!(
            blocks.iter().any(|b| b.marker == Marker::Run((*group).to_owned())),
            "no block is marked `run: {group}`, so {test} runs nothing"
        );
    }
    eprintln!(
        "{} command blocks: {run} run by tests, {not_run} not run, each with its reason",
        blocks.len()
    );
    assert!(
        run > not_run,
        "most of the book's commands run: {run} run, {not_run} not"
    );
}

#[test]
fn blocks_are_read_with_their_markers_and_indentation() {
    let page = Page {
        name: "x.md".to_owned(),
        text: "<!-- run: serving -->\n```sh\necho a\n```\n\n- item:\n\n  <!-- not run: needs a cluster of its own -->\n  ```sh\n  echo b\n  ```\n```text\n$ ls\nx\n```\n```yaml\na: 1\n```\n".to_owned(),
    };
    let blocks = blocks_of(&page);
    assert_eq!(blocks.len(), 4);
    assert_eq!(blocks[0].marker, Marker::Run("serving".to_owned()));
    assert_eq!((blocks[0].text.as_str(), blocks[0].line), ("echo a\n", 2));
    assert_eq!(
        blocks[1].marker,
        Marker::NotRun("needs a cluster of its own".to_owned())
    );
    assert_eq!(blocks[1].text, "echo b\n");
    assert!(blocks[2].is_command() && blocks[2].marker == Marker::None);
    assert!(!blocks[3].is_command());
}
