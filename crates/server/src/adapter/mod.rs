//! Protocol adapters. Each decodes its protocol, makes one core call, and encodes the answer;
//! each maps core errors to its own statuses in one exhaustive match (`error.rs`).

pub mod mcp;
pub mod nact;
pub mod otc;
pub mod woa;
