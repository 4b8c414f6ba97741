//! MCP skills (SEP-2640, the `io.modelcontextprotocol/skills` extension; docs/protocols.md §6):
//! each agent the caller may use is a skill, so a host that loads skills gets the designer's
//! agent as designed.
//!
//! - The skill's name is the agent's with `_` written `-` (Agent Skills names are lowercase
//!   letters, digits and single hyphens); an agent whose name does not become one, or whose
//!   name another agent's already became, is not served as a skill.
//! - One file, `skill://{name}/SKILL.md`: YAML front matter (`name`, `description`, and
//!   `metadata` with the agent's own name and its tool selection), then the procedure as
//!   written, then a `## Tools` section naming each selected tool the caller may see, its
//!   description, the version a pin fixes, and where its definition is; then the skills of the
//!   agents it hands over to (`handoffs:`) that the caller may use, and the agent's own endpoint.
//! - `skills/list` and `skills/get` give each skill's front matter and its one file with its
//!   SHA-256 digest and size; `resources/list` lists each `SKILL.md` (`text/markdown`, named
//!   and described as its front matter says) and `resources/read` serves its bytes.
//!
//! What a skill says depends on the caller (the tools it may see), so every answer is
//! `cacheScope: private`.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, GetSkillResult, ListSkillsResult, Resource, ResourceContents, Skill, SkillFrontmatter, SkillResource,
    SkillResources,
};
use serde_json::json;
use toolhost_core::CallContext;
use toolhost_core::catalog::Agent;

use super::VERSION_META;
use super::resources::TTL_MS;

/// Where skills are: `skill://{name}/SKILL.md`.
pub const SCHEME: &str = "skill://";
/// The one file of a skill.
const SKILL_MD: &str = "SKILL.md";

/// One agent's skill as a caller reads it.
#[derive(Debug)]
pub struct Document {
    /// `skill://{name}/SKILL.md`.
    pub uri: String,
    /// The front matter, as `skills/list` gives it and the file begins with.
    pub frontmatter: SkillFrontmatter,
    /// The file's text.
    pub text: String,
}

/// The skill name of the agent called `agent`: `_` as `-`, when that satisfies the Agent
/// Skills naming rules (1 to 64 of `a-z0-9-`, no leading, trailing or doubled hyphen).
pub fn name(agent: &str) -> Option<String> {
    let name = agent.replace('_', "-");
    let valid = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    valid.then_some(name)
}

/// The agents of `agents` that `caller` may use and that are served as skills, with their
/// skill names: each name once (the first agent to take it keeps it).
fn served<'a>(agents: &'a [Arc<Agent>], caller: &CallContext) -> Vec<(String, &'a Agent)> {
    let named: Vec<(String, &Agent)> = agents
        .iter()
        .filter_map(|a| name(&a.name).map(|n| (n, a.as_ref())))
        .collect();
    named
        .iter()
        .enumerate()
        .filter(|(i, (n, _))| !named[..*i].iter().any(|(other, _)| other == n))
        .filter(|(_, (_, a))| a.allows(&caller.access))
        .map(|(_, (n, a))| (n.clone(), *a))
        .collect()
}

/// `agent`'s skill called `name`, as `caller` reads it; `served` are the skills it may hand
/// over to.
fn document(name: &str, agent: &Agent, caller: &CallContext, served: &[(String, &Agent)]) -> Document {
    // The agent's own catalog holds each tool at the version the agent uses (a pinned one at
    // its pin), which is what the skill describes.
    let tools: Vec<_> = agent
        .tools
        .iter()
        .filter_map(|t| agent.catalog().find(&t.name).map(|tool| (t, tool)))
        .filter(|(_, tool)| tool.listed_to(caller))
        .collect();
    let selection: Vec<&str> = tools.iter().map(|(t, _)| t.written.as_str()).collect();
    let frontmatter = SkillFrontmatter::new(name, agent.description.clone()).with_field(
        "metadata",
        json!({ "toolhost-agent": agent.name, "toolhost-tools": selection.join(" ") }),
    );
    let mut text = String::from("---\n");
    // Each value written as a JSON string, which YAML reads as the same string whatever it
    // holds, so the file's front matter is exactly the entry's (SEP-2640 requires it).
    let quoted = |s: &str| serde_json::Value::from(s).to_string();
    text.push_str(&format!("name: {}\n", quoted(name)));
    text.push_str(&format!("description: {}\n", quoted(&agent.description)));
    text.push_str("metadata:\n");
    text.push_str(&format!("  toolhost-agent: {}\n", quoted(&agent.name)));
    text.push_str(&format!("  toolhost-tools: {}\n", quoted(&selection.join(" "))));
    text.push_str("---\n");
    text.push_str(agent.procedure.trim_end());
    text.push_str("\n\n## Tools\n\n");
    if tools.is_empty() {
        text.push_str("None of this skill's tools are available to you on this server.\n");
    }
    for (selected, tool) in &tools {
        let version = &tool.latest().semver;
        text.push_str(&format!("- `{}`: {}", tool.name, tool.latest().description.trim()));
        if selected.pin.is_some() {
            text.push_str(&format!(
                " Written against version {version}: call it with `_meta: {{\"{VERSION_META}\": \"{version}\"}}`."
            ));
        }
        text.push_str(&format!(
            " Its definition: resource `{}{}`.\n",
            super::resources::TOOLS,
            tool.name
        ));
    }
    let handoffs: Vec<&(String, &Agent)> = served
        .iter()
        .filter(|(_, other)| agent.handoffs.contains(&other.name))
        .collect();
    if !handoffs.is_empty() {
        text.push_str("\n## Hand-over\n\n");
    }
    for (other, _) in handoffs {
        text.push_str(&format!("- `{other}`: skill `{SCHEME}{other}/{SKILL_MD}`.\n"));
    }
    text.push_str(&format!(
        "\nThe server also serves this agent alone, its tools at these versions, at `{}/mcp`.\n",
        crate::state::agents::base(&agent.name)
    ));
    Document {
        uri: format!("{SCHEME}{name}/{SKILL_MD}"),
        frontmatter,
        text,
    }
}

