//! Agents: a designer's selection of tools and the operating procedure that uses them (N-ACT
//! §1, §3.1), read from Markdown files with YAML front matter in the catalog's `agents/` folder.
//!
//! Loading an agent checks it against the catalog it is loaded with: every selected tool exists
//! (at its pinned version, served); every `tool_name()` the procedure mentions is one of the
//! agent's tools (an error naming the nearest names otherwise); a selected tool the procedure
//! never mentions, and a catalog tool it mentions without selecting it, are warnings. Each
//! agent carries its own [`Catalog`]: exactly its tools, a pinned tool at only its pinned
//! version, which the server serves at the agent's endpoints with the same adapters.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Deserialize;

use super::{Access, Catalog, Place, Problem, Severity, Tool, VersionSelector};

/// Longest agent name (`^[a-z][a-z0-9_-]{0,63}$`).
const MAX_AGENT_NAME: usize = 64;
/// The most bytes of one agent file: a procedure is prose for a model's context, not a book.
pub const MAX_AGENT_BYTES: usize = 256 * 1024;
/// The most tools one agent may select: N-ACT's point is a few.
const MAX_AGENT_TOOLS: usize = 256;

/// One agent: who it is, the tools it may use (each at the version its procedure was written
/// against, or following the latest), who may use it, and its operating procedure.
#[derive(Debug)]
pub struct Agent {
    /// The agent's name, `^[a-z][a-z0-9_-]{0,63}$`: the last segment of its endpoints.
    pub name: String,
    /// What the agent is for.
    pub description: String,
    /// Its tools, in the order the file selects them.
    pub tools: Vec<AgentTool>,
    /// Scopes a caller must hold to use the agent, when the file sets them.
    pub scopes: Option<Vec<String>>,
    /// Other agents the procedure may hand the session over to (`handoffs:`).
    pub handoffs: Vec<String>,
    /// The operating procedure: the Markdown after the front matter.
    pub procedure: String,
    /// The arguments the agent takes as a prompt (`arguments:`), `{{name}}` in the procedure.
    pub arguments: Vec<super::prompt::PromptArgument>,
    /// The resources the prompt attaches (`attach:`): URIs, `{{argument}}` filled in.
    pub attach: Vec<String>,
    /// How its MCP endpoint shows its tools (`disclosure:`): all listed, or found by search.
    pub disclosure: super::Disclosure,
    /// The file the agent was read from.
    pub source: String,
    /// The check's warnings about this agent.
    pub findings: Vec<Finding>,
    /// Exactly the agent's tools, a pinned one at only its pinned version.
    catalog: Arc<Catalog>,
    /// What [`Agent::required_scopes`] gives, worked out at load.
    required: BTreeSet<String>,
}

/// One tool of an agent.
#[derive(Debug)]
pub struct AgentTool {
    /// The reference as the file writes it (`Pharmacy.send_confirmation@1`).
    pub written: String,
    /// The tool's name in the catalog.
    pub name: String,
    /// The pinned version, when the reference pins one.
    pub pin: Option<semver::Version>,
    /// The procedure's lines that call the tool, trimmed, without list markers: how the
    /// procedure uses it.
    pub uses: Vec<String>,
}

/// One of the check's findings about an agent, with the tool or agent it names, so that a
/// caller who may not see that one is not told of it (issue #37.15).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What is wrong and where.
    pub problem: Problem,
    /// The tool or agent the message names, other than the agent itself.
    pub names: Option<Named>,
}

/// What a finding names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A tool of the catalog, by name.
    Tool(String),
    /// Another agent, by name.
    Agent(String),
}

impl Finding {
    fn of(problem: Problem) -> Self {
        Self { problem, names: None }
    }
}

impl Agent {
    /// The agent's own catalog: its tools only, each pinned one at its pinned version alone.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The scopes a caller must hold to use the agent: its own `scopes`, or, when it sets
    /// none, every scope its tools need (those who may use all its tools).
    pub fn required_scopes(&self) -> &BTreeSet<String> {
        &self.required
    }

    /// Whether `access` may use the agent; to a caller who may not, it does not exist.
    pub fn allows(&self, access: &Access) -> bool {
        match access {
            Access::All => true,
            Access::Scopes(held) => self.required.iter().all(|s| held.contains(s)),
        }
    }

