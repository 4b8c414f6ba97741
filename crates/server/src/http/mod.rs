//! HTTP pieces every adapter shares: JSON bodies, problem responses, caching headers, logging.

pub mod accept;
pub mod body;
pub mod cache;
pub mod hosts;
pub mod log;
pub mod meter;
pub mod problem;

/// Whether `path` is `prefix` or below it (`/otc`, `/otc/tools`, not `/otcx`): which protocol a
/// request is for.
pub(crate) fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    path == prefix || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'))
}
