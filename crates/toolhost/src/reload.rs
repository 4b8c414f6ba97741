//! Hot reload: the catalog directory and the config file are polled for changes, and SIGHUP
//! reloads both at once. A new catalog is validated fully before it is swapped in; an invalid
//! one is logged and refused while the old one keeps serving (`State::reload`).
//!
//! A changed config file is resolved again with the same flags and environment. Its API keys,
//! JWT issuers, per-tool concurrency caps, rate, `[secrets]`, tag scopes and call timeout take
//! effect at once (the last three through a new catalog loader, so the catalog is reloaded
//! too); a setting that only a restart changes (the listen address, say) is named in a warning.
//! A config file that does not resolve is refused whole, and the running settings stay; so is
//! one that would turn authentication off or drop every API key or JWT issuer (a truncated
//! file reads that way). Changed files are read once they stop changing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use toolhost_core::catalog::Loader;

use crate::settings::{ServeArgs, Settings};

/// What is watched and how often.
#[derive(Debug)]
pub struct Watch {
    /// The catalog directory or file; `None`: the bundled catalog (only the config is watched,
    /// and the bundled catalog is loaded again when the config's loader settings change).
    pub catalog: Option<PathBuf>,
    /// The agents folder given (`--agents`); `None`: the catalog's own `agents/`.
    pub agents: Option<PathBuf>,
    /// Where the served versions are recorded when not beside the catalog (`--state-dir`).
    pub state_dir: Option<PathBuf>,
    /// Design mode (`serve --dev`): the lock the catalog is compared with; nothing is recorded
    /// and a version may change in place.
    pub design: Option<PathBuf>,
    /// How often to look for changes; `None` means only on SIGHUP.
    pub interval: Option<Duration>,
    /// The config file and how to resolve it again, if the server was started with one.
    pub config: Option<Reconfigure>,
}

/// How a changed config file is read again.
#[derive(Debug)]
pub struct Reconfigure {
    /// The config file.
    pub path: PathBuf,
    /// The flags (and environment) the server started with; they still win over the file.
    pub args: ServeArgs,
    /// The settings running now, to name what only a restart changes.
    pub running: Settings,
    /// Builds the catalog loader of a set of settings.
    pub make_loader: fn(&Settings) -> anyhow::Result<Loader>,
}

type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// How long changed files must stay the same before they are read, and how many times that is
/// waited for.
const SETTLE: Duration = Duration::from_millis(250);
const SETTLE_TRIES: usize = 12;

