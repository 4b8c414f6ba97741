//! The versions a server has served, recorded so that none moves across a restart (N-ACT §6.1,
//! issue #31.1), without relying on the operator to run `toolhost check --lock`.
//!
//! Two files may hold version signatures (core's `catalog::lock::VersionLock`):
//!
//! - the **committed** lock, `versions.lock` beside the catalog (`toolhost check --lock` writes
//!   it; it goes into version control and review with the catalog);
//! - the **record** `serve` keeps: the same file, or `STATE_DIR/versions.lock` when a state
//!   directory is given (`--state-dir`, `state_dir`), for catalogs mounted read-only.
//!
//! `serve` (at start and after each reload it accepts) adds every version it serves that the
//! record lacks, and says so. Every load checks the catalog against both: a version changed in
//! place, removed (retire it with `retired: true` instead) or slipped in before a recorded one is
//! an error, so an edit refused by a reload is refused by a restart too. When the record cannot
//! be written and the committed lock does not already hold every version, `serve` refuses to
//! start rather than serve versions nothing will hold to.

use std::path::{Path, PathBuf};

use toolhost_core::catalog::Place;
use toolhost_core::catalog::lock::{FILE_NAME, VersionLock};
use toolhost_core::{Catalog, Problem, Severity};

/// Where a catalog's version signatures are kept.
#[derive(Debug, Clone)]
pub struct Record {
    /// `versions.lock` beside the catalog.
    committed: PathBuf,
    /// The lock `serve` writes: `committed`, or the one in the state directory.
    kept: PathBuf,
}

fn error(file: &Path, message: String) -> Problem {
    Problem {
        severity: Severity::Error,
        place: Place {
            file: file.display().to_string(),
            ..Place::default()
        },
        message,
    }
}

impl Record {
    /// The record of the catalog at `catalog` (a directory or one file), kept in `state_dir`
    /// when one is given.
    pub fn new(catalog: &Path, state_dir: Option<&Path>) -> Self {
        let committed = VersionLock::path_for(catalog);
        let kept = state_dir.map_or_else(|| committed.clone(), |dir| dir.join(FILE_NAME));
        Self { committed, kept }
    }

    /// The locks there are: the committed one and, when elsewhere, the kept one.
    fn locks(&self) -> Result<Vec<(&Path, VersionLock)>, Vec<Problem>> {
        let mut locks = Vec::new();
        let mut paths = vec![self.committed.as_path()];
        if self.kept != self.committed {
            paths.push(&self.kept);
        }
        for path in paths {
            match VersionLock::read(path) {
                Ok(Some(lock)) => locks.push((path, lock)),
                Ok(None) => {}
                Err(message) => return Err(vec![error(path, message)]),
            }
        }
        Ok(locks)
    }

    /// Checks `catalog` against every lock: the errors (a version changed in place, removed or
    /// renumbered), else the warnings (versions no lock holds yet, or no lock at all).
    pub fn verify(&self, catalog: &Catalog) -> Result<Vec<Problem>, Vec<Problem>> {
        let locks = self.locks()?;
        if locks.is_empty() {
            let versions: usize = catalog.tools().iter().map(|t| t.versions.len()).sum();
            let warning = Problem {
                severity: Severity::Warning,
                place: Place {
                    file: self.committed.display().to_string(),
                    ..Place::default()
                },
                message: format!(
                    "no versions lock yet, so none of the catalog's {versions} versions is locked: `toolhost serve` records them in {} when it starts (not with --dev); run `toolhost check --lock` and commit the file so that CI catches a version changed in place",
                    self.kept.display()
                ),
            };
            return Ok(vec![warning]);
        }
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        for (i, (path, lock)) in locks.iter().enumerate() {
            let (e, w): (Vec<Problem>, Vec<Problem>) = lock
                .verify(catalog, &path.display().to_string())
                .into_iter()
                .partition(|p| p.severity == Severity::Error);
            errors.extend(e);
            // The first lock's warnings: the committed one's when there is one (what CI locks).
            if i == 0 {
                warnings = w;
            }
        }
        if errors.is_empty() { Ok(warnings) } else { Err(errors) }
    }

    /// Adds the versions of `catalog` the record does not hold yet (after [`Record::verify`]
    /// passed). `Ok(None)` when there was nothing to add, else where they were written and how
    /// many.
    pub fn record(&self, catalog: &Catalog) -> Result<Option<(PathBuf, usize)>, Vec<Problem>> {
        let kept = VersionLock::read(&self.kept)
            .map_err(|e| vec![error(&self.kept, e)])?
            .unwrap_or_default();
        let committed = if self.kept == self.committed {
            None
        } else {
            VersionLock::read(&self.committed).map_err(|e| vec![error(&self.committed, e)])?
        };
        let extended = kept.extended(catalog);
        if extended == kept {
            return Ok(None);
        }
        let added = extended.len() - kept.len();
        // Every version is already in a lock (only the current versions moved on): a record
        // that cannot be written loses nothing a restart needs to refuse an edit.
        let held = added == 0 || committed.as_ref().is_some_and(|c| c.extended(catalog).len() == c.len());
        if let Err(e) = write(&self.kept, &extended.to_text()) {
            if held {
                tracing::warn!(
                    file = %self.kept.display(),
                    error = %e,
                    "could not update the versions record: every version is locked, but a restart will not know which versions became current since, nor which toolIds and OTC names were served (--state-dir gives it a writable place)"
                );
                return Ok(None);
            }
            return Err(vec![error(
                &self.kept,
                format!(
                    "cannot record the {added} versions to serve that no lock holds yet: {e}. Without a record a restart could serve an edited version under its old number (N-ACT §6.1), so they are not served. Give a writable directory kept across restarts with --state-dir (`state_dir`), or run `toolhost check --lock` and ship versions.lock with the catalog"
                ),
            )]);
        }
        Ok(Some((self.kept.clone(), added)))
    }
}

/// Writes `text` to `path` whole: a temporary file beside it, renamed over it.
pub(crate) fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let temporary = path.with_extension(format!("lock.{}.tmp", std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Logs, in design mode (`serve --dev`), which tools have changes the lock at `lock` does not
/// hold, and how to publish them (issue #41.3).
pub fn log_unpublished(lock: Option<&Path>, catalog: &Catalog) {
    let Some(lock) = lock else { return };
    let locked = match VersionLock::read(lock) {
        Ok(locked) => locked.unwrap_or_default(),
        Err(e) => {
            tracing::warn!("design mode: {e}");
            return;
        }
    };
    let unpublished = locked.unpublished(catalog);
    if unpublished.is_empty() {
        tracing::info!(lock = %lock.display(), "design mode: nothing is recorded; every tool is published");
    } else {
        tracing::info!(
            lock = %lock.display(),
            tools = %unpublished.join(", "),
            "design mode: nothing is recorded; these tools have unpublished changes (`toolhost check --lock` publishes them)"
        );
    }
}
