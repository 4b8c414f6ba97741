//! Per-catalog renderings that adapters build once and reuse until the catalog changes.

use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwap;
use toolhost_core::{Catalog, Engine};

/// Something an adapter derives from a whole catalog (pre-serialized signatures, say).
pub trait View: Send + Sync + Sized {
    /// Builds the view of `catalog`.
    fn build(catalog: &Catalog) -> Self;
}

/// The current view and the catalog it was built from.
#[derive(Debug)]
pub struct Built<V> {
    /// The catalog the view describes; use it, not the engine's newer one, to stay consistent.
    pub catalog: Arc<Catalog>,
    /// The view itself.
    pub view: V,
}

/// Holds the view of the engine's current catalog, rebuilding it lazily after a reload.
pub struct Cached<V> {
    current: ArcSwap<Built<V>>,
    build: Box<dyn Fn(&Catalog) -> V + Send + Sync>,
}

impl<V: fmt::Debug> fmt::Debug for Cached<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cached")
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

impl<V: View + 'static> Cached<V> {
    /// Builds the view of the engine's catalog now.
    pub fn new(engine: &Engine) -> Self {
        Self::with_builder(engine, V::build)
    }
}

impl<V> Cached<V> {
    /// Builds a view that needs more than the catalog (configuration, say) with `build`, now
    /// and after every reload. WoA's document is one: it carries the public URL.
    pub fn with_builder(engine: &Engine, build: impl Fn(&Catalog) -> V + Send + Sync + 'static) -> Self {
        let catalog = engine.catalog();
        Self {
            current: ArcSwap::from_pointee(Built {
                view: build(&catalog),
                catalog,
            }),
            build: Box::new(build),
        }
    }

    /// The view of the engine's current catalog.
    pub fn get(&self, engine: &Engine) -> Arc<Built<V>> {
        let built = self.current.load_full();
        let catalog = engine.catalog();
        if Arc::ptr_eq(&built.catalog, &catalog) {
            return built;
        }
        let fresh = Arc::new(Built {
            view: (self.build)(&catalog),
            catalog,
        });
        self.current.store(Arc::clone(&fresh));
        fresh
    }
}