/// Names, sizes and modification times: enough to notice an edit, a new file or a removal.
fn fingerprint(paths: impl IntoIterator<Item = PathBuf>) -> Fingerprint {
    let mut entries: Vec<_> = paths.into_iter().collect();
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

/// The catalog's files, and its agents' (the catalog's `agents/` folder, or `agents`). The
/// versions lock is not part of the catalog: `serve` writes it (crate::versions).
fn catalog_files(dir: Option<&Path>, agents: Option<&Path>) -> Fingerprint {
    let lock = std::ffi::OsStr::new(toolhost_core::catalog::lock::FILE_NAME);
    let listed = |dir: &Path| {
        std::fs::read_dir(dir)
            .map(|dir| {
                dir.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.file_name() != Some(lock) && p.extension() != Some(std::ffi::OsStr::new("tmp")))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let mut paths = Vec::new();
    match dir {
        Some(dir) if dir.is_file() => paths.push(dir.to_path_buf()),
        Some(dir) => paths.extend(listed(dir)),
        None => {}
    }
    match (agents, dir) {
        (Some(agents), _) => paths.extend(listed(agents)),
        (None, Some(dir)) if dir.is_dir() => paths.extend(listed(&dir.join("agents"))),
        (None, _) => {}
    }
    fingerprint(paths)
}

/// What the watcher remembers between looks: the last fingerprints and the loader in use.
struct Watcher {
    watch: Watch,
    catalog: Fingerprint,
    config: Fingerprint,
    loader: Arc<Loader>,
}

fn config_files(watch: &Watch) -> Fingerprint {
    fingerprint(watch.config.iter().map(|c| c.path.clone()))
}

/// What the files look like now: taken before the catalog and config are first read, so that a
/// change made while the server starts is seen by the first look, not missed for good.
#[derive(Debug)]
pub struct Seen {
    catalog: Fingerprint,
    config: Fingerprint,
}

impl Seen {
    /// The fingerprints of `catalog` and `config` now.
    pub fn now(catalog: Option<&Path>, agents: Option<&Path>, config: Option<&Path>) -> Self {
        Self {
            catalog: catalog_files(catalog, agents),
            config: fingerprint(config.map(Path::to_path_buf)),
        }
    }
}

impl Watcher {
    /// One look: reads the files and, when something changed (or `forced`), applies the config
    /// and reloads the catalog. Blocking work (directory scans, config and secret files, YAML
    /// parsing): run it off the async workers.
    fn look(&mut self, forced: bool, state: &toolhost_server::State) {
        let now = || {
            (
                catalog_files(self.watch.catalog.as_deref(), self.watch.agents.as_deref()),
                config_files(&self.watch),
            )
        };
        let (mut catalog_now, mut config_now) = now();
        if !forced && config_now == self.config && catalog_now == self.catalog {
            return;
        }
        // An editor or a deploy may still be writing: read only once the files have stayed
        // the same for a moment (at most a few seconds), not half-way through (issue #21.7).
        for _ in 0..SETTLE_TRIES {
            std::thread::sleep(SETTLE);
            let again = now();
            if again == (catalog_now.clone(), config_now.clone()) {
                break;
            }
            (catalog_now, config_now) = again;
        }
        let config_changed = forced || config_now != self.config;
        (self.catalog, self.config) = (catalog_now, config_now);
        tracing::info!(
            reason = if forced { "SIGHUP" } else { "files changed" },
            config = config_changed && self.watch.config.is_some(),
            "reloading"
        );
        if config_changed && let Some(reconfigure) = &self.watch.config {
            match reconfigured(reconfigure, state) {
                Some(loader) => self.loader = loader,
                // The catalog is not loaded with the old settings either: its change may need
                // the new ones (a new secret, say); the next change or SIGHUP tries again.
                None => return,
            }
        }
        let (catalog, state_dir) = (self.watch.catalog.as_deref(), self.watch.state_dir.as_deref());
        // What the running catalog serves is compared first, since that names what changed
        // (`State::reload` does it again); then the record, which also holds versions of tools
        // the running catalog no longer has.
        let loaded = crate::load_catalog(catalog, self.watch.agents.as_deref(), &self.loader).and_then(|new| {
            if self.watch.design.is_some() {
                crate::versions::log_unpublished(self.watch.design.as_deref(), &new);
                return Ok(new);
            }
            let changed = toolhost_core::catalog::lock::changed(&state.engine.catalog(), &new);
            if !changed.is_empty() {
                return Err(changed);
            }
            let Some(dir) = catalog else {
                return Ok(new);
            };
            let record = crate::versions::Record::new(dir, state_dir);
            for warning in record.verify(&new)? {
                tracing::warn!("{warning}");
            }
            // The versions a reload adds are recorded before they are served, as at start: a
            // version the record cannot hold is not served (a restart would then refuse the
            // catalog, or serve an edit of it under the same number; issue #37.14).
            if let Some((file, added)) = record.record(&new)? {
                tracing::info!(file = %file.display(), added, "recorded the new served versions");
            }
            Ok(new)
        });
        state.reload(loaded);
    }
}

/// Watches until the process ends, reloading `state`'s config and catalog on every change.
pub async fn run(watch: Watch, seen: Seen, loader: Arc<Loader>, state: Arc<toolhost_server::State>) {
    let interval = watch.interval;
    let mut watcher = Watcher {
        catalog: seen.catalog,
        config: seen.config,
        watch,
        loader,
    };
    #[cfg(unix)]
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    loop {
        let poll = async {
            match interval {
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
        let state = Arc::clone(&state);
        watcher = match tokio::task::spawn_blocking(move || {
            watcher.look(forced, &state);
            watcher
        })
        .await
        {
            Ok(watcher) => watcher,
            Err(e) => {
                tracing::error!("the reload watcher failed and stops; restart to reload again: {e}");
                return;
            }
        };
    }
}

/// Resolves the config file again and applies it; the new catalog loader on success.
fn reconfigured(reconfigure: &Reconfigure, state: &toolhost_server::State) -> Option<Arc<Loader>> {
    let path = reconfigure.path.display();
    let new = reconfigure
        .args
        .clone()
        .resolve()
        .and_then(|new| Ok(((reconfigure.make_loader)(&new)?, new)));
    let (loader, new) = match new {
        Ok(done) => done,
        Err(e) => {
            state.record_reload_error(format!("config file {path}: {e:#}"));
            return None;
        }
    };
    // A file caught half-written, or emptied by an editor, reads as "no [auth]": a reload never
    // switches authentication off, nor drops every API key; that takes a restart (issue #21.7).
    let (old_auth, new_auth) = (state.auth(), &new.server.auth);
    let refusal = if old_auth.enabled() && !new_auth.enabled() {
        Some("it would turn authentication off")
    } else if old_auth.has_api_keys() && !new_auth.has_api_keys() {
        Some("it would remove every API key")
    } else if old_auth.has_issuers() && !new_auth.has_issuers() {
        Some("it would remove every JWT issuer")
    } else {
        None
    };
    if let Some(why) = refusal {
        state.record_reload_error(format!(
            "config file {path} refused: {why}; if that is meant, restart the server with the new file"
        ));
        return None;
    }
    state.apply(&new.server);
    let restart = reconfigure.running.restart_needed_for(&new);
    if !restart.is_empty() {
        tracing::warn!(
            "config file {path} changed settings that take effect on restart: {}",
            restart.join(", ")
        );
    }
    tracing::info!("config file {path} applied");
    Some(Arc::new(loader))
}