    /// The agent's tools that are withdrawn now (a federated tool its upstream dropped): an
    /// agent with one is broken until its upstream or its file is fixed.
    pub fn withdrawn_tools(&self) -> Vec<&str> {
        self.catalog
            .tools()
            .iter()
            .filter(|t| t.withdrawn())
            .map(|t| t.name.as_str())
            .collect()
    }
}

/// The front matter as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    name: String,
    description: String,
    tools: Vec<String>,
    #[serde(default)]
    scopes: Option<Vec<String>>,
    #[serde(default)]
    handoffs: Vec<String>,
    #[serde(default)]
    arguments: Vec<super::prompt::ArgumentDef>,
    #[serde(default)]
    attach: Vec<String>,
    /// Tools (named as in `tools`, or by name) whose every call a human confirms when this
    /// agent makes it, whatever the catalog says (issue #40).
    #[serde(default)]
    confirmation: Vec<String>,
    #[serde(default)]
    disclosure: super::Disclosure,
}

/// Why `name` is not an agent name, for a person to fix; `None` when it is one.
pub fn agent_name_problem(name: &str) -> Option<String> {
    (!is_agent_name(name)).then(|| {
        format!(
            "the agent name `{name}` is not allowed; use a lower-case letter followed by up to 63 lower-case letters, digits, `_` or `-`"
        )
    })
}

/// `^[a-z][a-z0-9_-]{0,63}$`.
pub fn is_agent_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && name.len() <= MAX_AGENT_NAME
}

/// Splits an agent file into its front matter and its procedure.
fn split(text: &str) -> Result<(&str, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let missing = || {
        "an agent file starts with YAML front matter between two `---` lines (name, description, tools), \
         followed by the procedure in Markdown"
            .to_owned()
    };
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(missing)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(missing())
}

/// A tool reference: `name`, `Toolkit.name`, either with `@1` or `@1.2.0`.
struct Reference<'a> {
    toolkit: Option<&'a str>,
    name: &'a str,
    pin: Option<&'a str>,
}

fn reference(text: &str) -> Reference<'_> {
    let (path, pin) = match text.split_once('@') {
        Some((path, pin)) => (path, Some(pin)),
        None => (text, None),
    };
    let (toolkit, name) = match path.split_once('.') {
        Some((toolkit, name)) => (Some(toolkit), name),
        None => (None, path),
    };
    Reference { toolkit, name, pin }
}

/// Reads and checks the agents in `sources` against `catalog`; problems go to `problems`.
pub(super) fn load(sources: &[&super::Source], catalog: &Catalog, problems: &mut Vec<Problem>) -> Vec<Arc<Agent>> {
    let mut agents: Vec<Arc<Agent>> = Vec::new();
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut pending = Vec::new();
    for source in sources {
        let mut found = Vec::new();
        if let Some(parsed) = parse(source, catalog, &mut found) {
            match files.get(&parsed.name) {
                Some(other) => found.push(problem(
                    Severity::Error,
                    &source.name,
                    &parsed.name,
                    "name",
                    format!("another agent file ({other}) has this name; agent names are unique"),
                )),
                None => {
                    files.insert(parsed.name.clone(), source.name.clone());
                }
            }
            pending.push(parsed);
        }
        problems.extend(found);
    }
    for mut agent in pending {
        for (i, other) in agent.handoffs.iter().enumerate() {
            if other == &agent.name {
                agent.findings.push(Finding::of(problem(
                    Severity::Error,
                    &agent.source,
                    &agent.name,
                    &format!("handoffs[{i}]"),
                    "an agent does not hand over to itself".to_owned(),
                )));
            } else if !files.contains_key(other) {
                let nearest = nearest(other, files.keys().map(String::as_str));
                agent.findings.push(Finding::of(problem(
                    Severity::Error,
                    &agent.source,
                    &agent.name,
                    &format!("handoffs[{i}]"),
                    format!("no agent is named `{other}`{nearest}"),
                )));
            } else if !mentions_word(&agent.procedure, other) {
                agent.findings.push(Finding {
                    problem: problem(
                        Severity::Warning,
                        &agent.source,
                        &agent.name,
                        &format!("handoffs[{i}]"),
                        format!("the procedure never names `{other}`: say when to hand over to it, or remove it"),
                    ),
                    names: Some(Named::Agent(other.clone())),
                });
            }
        }
        let of = |severity| {
            agent
                .findings
                .iter()
                .filter(move |f| f.problem.severity == severity)
                .map(|f| f.problem.clone())
        };
        problems.extend(of(Severity::Error));
        problems.extend(of(Severity::Warning));
        agent.findings.retain(|f| f.problem.severity == Severity::Warning);
        agents.push(Arc::new(agent));
    }
    agents.sort_by(|a, b| a.name.cmp(&b.name));
    agents
}

