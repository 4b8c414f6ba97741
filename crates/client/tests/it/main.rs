//! Integration tests of toolhost-client against small stub servers on 127.0.0.1.
//!
//! Nothing here connects anywhere but loopback: the SSRF tests use a stub resolver and IP
//! literals, and the guard refuses before connecting. Tests against toolhost itself (all four
//! protocols, the CLI) live in the toolhost binary's tests, since this crate must not depend on
//! the server.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed; the panic says why

mod cache;
mod credentials;
mod guard;
#[path = "../../../../tests/spec-servers/launch.rs"]
mod launch;
mod props;
mod raw;
mod retry;
mod spec;
mod spec_servers;
mod support;
mod woa_client;
