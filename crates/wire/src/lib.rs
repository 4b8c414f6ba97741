//! toolhost-wire: plain serde types for the wire formats toolhost speaks.
//!
//! These are dumb data. Translation between them and the core types lives beside each adapter
//! in `toolhost-server` as named pure functions. MCP types come from rmcp, not from here.

pub mod nact;
pub mod otc;
pub mod problem;
pub mod woa;
