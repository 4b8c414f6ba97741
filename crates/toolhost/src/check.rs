//! `toolhost check`: a catalog checked as `serve` would load it, every problem printed, and with
//! `--lock` its versions published to `versions.lock`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use toolhost_core::catalog::Loader;
use toolhost_core::catalog::lock::VersionLock;

use crate::settings::ServeArgs;

/// Runs `toolhost check` to its exit status.
pub fn run(path: Option<PathBuf>, config: Option<PathBuf>, lock: bool, agents: Option<PathBuf>) -> ExitCode {
    let fail = |message: String| {
        eprintln!("toolhost: {message}");
        ExitCode::FAILURE
    };
    // Without a config, the factories note the secret names they could not check.
    let mut unchecked: Option<(Arc<toolhost_sculpt::Factory>, Arc<toolhost_upstream::Factory>)> = None;
    let mut agents = agents;
    let (loader, path, state_dir) = match config {
        // The same loader as `serve --config`: the secret names, tag scopes and timeouts the
        // server would use, so `check` finds what `serve` would refuse.
        Some(config) => {
            let settings = match ServeArgs::for_check(config, path).resolve() {
                Ok(settings) => settings,
                Err(e) => return fail(format!("{e:#}")),
            };
            let Some(path) = settings.catalog.clone() else {
                return fail("no catalog to check: give its path, or set `catalog` in the config file".to_owned());
            };
            agents = agents.or(settings.agents.clone());
            match crate::make_loader(&settings) {
                Ok(loader) => (loader, path, settings.state_dir),
                Err(e) => return fail(format!("{e:#}")),
            }
        }
        None => {
            let Some(path) = path else {
                return fail("give the catalog to check: a directory or a file (or --config FILE)".to_owned());
            };
            // No server config: `{{secret.NAME}}` cannot be checked against `[secrets]`.
            match toolhost_sculpt::Factory::for_checking() {
                Ok(sculpt) => {
                    let (sculpt, upstream) = (Arc::new(sculpt), Arc::new(toolhost_upstream::Factory::default()));
                    unchecked = Some((Arc::clone(&sculpt), Arc::clone(&upstream)));
                    (
                        Loader::default()
                            .with_backend(toolhost_sculpt::KIND, sculpt)
                            .with_backend(toolhost_upstream::KIND, upstream),
                        path,
                        None,
                    )
                }
                Err(e) => return fail(e.to_string()),
            }
        }
    };
    match crate::load(Some(&path), agents.as_deref(), state_dir.as_deref(), &loader) {
        Ok((catalog, lock_warnings)) => {
            let mut warnings = crate::check_report::collapse(catalog.warnings());
            warnings.extend(crate::check_report::alike(&catalog));
            // `serve` refuses a catalog reading secrets its config does not give: without one,
            // say which (issue #32.8), and nothing when it reads none.
            if let Some((sculpt, upstream)) = &unchecked {
                let mut names = sculpt.unchecked_secrets();
                names.extend(upstream.unchecked_secrets());
                names.sort();
                names.dedup();
                if !names.is_empty() {
                    warnings.push(format!(
                        "warning: {}: the catalog reads the server secrets {}, and `serve` refuses it unless its config's [secrets] gives them; pass --config FILE to check them against it",
                        path.display(),
                        names.join(", ")
                    ));
                }
            }
            for warning in &warnings {
                eprintln!("{warning}");
            }
            let mut count = warnings.len();
            if lock {
                let file = VersionLock::path_for(&path);
                // A lock that cannot be read (an unknown format, say) is never rewritten.
                let current = match VersionLock::read(&file) {
                    Ok(current) => current.unwrap_or_default(),
                    Err(e) => return fail(e),
                };
                let extended = current.extended(&catalog);
                if let Err(e) = crate::versions::write(&file, &extended.to_text()) {
                    return fail(format!("failed to write {}: {e}", file.display()));
                }
                let added = extended.len() - current.len();
                eprintln!(
                    "locked {added} new versions in {}; commit it with the catalog",
                    file.display()
                );
            } else {
                for warning in &lock_warnings {
                    eprintln!("{warning}");
                }
                count += lock_warnings.len();
                // What `serve --dev` shows as unpublished, said once (issue #41.3).
                // Without a lock at all, the warning above says so already.
                if let Ok(Some(locked)) = VersionLock::read(&VersionLock::path_for(&path)) {
                    let unpublished = locked.unpublished(&catalog);
                    if !unpublished.is_empty() {
                        eprintln!(
                            "note: unpublished changes in {} tools: {}; `toolhost check --lock {}` publishes them",
                            unpublished.len(),
                            unpublished.join(", "),
                            path.display()
                        );
                    }
                }
            }
            // Which protocols reach a tool that not all four do (issues #14, #38.2), once each.
            for tool in catalog.tools() {
                if tool.needs_call_context() {
                    eprintln!(
                        "note: tool `{}` is served over OTC only: it needs secrets or tokens only OTC's `context` carries",
                        tool.name
                    );
                } else {
                    for note in crate::check_report::nact_notes(tool) {
                        eprintln!("{note}");
                    }
                }
            }
            let versions: usize = catalog.tools().iter().map(|t| t.versions.len()).sum();
            // Every warning printed above is counted (issue #31.6).
            eprintln!(
                "ok: {} tools, {versions} versions, {} agents, {} warnings",
                catalog.tools().len(),
                catalog.agents().len(),
                count
            );
            ExitCode::SUCCESS
        }
        Err(problems) => {
            crate::report(&problems);
            ExitCode::FAILURE
        }
    }
}