fn problem(severity: Severity, file: &str, agent: &str, field: &str, message: String) -> Problem {
    Problem {
        severity,
        place: Place {
            file: file.to_owned(),
            agent: Some(agent.to_owned()),
            field: Some(field.to_owned()),
            ..Place::default()
        },
        message,
    }
}

/// Parses one agent file and checks it against `catalog`; `None` when it cannot be read at all
/// (the reason is in `problems`). Problems found after parsing are in the agent's `findings`
/// (errors too; the caller moves them out).
fn parse(source: &super::Source, catalog: &Catalog, problems: &mut Vec<Problem>) -> Option<Agent> {
    let file_problem = |message: String| Problem {
        severity: Severity::Error,
        place: Place {
            file: source.name.clone(),
            ..Place::default()
        },
        message,
    };
    if source.text.len() > MAX_AGENT_BYTES {
        problems.push(file_problem(format!(
            "the agent file has {} bytes; at most {MAX_AGENT_BYTES} are read: a procedure is for a model's context",
            source.text.len()
        )));
        return None;
    }
    let (front, procedure) = match split(&source.text) {
        Ok(parts) => parts,
        Err(message) => {
            problems.push(file_problem(message));
            return None;
        }
    };
    let front: FrontMatter = match serde_saphyr::from_str(front) {
        Ok(front) => front,
        Err(e) => {
            problems.push(file_problem(format!("failed to parse the front matter: {e}")));
            return None;
        }
    };
    let name = front.name;
    let findings = std::cell::RefCell::new(Vec::new());
    let report_naming = |severity, field: &str, message: String, names: Option<Named>| {
        findings.borrow_mut().push(Finding {
            problem: problem(severity, &source.name, &name, field, message),
            names,
        });
    };
    let report = |severity, field: &str, message: String| report_naming(severity, field, message, None);
    if let Some(problem) = agent_name_problem(&name) {
        report(Severity::Error, "name", problem);
    }
    if front.description.trim().is_empty() {
        report(
            Severity::Error,
            "description",
            "the description is empty; say what the agent is for".to_owned(),
        );
    }
    if procedure.trim().is_empty() {
        report(
            Severity::Error,
            "procedure",
            "the procedure is empty; after the front matter, write how the agent uses its tools".to_owned(),
        );
    }
    if front.tools.is_empty() {
        report(
            Severity::Error,
            "tools",
            "the agent selects no tools; list the tools its procedure uses".to_owned(),
        );
    }
    if front.tools.len() > MAX_AGENT_TOOLS {
        report(
            Severity::Error,
            "tools",
            format!(
                "the agent selects {} tools; at most {MAX_AGENT_TOOLS}: split it into sub-agents",
                front.tools.len()
            ),
        );
    }
    if let Some(scopes) = &front.scopes
        && scopes.iter().any(|s| s.trim().is_empty())
    {
        report(Severity::Error, "scopes", "a scope is empty".to_owned());
    }
    let arguments = super::prompt::check(front.arguments, &front.attach, procedure, catalog, &report);
    // Resolve every selected tool.
    let mentions = mentions(procedure);
    let mut tools: Vec<AgentTool> = Vec::new();
    let mut picked: Vec<(Arc<Tool>, Option<usize>, bool)> = Vec::new();
    for (i, written) in front.tools.iter().enumerate() {
        let field = format!("tools[{i}]");
        let r = reference(written.trim());
        let Some(tool) = catalog
            .find(r.name)
            .filter(|t| r.toolkit.is_none_or(|k| k == t.toolkit))
        else {
            let all = catalog.tools().iter().map(|t| t.name.as_str());
            report(
                Severity::Error,
                &field,
                format!("`{written}` is not a tool of the catalog{}", nearest(r.name, all)),
            );
            continue;
        };
        if picked.iter().any(|(t, _, _)| t.name == tool.name) {
            report(Severity::Error, &field, format!("`{}` is selected twice", tool.name));
            continue;
        }
        let pin = match r.pin.map(VersionSelector::pin) {
            None => None,
            Some(Err(e)) => {
                report(Severity::Error, &field, e);
                continue;
            }
            Some(Ok(selector)) => match tool.resolve(&selector) {
                Some(version) => Some(version),
                None => {
                    let served: Vec<String> = tool.served_versions().map(|v| v.semver.to_string()).collect();
                    report(
                        Severity::Error,
                        &field,
                        format!(
                            "`{written}` pins version {selector} of `{}`, which the catalog does not serve (served: {}); \
                             pin a served version, or follow the latest without `@`",
                            tool.name,
                            served.join(", ")
                        ),
                    );
                    continue;
                }
            },
        };
        let uses = mentions
            .iter()
            .filter(|m| m.names(tool))
            .map(|m| m.line.clone())
            .collect::<Vec<_>>();
        let confirmed = front
            .confirmation
            .iter()
            .any(|c| c.trim() == written.trim() || reference(c.trim()).name == tool.name);
        let needs_confirmation = confirmed || pin.map_or(tool.latest(), |v| v).confirmation.is_some();
        if uses.is_empty() && needs_confirmation {
            report_naming(
                Severity::Warning,
                &field,
                format!(
                    "the procedure never mentions `{}()`, which needs the user's confirmation before it runs: \
                     say when to call it and that the user will be asked to confirm it (issue #40)",
                    tool.name
                ),
                Some(Named::Tool(tool.name.clone())),
            );
        } else if uses.is_empty() {
            report_naming(
                Severity::Warning,
                &field,
                format!(
                    "the procedure never calls `{}()`: a tool selected but not used invites hallucinated calls (N-ACT §1); \
                     say when to use it, or remove it",
                    tool.name
                ),
                Some(Named::Tool(tool.name.clone())),
            );
        }
        tools.push(AgentTool {
            written: written.clone(),
            name: tool.name.clone(),
            pin: pin.map(|v| v.semver.clone()),
            uses,
        });
        picked.push((Arc::clone(tool), pin.map(|v| v.number as usize - 1), confirmed));
    }
    // Every mention is one of the agent's tools.
    let mut seen = BTreeSet::new();
    for mention in &mentions {
        if !seen.insert(mention.text.as_str()) || picked.iter().any(|(t, _, _)| mention.names(t)) {
            continue;
        }
        match catalog.tools().iter().find(|t| mention.names(t)) {
            Some(tool) => report_naming(
                Severity::Warning,
                "procedure",
                format!(
                    "the procedure calls `{}()`, a catalog tool the agent does not select; add it to `tools`, or reword",
                    tool.name
                ),
                Some(Named::Tool(tool.name.clone())),
            ),
            None if mention.looks_like_a_call() => {
                let names = picked
                    .iter()
                    .map(|(t, _, _)| t.name.as_str())
                    .chain(catalog.tools().iter().map(|t| t.name.as_str()));
                report(
                    Severity::Error,
                    "procedure",
                    format!(
                        "the procedure calls `{}()`, which is not one of the agent's tools{}",
                        mention.text,
                        nearest(mention.name(), names)
                    ),
                );
            }
            None => {}
        }
    }
    for (i, written) in front.confirmation.iter().enumerate() {
        let name = reference(written.trim()).name;
        if !picked.iter().any(|(t, _, _)| t.name == name) {
            report(
                Severity::Error,
                &format!("confirmation[{i}]"),
                format!("`{written}` is not one of the agent's `tools`; name a selected tool"),
            );
        }
    }
    let scopes = front.scopes;
    let handoffs = front.handoffs;
    let description = front.description.trim().to_owned();
    let own = catalog.restricted(&picked);
    let required = match &scopes {
        Some(scopes) => scopes.iter().cloned().collect(),
        None => own.tools().iter().flat_map(|t| t.scopes.iter().cloned()).collect(),
    };
    Some(Agent {
        catalog: Arc::new(own),
        required,
        name,
        description,
        tools,
        scopes,
        handoffs,
        arguments,
        attach: front.attach,
        disclosure: front.disclosure,
        procedure: procedure.trim_start_matches(['\r', '\n']).to_owned(),
        source: source.name.clone(),
        findings: findings.into_inner(),
    })
}

