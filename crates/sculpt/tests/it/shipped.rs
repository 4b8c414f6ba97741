//! Every catalog directory under `examples/` loads with no errors and no warnings, with every
//! backend kind the `toolhost` binary registers (`native` and `http`), and ships the versions
//! lock `serve` would write for it. This test lives here rather than in core because core does
//! not know the `http` kind.

use std::path::{Path, PathBuf};

use toolhost_core::Catalog;
use toolhost_core::catalog::Source;
use toolhost_core::catalog::lock::VersionLock;

use crate::support::{loader, render};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

/// Every directory under `root` (itself included) that directly holds a catalog file: YAML or
/// JSON with a top-level `toolkits:` or `resources:` (`examples/walkthrough` holds an API
/// description and an overlay, which `import` turns into one).
fn catalog_dirs(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut has_catalog = false;
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
            if path.is_dir() {
                stack.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                has_catalog |= text.lines().any(|l| {
                    ["toolkits:", "resources:", "\"toolkits\"", "{\"toolkits\""]
                        .iter()
                        .any(|k| l.starts_with(k))
                });
            }
        }
        if has_catalog {
            found.push(dir);
        }
    }
    found.sort();
    found
}

/// The catalog in `dir`, loaded as `toolhost check` loads it: the server's secrets are not
/// known here.
fn load(dir: &Path) -> Catalog {
    let loader = loader(&[]).with_backend(
        toolhost_sculpt::KIND,
        std::sync::Arc::new(toolhost_sculpt::Factory::for_checking().unwrap()),
    );
    let sources = Source::read_dir(dir).unwrap_or_else(|p| panic!("{}:\n{}", dir.display(), render(&p)));
    loader
        .load(&sources)
        .unwrap_or_else(|p| panic!("{} does not load:\n{}", dir.display(), render(&p)))
}

#[test]
fn every_example_catalog_loads_without_errors_or_warnings() {
    let dirs = catalog_dirs(Path::new(EXAMPLES));
    for expected in ["catalog", "weather"] {
        assert!(
            dirs.iter().any(|d| d.ends_with(expected)),
            "examples/{expected} is found: {dirs:?}"
        );
    }
    for dir in dirs {
        let catalog = load(&dir);
        assert!(
            catalog.warnings().is_empty(),
            "{} loads with warnings:\n{}",
            dir.display(),
            render(catalog.warnings())
        );
        assert!(!catalog.tools().is_empty(), "{} has no served tools", dir.display());
    }
}

/// Issue #37.4: running an example (`toolhost serve --catalog examples/weather`, as the README
/// says) leaves the checkout clean. `serve` writes the catalog's `versions.lock` whenever the
/// lock lacks something it records (a version, or the current version of a tool), so each
/// example ships the lock byte for byte as `serve` (and `toolhost check --lock`) writes it.
#[test]
fn every_example_ships_the_versions_lock_serve_would_write() {
    for dir in catalog_dirs(Path::new(EXAMPLES)) {
        let catalog = load(&dir);
        let path = VersionLock::path_for(&dir);
        let shipped = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `toolhost check --lock` on the example and commit it",
                path.display()
            )
        });
        let lock = VersionLock::read(&path).unwrap().unwrap();
        let written = lock.extended(&catalog).to_text();
        assert_eq!(
            shipped,
            written,
            "{} is not what `serve` writes for the example; run `toolhost check --lock {}` and commit it",
            path.display(),
            dir.display()
        );
    }
}
