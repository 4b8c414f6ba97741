//! HTTP pieces every adapter shares: JSON bodies, problem responses, caching headers, logging.

pub mod accept;
pub mod body;
pub mod cache;
pub mod hosts;
pub mod log;
pub mod meter;
pub mod problem;
