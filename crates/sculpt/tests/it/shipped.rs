//! Every catalog directory under `examples/` loads with no errors and no warnings, with every
//! backend kind the `toolhost` binary registers (`native` and `http`). This test lives here
//! rather than in core because core does not know the `http` kind.

use std::path::{Path, PathBuf};

use toolhost_core::catalog::Source;

use crate::support::{loader, render};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

/// Every directory under `root` (itself included) that directly holds a catalog file.
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
                has_catalog = true;
            }
        }
        if has_catalog {
            found.push(dir);
        }
    }
    found.sort();
    found
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
    // The server's secrets are not known here, exactly as for `toolhost check`.
    let loader = loader(&[]).with_backend(
        toolhost_sculpt::KIND,
        std::sync::Arc::new(toolhost_sculpt::Factory::for_checking().unwrap()),
    );
    for dir in dirs {
        let sources = Source::read_dir(&dir).unwrap_or_else(|p| panic!("{}:\n{}", dir.display(), render(&p)));
        let catalog = loader
            .load(&sources)
            .unwrap_or_else(|p| panic!("{} does not load:\n{}", dir.display(), render(&p)));
        assert!(
            catalog.warnings().is_empty(),
            "{} loads with warnings:\n{}",
            dir.display(),
            render(catalog.warnings())
        );
        assert!(!catalog.tools().is_empty(), "{} has no served tools", dir.display());
    }
}
