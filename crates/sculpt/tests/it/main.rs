//! Integration tests of toolhost-sculpt, the `http` backend: calls go through
//! `Engine::invoke` to upstreams on real sockets on 127.0.0.1, served in-process with axum for
//! exact control (counting retries, `Retry-After`, slow bodies), by the weather example's own
//! stand-in, and by servers we did not write ([`peer`]: httpbin and json-server).

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed; the panic says why

mod auth;
mod failures;
mod fanout;
mod flow;
mod load;
mod media;
mod peer;
mod placement;
mod poll;
mod refusal;
mod secrets;
mod shaping;
mod shipped;
mod support;
mod unknown_outcome;
mod weather;
