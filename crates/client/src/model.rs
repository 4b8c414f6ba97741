//! The one tool model every protocol normalizes into.
//!
//! N-ACT signatures map exactly onto core's typed parameters; OTC, WoA and MCP describe inputs
//! as JSON Schema, whose simple properties map onto the same types and whose others (arrays,
//! objects, unions) stay as schemas. Either way a [`Tool`] keeps the input schema it is checked
//! against and the definition exactly as the server sent it (for hashing and `--json`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_core::InputType;
use toolhost_core::validate::Expects;
use url::Url;

pub use toolhost_wire::Protocol;

/// Where a server is: an `http(s)` URL, or a command that speaks MCP on stdin/stdout.
///
/// Written as text in flags and lockfiles: the URL itself, or `stdio:` followed by the command
/// line (words split on spaces; single or double quotes group words, `\` escapes one character).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// An `http` or `https` URL.
    Url(Url),
    /// A program and its arguments, started as a child process.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

impl Source {
    /// The prefix of a command source.
    pub const STDIO: &'static str = "stdio:";

    /// Parses a URL or a `stdio:` command line.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(command) = text.strip_prefix(Self::STDIO) {
            let mut words = split_words(command)?.into_iter();
            let program = words
                .next()
                .ok_or_else(|| "`stdio:` needs a command, e.g. `stdio:python3 server.py`".to_owned())?;
            return Ok(Self::Command {
                program,
                args: words.collect(),
            });
        }
        let url = Url::parse(text).map_err(|e| {
            format!("`{text}` is not a server address ({e}); give an http(s) URL or `stdio:COMMAND ARGS`")
        })?;
        match url.scheme() {
            "http" | "https" => Ok(Self::Url(url)),
            other => Err(format!(
                "`{text}` has the scheme `{other}`; give an http(s) URL or `stdio:COMMAND ARGS`"
            )),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url(url) => f.write_str(url.as_str()),
            Self::Command { program, args } => {
                f.write_str(Self::STDIO)?;
                for (i, word) in std::iter::once(program).chain(args).enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    if word.is_empty() || word.contains([' ', '"', '\'', '\\']) {
                        write!(f, "'{}'", word.replace('\\', "\\\\").replace('\'', "\\'"))?;
                    } else {
                        f.write_str(word)?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Source {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Splits a command line into words: spaces separate, quotes group, `\` escapes.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _) => {
                let escaped = chars
                    .next()
                    .ok_or_else(|| format!("the command `{line}` ends in a lone `\\`"))?;
                word.get_or_insert_with(String::new).push(escaped);
            }
            (q, None) if q == '"' || q == '\'' => {
                quote = Some(q);
                word.get_or_insert_with(String::new);
            }
            (q, Some(open)) if q == open => quote = None,
            (c, None) if c.is_whitespace() => words.extend(word.take()),
            (c, _) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("the command `{line}` has an unclosed quote"));
    }
    words.extend(word);
    Ok(words)
}

/// A server's tools, discovered over one protocol.
#[derive(Debug, Clone)]
pub struct Server {
    /// Where the tools were discovered, as given.
    pub source: Source,
    /// The protocol that answered.
    pub protocol: Protocol,
    /// Where this protocol lives on the server (N-ACT root, OTC base, WoA document, MCP
    /// endpoint), as a source: with `protocol`, it reaches the tools without probing again.
    pub endpoint: Source,
    /// The tools, sorted by name.
    pub tools: Vec<Tool>,
    /// Definitions that were skipped, and why (bad names, unreadable entries).
    pub skipped: Vec<String>,
    /// The agent, when the source was an agent's URL (`…/agents/{name}`): its procedure and
    /// endpoints; the tools are those it serves.
    pub agent: Option<crate::agent::Agent>,
}

impl Server {
    /// The tool with this name. A WoA agent's `default` operation is the agent itself, so
    /// `summarizer.default` finds the tool `summarizer` too (draft §5.1, Appendix B).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name).or_else(|| {
            let agent = name.strip_suffix(".default")?;
            self.tools
                .iter()
                .find(|t| t.protocol == Protocol::Woa && t.name == agent)
        })
    }
}

/// One tool, whatever protocol it came from.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The name the server knows the tool by, and what calls send. Checked to be plain text.
    pub name: String,
    /// A human-readable title, if the server gives one (cleaned).
    pub title: Option<String>,
    /// What the tool does (cleaned and bounded; see [`crate::text`]).
    pub description: String,
    /// The version these inputs and outputs belong to: semver where the server says.
    pub version: Option<String>,
    /// N-ACT's version number, when the tool came over N-ACT.
    pub version_number: Option<u32>,
    /// Every version the server lists, newest first (OTC lists each; others only the current).
    pub versions: Vec<String>,
    /// The inputs, in the server's order.
    pub inputs: Vec<Parameter>,
    /// The JSON Schema of the input object: what local validation checks (compiled on the
    /// first check and kept: change it before checking, not after).
    pub input_schema: Value,
    /// The outputs, when the server declares them as named fields.
    pub outputs: Vec<Output>,
    /// The JSON Schema of a successful result, when the server gives one.
    pub output_schema: Option<Value>,
    /// The protocol the tool came over.
    pub protocol: Protocol,
    /// Where the protocol lives (see [`Server::endpoint`]).
    pub endpoint: Source,
    /// The definition exactly as the server sent it.
    pub definition: Value,
    /// How to call it.
    pub(crate) address: Address,
    /// The definitions of the other versions the server listed (OTC), by version.
    pub(crate) history: Vec<(String, Value)>,
    /// `input_schema`, compiled on the first check and kept (shared by clones): a tool is
    /// checked on every call. `None` inside when the schema does not compile here.
    pub(crate) compiled: std::sync::Arc<std::sync::OnceLock<Option<toolhost_core::validate::Validator>>>,
}

impl Tool {
    /// The tool an N-ACT signature describes, as discovery at the platform root `root` would
    /// have found it (a server rendering its own signatures for export or pinning, say);
    /// `Err` says why it is not one.
    pub fn from_nact_signature(root: &url::Url, signature: Value) -> Result<Self, String> {
        crate::nact::tool(root, &Source::Url(root.clone()), signature)
    }

    /// Whether the server says a call can be repeated with no further effect: MCP's
    /// `annotations.idempotentHint` or `readOnlyHint` (honoured in any protocol's definition, as
    /// an extension). N-ACT, OTC and WoA have no such mark of their own, so their tools are
    /// taken to change things: a call that may have reached the server is sent again only on
    /// the protocol's own retry signal ([`crate::Error::server_says_retry`], issue #31), never
    /// without one (issue #12).
    pub fn is_idempotent(&self) -> bool {
        let hint = |name: &str| {
            self.definition
                .get("annotations")
                .and_then(|a| a.get(name))
                .and_then(Value::as_bool)
                == Some(true)
        };
        hint("idempotentHint") || hint("readOnlyHint")
    }
}

/// How a call reaches a tool; one variant per protocol.
#[derive(Debug, Clone)]
pub(crate) enum Address {
    /// `POST {root}/tools/{id}/versions/{number}:invoke`.
    Nact { root: Url, id: String, number: u32 },
    /// `POST {base}/tools/call` with `tool_id`; `schema` is the `$schema` to send.
    Otc { base: Url, tool_id: String, schema: String },
    /// `POST` to the agent's REST invocation URL (with `operation` in the envelope when the
    /// agent has several); without REST, `tools/call` of the agent on the document's MCP server.
    Woa {
        invoke: Option<Url>,
        agent: String,
        operation: Option<String>,
        mcp: Option<Url>,
    },
    /// `tools/call` on the server's MCP session; `pin` goes back in `_meta` (toolhost's extension).
    Mcp { pin: Option<Value> },
}

/// One input parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// The name a call writes (the key in the input object).
    pub name: String,
    /// What it means (cleaned).
    pub description: String,
    /// Whether a call must give it.
    pub required: bool,
    /// Its type and constraints.
    pub kind: Kind,
    /// Its JSON Schema, as the input schema has it.
    pub schema: Value,
}

/// The type of a parameter: one of core's typed inputs, or a JSON Schema they cannot express.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A string, integer, number, boolean or enum with its constraints.
    Typed(InputType),
    /// Anything else (arrays, objects, unions), described from its schema.
    Schema,
}

impl Parameter {
    /// The type's short name: `string`, `int`, …, or the schema's `type` (`json` when none).
    pub fn type_name(&self) -> String {
        match &self.kind {
            Kind::Typed(kind) => kind.name().to_owned(),
            Kind::Schema => match self.schema.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                _ => "json".to_owned(),
            },
        }
    }
}

impl Expects for Parameter {
    fn name(&self) -> &str {
        &self.name
    }
    fn required(&self) -> bool {
        self.required
    }
    fn expects(&self) -> String {
        match &self.kind {
            Kind::Typed(kind) => toolhost_core::validate::describe(kind),
            Kind::Schema => crate::schema::describe(&self.schema),
        }
    }
    fn is_schema(&self) -> bool {
        matches!(self.kind, Kind::Schema)
    }
}

/// One named output of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The key of the output in a result.
    pub name: String,
    /// What it means (cleaned).
    pub description: String,
    /// The type's short name (`string`, `int`, `json`, …).
    pub kind: String,
    /// Whether every successful result carries it.
    pub required: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_and_print() {
        let url = Source::parse("http://127.0.0.1:8080/nact").unwrap();
        assert_eq!(url.to_string(), "http://127.0.0.1:8080/nact");
        let command = Source::parse("stdio:python3 'my server.py' --flag \"a b\" c\\ d").unwrap();
        assert_eq!(
            command,
            Source::Command {
                program: "python3".into(),
                args: vec!["my server.py".into(), "--flag".into(), "a b".into(), "c d".into()],
            }
        );
        assert_eq!(Source::parse(&command.to_string()).unwrap(), command);
        assert!(Source::parse("ftp://x").unwrap_err().contains("scheme `ftp`"));
        assert!(Source::parse("stdio:").is_err());
        assert!(Source::parse("stdio:a 'b").unwrap_err().contains("unclosed"));
    }

    #[test]
    fn protocols_round_trip() {
        for p in [Protocol::Nact, Protocol::Otc, Protocol::Woa, Protocol::Mcp] {
            assert_eq!(p.as_str().parse::<Protocol>().unwrap(), p);
        }
        assert!("grpc".parse::<Protocol>().is_err());
    }
}
