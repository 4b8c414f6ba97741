//! RFC 9457 problem details, as N-ACT and WoA errors use them (docs/protocols.md §3, §5).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The media type of a problem document.
pub const CONTENT_TYPE: &str = "application/problem+json";

/// A problem details object with toolhost's extension members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// A URI naming the kind of problem.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the kind of problem.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong in this occurrence and what to do about it.
    pub detail: String,
    /// Per-parameter messages, for invalid input (422).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<BTreeMap<String, String>>,
    /// Whether the same request may succeed if retried.
    pub retryable: bool,
    /// The tool's failure code (e.g. `not_found`, `outcome_unknown`), when a tool ran and failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Text for the model's prompt, when the tool offers one (OTC's `additional_prompt_content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}
