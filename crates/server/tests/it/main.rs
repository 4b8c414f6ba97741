//! Integration tests of toolhost-server: a real server on 127.0.0.1, driven over HTTP.
//!
//! One binary with modules (STYLE.md habit 7): `support` starts servers and reads replies; each
//! `nact_*` module covers one part of N-ACT as docs/protocols.md §3 reads it, and each `otc_*` module
//! one part of OTC 1.0 as docs/protocols.md §4 reads it.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed; the panic says why

mod agents;
mod auth;
mod layers;
mod limits;
mod mcp_content;
mod mcp_fast_path;
mod mcp_logging;
mod mcp_malformed;
mod mcp_resources;
mod mcp_resume;
mod mcp_sessions;
mod mcp_skills;
mod mcp_subscriptions;
mod mcp_tasks;
mod nact_bad_input;
mod nact_bad_request;
mod nact_failures;
mod nact_invoke;
mod nact_listing;
mod nact_spec_examples;
mod openapi_document;
mod otc_bad_input;
mod otc_idempotency;
mod otc_requirements;
mod otc_spec_examples;
mod otc_versions;
mod projections;
mod search;
mod support;
mod woa_document;
mod woa_invoke;