/// One `name(` in the procedure.
#[derive(Debug)]
struct Mention {
    /// As written: `name` or `Toolkit.name`.
    text: String,
    /// Whether `()` follows at once.
    empty_call: bool,
    /// The line it is on, trimmed, without a list marker or heading marks.
    line: String,
}

impl Mention {
    fn name(&self) -> &str {
        self.text.rsplit('.').next().unwrap_or(&self.text)
    }

    fn names(&self, tool: &Tool) -> bool {
        match self.text.split_once('.') {
            Some((toolkit, name)) => toolkit == tool.toolkit && name == tool.name,
            None => self.text == tool.name,
        }
    }

    /// Whether an unknown `word(` is meant as a tool call rather than prose ("refill(s)"): it
    /// is written `name()`, or has an underscore or a toolkit.
    fn looks_like_a_call(&self) -> bool {
        self.empty_call || self.text.contains('_') || self.text.contains('.')
    }
}

/// Every `identifier(` and `Toolkit.identifier(` in the procedure, in order.
fn mentions(procedure: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    for line in procedure.lines() {
        let bytes = line.as_bytes();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        for (i, _) in line.match_indices('(') {
            let mut start = i;
            while start > 0 && (ident(bytes[start - 1]) || bytes[start - 1] == b'.') {
                start -= 1;
            }
            let text = line[start..i].trim_start_matches('.');
            let valid = text.split('.').count() <= 2
                && text
                    .split('.')
                    .all(|p| p.as_bytes().first().is_some_and(u8::is_ascii_alphabetic));
            if text.is_empty() || !valid {
                continue;
            }
            found.push(Mention {
                text: text.to_owned(),
                empty_call: bytes.get(i + 1) == Some(&b')'),
                line: line
                    .trim()
                    .trim_start_matches(['-', '*', '#', '>'])
                    .trim_start()
                    .chars()
                    .take(300)
                    .collect(),
            });
        }
    }
    found
}

