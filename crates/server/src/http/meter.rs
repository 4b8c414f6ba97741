//! Metric handles made once per label set and reused. The `metrics` macros build a key (label
//! strings) and look it up in the registry on every use, which was ~5% of a native call's CPU
//! (BENCHMARKS.md, issue #9); a handle records with one atomic operation.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{PoisonError, RwLock};

/// Handles by a key: read-locked lookups, made on first use. Keys must come from a bounded set
/// (tools of the catalog, status codes), never from what a caller sends.
#[derive(Debug)]
pub struct Handles<K, H> {
    map: RwLock<HashMap<K, H>>,
}

impl<K, H> Default for Handles<K, H> {
    fn default() -> Self {
        Self { map: RwLock::default() }
    }
}

impl<K: Hash + Eq, H: Clone> Handles<K, H> {
    /// The handle of `key`, made by `make` the first time.
    pub fn get<Q>(&self, key: &Q, make: impl FnOnce() -> (K, H)) -> H
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(handle) = self.map.read().unwrap_or_else(PoisonError::into_inner).get(key) {
            return handle.clone();
        }
        let (key, handle) = make();
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_insert(handle)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_made_once_per_key() {
        let handles: Handles<String, usize> = Handles::default();
        let mut made = 0;
        for _ in 0..3 {
            assert_eq!(
                handles.get("a", || {
                    made += 1;
                    ("a".to_owned(), 7)
                }),
                7
            );
        }
        assert_eq!(made, 1);
        assert_eq!(handles.get("b", || ("b".to_owned(), 8)), 8);
    }
}
