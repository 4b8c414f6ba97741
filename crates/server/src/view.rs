//! Per-catalog renderings that adapters build once and reuse until the catalog changes.

use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
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

/// Holds the view of the engine's current catalog, rebuilding it lazily after a reload (and,
/// for a view made with [`Cached::lazy`], building it only when first asked for).
pub struct Cached<V> {
    current: ArcSwapOption<Built<V>>,
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
            current: ArcSwapOption::from_pointee(Built {
                view: build(&catalog),
                catalog,
            }),
            build: Box::new(build),
        }
    }

    /// Like [`Cached::with_builder`], building the view only when it is first asked for: for a
    /// view few requests need that costs much on a large catalog (the OpenAPI document).
    pub fn lazy(build: impl Fn(&Catalog) -> V + Send + Sync + 'static) -> Self {
        Self {
            current: ArcSwapOption::empty(),
            build: Box::new(build),
        }
    }

    /// Drops the view, so the catalog it holds is let go; the next `get` builds it again.
    pub fn clear(&self) {
        self.current.store(None);
    }

    /// The view of the engine's current catalog.
    pub fn get(&self, engine: &Engine) -> Arc<Built<V>> {
        let catalog = engine.catalog();
        if let Some(built) = self.current.load_full()
            && Arc::ptr_eq(&built.catalog, &catalog)
        {
            return built;
        }
        let fresh = Arc::new(Built {
            view: (self.build)(&catalog),
            catalog,
        });
        self.current.store(Some(Arc::clone(&fresh)));
        fresh
    }
}
