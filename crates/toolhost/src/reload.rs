//! Hot reload: the catalog directory (and the config file) are polled for changes, and SIGHUP
//! reloads at once. A new catalog is validated fully before it is swapped in; an invalid one is
//! logged and refused while the old one keeps serving (`State::reload`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use toolhost_core::catalog::{Loader, Source};

/// What is watched and how often.
#[derive(Debug)]
pub struct Watch {
    /// The catalog directory.
    pub catalog: PathBuf,
    /// The config file, if any: a change to it reloads the catalog too.
    pub config: Option<PathBuf>,
    /// How often to look for changes; `None` means only on SIGHUP.
    pub interval: Option<Duration>,
}

/// Names, sizes and modification times: enough to notice an edit, a new file or a removal.
fn fingerprint(watch: &Watch) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut entries: Vec<_> = std::fs::read_dir(&watch.catalog)
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.extend(watch.config.iter().cloned());
    entries.sort();
    entries
        .into_iter()
        .map(|path| {
            let meta = std::fs::metadata(&path).ok();
            let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
            let modified = meta.and_then(|m| m.modified().ok());
            (path, len, modified)
        })
        .collect()
}

/// Watches until the process ends, reloading `state`'s catalog with `loader` on every change.
pub async fn run(watch: Watch, loader: Arc<Loader>, state: Arc<toolhost_server::State>) {
    let mut last = fingerprint(&watch);
    #[cfg(unix)]
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    loop {
        let poll = async {
            match watch.interval {
                Some(interval) => tokio::time::sleep(interval).await,
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(unix)]
        let signalled = async {
            match hangup.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let signalled = std::future::pending::<()>();
        let forced = tokio::select! {
            () = poll => false,
            () = signalled => true,
        };
        let now = fingerprint(&watch);
        if !forced && now == last {
            continue;
        }
        last = now;
        tracing::info!(
            reason = if forced { "SIGHUP" } else { "files changed" },
            "reloading the catalog"
        );
        let dir = watch.catalog.clone();
        let loader = Arc::clone(&loader);
        // Reading and compiling a large catalog is blocking work; keep it off the async workers.
        let loaded = tokio::task::spawn_blocking(move || load(&dir, &loader)).await;
        match loaded {
            Ok(result) => {
                state.reload(result);
            }
            Err(e) => tracing::error!("catalog reload task failed: {e}"),
        }
    }
}

fn load(dir: &Path, loader: &Loader) -> Result<toolhost_core::Catalog, Vec<toolhost_core::Problem>> {
    loader.load(&Source::read_dir(dir)?)
}