/// Whether `word` appears in `text` as a whole word.
fn mentions_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.split(|c: char| !part(c)).any(|w| w == word)
}

/// "; nearest: `a`, `b`" for the names closest to `name`, or nothing when none is close.
pub(crate) fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (crate::edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 2).max(2))
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    let names: Vec<String> = scored.iter().take(3).map(|(_, c)| format!("`{c}`")).collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("; nearest: {}", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_procedure_split_at_the_second_rule() {
        let (front, body) = split("---\nname: a\n---\n## Goal\ntext\n").unwrap();
        assert_eq!(front, "name: a\n");
        assert_eq!(body, "## Goal\ntext\n");
        assert!(split("name: a\n").is_err());
        assert!(split("---\nname: a\n").is_err());
    }

    #[test]
    fn names_follow_the_agent_rule() {
        assert!(is_agent_name("refills"));
        assert!(is_agent_name("a-b_c9"));
        assert!(!is_agent_name("Refills"));
        assert!(!is_agent_name("9a"));
        assert!(!is_agent_name(&"a".repeat(65)));
    }

    #[test]
    fn calls_are_found_with_their_toolkit_and_prose_is_not_a_call() {
        let found = mentions("- Use look_up() then Pharmacy.send_it(x). A refill(s) (see below) or f.");
        let texts: Vec<(&str, bool)> = found.iter().map(|m| (m.text.as_str(), m.looks_like_a_call())).collect();
        assert_eq!(
            texts,
            [("look_up", true), ("Pharmacy.send_it", true), ("refill", false)]
        );
    }

    #[test]
    fn nearest_names_are_the_close_ones() {
        let names = ["convert_length", "convert_text_case", "add_numbers"];
        assert_eq!(
            nearest("convert_lenght", names.into_iter()),
            "; nearest: `convert_length`, `convert_text_case`"
        );
        assert_eq!(nearest("zzz", names.into_iter()), "");
    }
}
