//! Tests of the `toolhost` binary as a user runs it: real processes, real sockets on 127.0.0.1.

mod check;
mod serve;
mod support;
