//! Tools too alike to tell apart: what `toolhost check` warns of (issue #42.4). If a tool's own
//! name and first sentence, asked as a query, rank another tool as high as itself, neither this
//! ranking nor a hosted model's own tool search (which reads the same names and descriptions)
//! can pick the right one.

use std::sync::Arc;

use super::{Index, lead};
use crate::catalog::Tool;

/// How close another tool's score must come to the tool's own for the two to be too alike.
const TOO_CLOSE: f32 = 0.98;

/// The pairs of tools (positions, the first the smaller) that `index` cannot tell apart, each
/// once.
pub fn alike(index: &Index, tools: &[Arc<Tool>]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let query = format!("{} {}", tool.name, lead(&tool.latest().description));
        let hits = index.search(&query, 3, |_| true);
        let Some(own) = hits.iter().find(|(doc, _)| *doc == i).map(|&(_, s)| s) else {
            continue;
        };
        for &(other, score) in &hits {
            if other != i && score >= own * TOO_CLOSE {
                let pair = (i.min(other), i.max(other));
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs
}
