//! Per-catalog renderings that adapters build once and reuse until the catalog changes.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use toolhost_core::{Catalog, Engine};

use crate::config::Config;

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
        let catalog = engine.catalog();
        Self {
            current: ArcSwapOption::from_pointee(Built {
                view: V::build(&catalog),
                catalog,
            }),
            build: Box::new(V::build),
        }
    }

    /// Builds the view when it is first asked for (see [`Cached::lazy`]).
    pub fn on_demand() -> Self {
        Self::lazy(V::build)
    }
}

impl<V> Cached<V> {
    /// A view built with `build` (which may need more than the catalog: configuration, say)
    /// when it is first asked for: for a view few requests need that costs much on a large
    /// catalog (the OpenAPI and WoA documents).
    pub fn lazy(build: impl Fn(&Catalog) -> V + Send + Sync + 'static) -> Self {
        Self {
            current: ArcSwapOption::empty(),
            build: Box::new(build),
        }
    }

    /// Drops the view, so the catalog it holds is let go; the next `get` builds it again.
    /// Says whether there was one.
    pub fn clear(&self) -> bool {
        self.current.swap(None).is_some()
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

/// A view the state keeps for an adapter ([`Views`]): how its cache is made.
pub trait Kept: Send + Sync + Sized + 'static {
    /// Whether a reload renders the view again at once when it had been asked for (rather than
    /// on its next request): so the next request does not pay for it.
    const RENDERED_ON_RELOAD: bool = true;

    /// The cache that keeps the view for a state configured with `config`.
    fn cache(config: &Config) -> Cached<Self>;
}

/// Every adapter's view of the engine's catalog, one per type: the state holds them without
/// naming the adapters that define them (issue #39.7). A view is made on its first request; a
/// large catalog served over one protocol holds no renderings for the others (issue #42.1).
#[derive(Default)]
pub struct Views {
    /// Few (one per adapter), so a scan beats a map; swapped whole when one is added.
    kept: ArcSwap<Vec<(TypeId, Arc<dyn Slot>)>>,
}

impl fmt::Debug for Views {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Views").field("kept", &self.kept.load().len()).finish()
    }
}

/// A [`Cached`] of any view, as [`Views`] holds it.
trait Slot: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    /// Drops the view; says whether there was one.
    fn clear(&self) -> bool;
    /// Renders the view of the engine's catalog.
    fn render(&self, engine: &Engine);
    /// [`Kept::RENDERED_ON_RELOAD`].
    fn rendered_on_reload(&self) -> bool;
}

impl<V: Kept> Slot for Cached<V> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clear(&self) -> bool {
        Cached::clear(self)
    }

    fn render(&self, engine: &Engine) {
        self.get(engine);
    }

    fn rendered_on_reload(&self) -> bool {
        V::RENDERED_ON_RELOAD
    }
}

impl Views {
    /// The view `V` of the engine's current catalog, its cache made with `config` the first
    /// time.
    pub fn get<V: Kept>(&self, engine: &Engine, config: &Config) -> Arc<Built<V>> {
        let id = TypeId::of::<V>();
        let find = |kept: &[(TypeId, Arc<dyn Slot>)]| kept.iter().find(|(k, _)| *k == id).map(|(_, s)| Arc::clone(s));
        let slot = find(&self.kept.load()).unwrap_or_else(|| {
            let made: Arc<dyn Slot> = Arc::new(V::cache(config));
            // Two first requests may race: the one added first is kept by both.
            let mut kept = None;
            self.kept.rcu(|now| {
                kept = find(now);
                let mut next = Vec::clone(now);
                if kept.is_none() {
                    next.push((id, Arc::clone(&made)));
                }
                next
            });
            kept.unwrap_or(made)
        });
        match slot.as_any().downcast_ref::<Cached<V>>() {
            Some(cached) => cached.get(engine),
            // Never: the slot kept under `TypeId::of::<V>()` is a `Cached<V>`. Were it not, the
            // view is rendered uncached rather than the request failing.
            None => V::cache(config).get(engine),
        }
    }

