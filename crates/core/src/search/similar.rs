//! Tools too alike to tell apart: what `toolhost check` warns of (issue #42.4). If a tool's own
//! name and first sentence, asked as a query, rank another tool as high as itself, neither this
//! ranking nor a hosted model's own tool search (which reads the same names and descriptions)
//! can pick the right one.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Index, lead};
use crate::catalog::Tool;

/// How close another tool's score must come to the tool's own for the two to be too alike.
const TOO_CLOSE: f32 = 0.98;

/// The pairs of tools (positions, the first the smaller) that `index` cannot tell apart, each
/// once: each one's own name and first sentence (its words only, no synonyms) find the other
/// as high as itself.
pub fn alike(index: &Index, tools: &[Arc<Tool>]) -> Vec<(usize, usize)> {
    let mut close: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let query = format!("{} {}", tool.name, lead(&tool.latest().description));
        let hits = index.search_exact(&query, 4);
        let Some(own) = hits.iter().find(|(doc, _)| *doc == i).map(|&(_, s)| s) else {
            continue;
        };
        close.extend(
            hits.iter()
                .filter(|&&(other, score)| other != i && score >= own * TOO_CLOSE)
                .map(|&(other, _)| (i, other)),
        );
    }
    close
        .iter()
        .filter(|&&(a, b)| a < b && close.contains(&(b, a)))
        .copied()
        .collect()
}
