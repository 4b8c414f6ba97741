//! Tests of the `toolhost` binary as a user runs it: real processes, real sockets on 127.0.0.1.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed; the panic says why

mod check;
mod ops;
mod serve;
mod support;
mod woa;