    /// After a reload, drops every view of the previous catalog first, so that it is let go at
    /// once (with it, the upstreams only it used, stdio servers included) and a large catalog is
    /// not held twice with its renderings (issue #42.1); then renders again those that had been
    /// asked for and are [`Kept::RENDERED_ON_RELOAD`].
    pub fn renew(&self, engine: &Engine) {
        let kept = self.kept.load();
        let used: Vec<bool> = kept.iter().map(|(_, slot)| slot.clear()).collect();
        for ((_, slot), used) in kept.iter().zip(used) {
            if used && slot.rendered_on_reload() {
                slot.render(engine);
            }
        }
    }
}

/// A few renderings of a view for callers who see only part of the catalog, by what they see
/// (`K`: their scope set, the tools listed to them). Without it every such request rendered
/// the whole document again: on 10,000 tools, a large part of a second of CPU per request, for
/// anyone holding a key (issue #18). Bounded: at most [`Restricted::MAX`] renderings, and no
/// more bytes in all than the `budget` given (the full rendering's, at least 1 MB); the oldest
/// go first. Kept inside the full rendering, so they go with its catalog.
#[derive(Debug)]
pub struct Restricted<K, V> {
    entries: std::sync::Mutex<Vec<(K, Arc<V>)>>,
}

impl<K, V> Default for Restricted<K, V> {
    fn default() -> Self {
        Self {
            entries: std::sync::Mutex::default(),
        }
    }
}

impl<K: PartialEq, V> Restricted<K, V> {
    /// How many renderings are kept.
    pub const MAX: usize = 8;

    /// The rendering for `key`, kept or made by `render` (outside the lock: a render takes long
    /// on a large catalog, and other callers need not wait for it). `size` is a rendering's
    /// size in bytes.
    pub fn get(&self, key: K, budget: usize, size: impl Fn(&V) -> usize, render: impl FnOnce() -> V) -> Arc<V> {
        let lock = || self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, kept)) = lock().iter().find(|(k, _)| *k == key) {
            return Arc::clone(kept);
        }
        let fresh = Arc::new(render());
        let mut entries = lock();
        entries.retain(|(k, _)| *k != key);
        entries.push((key, Arc::clone(&fresh)));
        let budget = budget.max(1 << 20);
        while entries.len() > Self::MAX
            || (entries.len() > 1 && entries.iter().map(|(_, v)| size(v)).sum::<usize>() > budget)
        {
            entries.remove(0);
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::Restricted;

    #[test]
    fn a_key_is_rendered_once_and_the_renderings_stay_bounded() {
        let cache: Restricted<String, Vec<u8>> = Restricted::default();
        let renders = AtomicUsize::new(0);
        let get = |key: &str, bytes: usize| {
            cache.get(key.to_owned(), 10 << 20, Vec::len, || {
                renders.fetch_add(1, Ordering::SeqCst);
                vec![0; bytes]
            })
        };
        get("a", 10);
        get("a", 10);
        assert_eq!(renders.load(Ordering::SeqCst), 1, "an equal key is a hit");
        for i in 0..Restricted::<String, Vec<u8>>::MAX {
            get(&format!("s{i}"), 10);
        }
        assert_eq!(cache.entries.lock().unwrap().len(), Restricted::<String, Vec<u8>>::MAX);
        let before = renders.load(Ordering::SeqCst);
        get("a", 10);
        assert_eq!(renders.load(Ordering::SeqCst), before + 1, "the oldest went first");
        // Two renderings of 6 MB do not both fit a 10 MB budget: the older goes.
        get("big1", 6 << 20);
        get("big2", 6 << 20);
        let kept = cache.entries.lock().unwrap();
        let total: usize = kept.iter().map(|(_, v)| v.len()).sum();
        assert!(total <= 10 << 20, "{total} bytes kept");
        assert_eq!(kept.last().map(|(k, _)| k.as_str()), Some("big2"));
    }
}
