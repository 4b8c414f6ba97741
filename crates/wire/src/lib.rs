//! toolhost-wire: plain serde types for the wire formats toolhost speaks.
//!
//! These are dumb data. Translation between them and the core types lives beside each adapter
//! in `toolhost-server` as named pure functions. MCP types come from rmcp, not from here.

pub mod nact;
pub mod otc;
pub mod problem;
pub mod woa;

use serde::{Deserialize, Serialize};

/// A tool protocol, as the server labels its metrics and the client names the protocol a server
/// speaks (flags, lockfiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// N-ACT (draft-rosenberg-aiproto-nact-00): `{root}/tools`.
    Nact,
    /// Open Tool Calling 1.0: `/tools` and `/tools/call`.
    Otc,
    /// Web of Agents (draft-gaikwad-woa-00): `/.well-known/woa.json`.
    Woa,
    /// Model Context Protocol: streamable HTTP or stdio.
    Mcp,
}

impl Protocol {
    /// The protocol's short name, as metrics, flags and lockfiles write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nact => "nact",
            Self::Otc => "otc",
            Self::Woa => "woa",
            Self::Mcp => "mcp",
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "nact" | "n-act" => Ok(Self::Nact),
            "otc" => Ok(Self::Otc),
            "woa" => Ok(Self::Woa),
            "mcp" => Ok(Self::Mcp),
            _ => Err(format!("unknown protocol `{s}`; use nact, otc, woa or mcp")),
        }
    }
}
