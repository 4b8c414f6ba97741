//! toolhost-core: the tool catalog, its versions and validation, the backends that run tools,
//! and [`Engine::invoke`].
//!
//! Core knows no protocol: nothing here speaks HTTP, N-ACT, OTC, WoA or MCP. Adapters in
//! `toolhost-server` decode a request, make one call into this crate and encode the answer.

pub mod ask;
pub mod backend;
pub mod catalog;
pub mod confirm;
pub mod engine;
pub mod fixed;
pub mod native;
pub mod search;
pub mod testing;
pub mod validate;

pub use ask::{Ask, Capability, Question, Reply};
pub use backend::{
    Backend, BackendCall, BackendFactory, BoxFuture, CallContext, LogLevel, Note, Progress, ReadContents,
    ResourceReader, Secret, SharedValues, Signature, StepOutcome, ToolFailure,
};
pub use catalog::{
    Access, Annotations, Authorization, Catalog, Disclosure, EnumValue, ErrorPhrase, InputType, ListQuery, MediaKind,
    Output, OutputType, Page, Parameter, Problem, Requirements, Severity, Source, TaskSupport, Tool, Version,
    VersionSelector,
};
pub use engine::{Engine, Error, Invocation, Outcome, Requirement, resolve};
pub use validate::ParameterError;

/// Milliseconds since the Unix epoch by the wall clock (0 before it): for deadlines and
/// expiries that other processes, or replicas, compare.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Lower-case hex of `bytes` (digests in ids, keys and file names), written without a
/// formatter call per byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The Levenshtein distance of two names, by characters: how suggestions of the nearest names
/// are ranked (an agent's unknown tool, a client's unknown tool name).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod hex_tests {
    #[test]
    fn hex_is_lower_case_two_digits_a_byte() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(super::hex(&[]), "");
    }
}