/// Every skill `caller` may use among `agents`.
fn documents(agents: &[Arc<Agent>], caller: &CallContext) -> Vec<Document> {
    let served = served(agents, caller);
    served
        .iter()
        .map(|(name, agent)| document(name, agent, caller, &served))
        .collect()
}

/// The skill whose `SKILL.md` is at `uri`, when `caller` may use it.
pub fn find(agents: &[Arc<Agent>], caller: &CallContext, uri: &str) -> Option<Document> {
    let name = uri.strip_prefix(SCHEME)?.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    let served = served(agents, caller);
    served
        .iter()
        .find(|(n, _)| n == name)
        .map(|(name, agent)| document(name, agent, caller, &served))
}

impl Document {
    /// The entry `skills/list` and `skills/get` give: front matter and the one file.
    fn entry(self) -> Skill {
        let file = SkillResource::from_bytes(self.uri.clone(), self.text.as_bytes());
        Skill::new(self.uri, self.frontmatter, SkillResources::Files(vec![file]))
    }

    /// The `SKILL.md` as `resources/list` lists it.
    fn resource(&self) -> Resource {
        Resource::new(self.uri.clone(), self.frontmatter.name.clone())
            .with_description(self.frontmatter.description.clone())
            .with_mime_type("text/markdown")
            .with_size(self.text.len() as u64)
    }

    /// The `SKILL.md`'s contents, as `resources/read` gives them.
    pub fn contents(self) -> ResourceContents {
        ResourceContents::text(self.text, self.uri).with_mime_type("text/markdown")
    }
}

/// `skills/list`: every skill `caller` may use, on one page.
pub fn list(agents: &[Arc<Agent>], caller: &CallContext) -> ListSkillsResult {
    let skills = documents(agents, caller).into_iter().map(Document::entry).collect();
    let mut result = ListSkillsResult::with_all_items(skills);
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(CacheScope::Private);
    result
}

/// `skills/get`: the skill at `uri`; `-32602` when none the caller may use is there.
pub fn get(agents: &[Arc<Agent>], caller: &CallContext, uri: &str) -> Result<GetSkillResult, ErrorData> {
    let document = find(agents, caller, uri).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("no skill at `{uri}`; skills/list says which skills there are"),
            Some(json!({ "uri": uri })),
        )
    })?;
    Ok(GetSkillResult::new(document.entry())
        .with_ttl_ms(TTL_MS)
        .with_cache_scope(CacheScope::Private))
}

/// The `SKILL.md` files, for `resources/list`.
pub fn resources(agents: &[Arc<Agent>], caller: &CallContext) -> Vec<Resource> {
    documents(agents, caller).iter().map(Document::resource).collect()
}

#[cfg(test)]
mod tests {
    use super::name;

    #[test]
    fn agent_names_become_skill_names_or_none() {
        assert_eq!(name("travel").as_deref(), Some("travel"));
        assert_eq!(name("test_simple_prompt").as_deref(), Some("test-simple-prompt"));
        for unnamable in ["a__b", "trailing_", "a-_b", &"x".repeat(65)] {
            assert_eq!(name(unnamable), None, "{unnamable}");
        }
    }
}
