//! toolhost-client: the executor side — discover tools on a server and call them.
//!
//! This first piece speaks N-ACT: it lists every signature (following `paging.next` to the end,
//! with a bound) and invokes a tool, current or pinned. Discovery across protocols, local
//! validation, retries, the SSRF guard and lockfiles build on it (issue #8).

pub mod nact;

pub use nact::NactClient;
