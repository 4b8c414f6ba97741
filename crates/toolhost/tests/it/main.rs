//! Tests of the `toolhost` binary as a user runs it: real processes, real sockets on 127.0.0.1.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed; the panic says why

mod agents;
mod agents_client;
mod approvals;
mod approvals_client;
mod asking;
mod book;
mod check;
mod check_unworkable;
mod client_cli;
mod client_peers;
mod client_protocols;
mod client_spec_servers;
mod client_support;
mod deploy;
mod deploy_run;
mod design;
mod docs_blocks;
mod docs_reference;
mod examples;
mod federation;
mod federation_hostile;
mod federation_peers;
mod federation_relay;
mod federation_resources;
mod http2;
mod humanonly;
mod identity;
mod import;
mod import_aim;
mod import_fidelity;
mod import_overlay;
mod import_peers;
mod import_structured;
#[path = "../../../../tests/spec-servers/launch.rs"]
mod launch;
mod mcp_progress;
mod media;
mod ops;
#[cfg(feature = "otel")]
mod otel;
mod quiet;
mod refusal;
mod replicas;
mod sculpt;
mod search;
mod serve;
mod slow_clients;
mod support;
mod tasks;
mod tls;
mod token_policy;
mod ui;
mod unknown_outcome;
mod verify;
mod verify_safety;
mod versions;
mod walkthrough;
mod woa;
