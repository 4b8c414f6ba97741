//! toolhost-core: the tool catalog, its versions and validation, the backends that run tools,
//! and [`Engine::invoke`].
//!
//! Core knows no protocol: nothing here speaks HTTP, N-ACT, OTC, WoA or MCP. Adapters in
//! `toolhost-server` decode a request, make one call into this crate and encode the answer.

pub mod backend;
pub mod catalog;
pub mod engine;
pub mod native;
pub mod testing;
pub mod validate;

pub use backend::{
    Backend, BackendCall, BackendFactory, BoxFuture, CallContext, Secret, SharedValues, Signature, ToolFailure,
};
pub use catalog::{
    Access, Annotations, Authorization, Catalog, EnumValue, ErrorPhrase, InputType, ListQuery, Output, OutputType,
    Page, Parameter, Problem, Requirements, Severity, Source, Tool, Version, VersionSelector,
};
pub use engine::{Engine, Error, Invocation, Outcome, Requirement, resolve};
pub use validate::ParameterError;
