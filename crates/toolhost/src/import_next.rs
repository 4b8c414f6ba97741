//! What `toolhost import` prints after the catalog (issue #41.4): the operations it would
//! write (`--list`), and `next:` lines that run as printed: the secrets the tools read are
//! named, and a `toolhost.toml` reading each from the environment is written when there is none.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// The config file the `next:` lines use, beside the catalog directory.
const CONFIG: &str = "toolhost.toml";

/// `import openapi --list`: one line per operation on stdout, nothing written.
pub fn list(imported: &toolhost_import::Imported) -> ExitCode {
    let mut out = String::from("TOOL\tOPERATION_ID\tMETHOD\tPATH\tSKIPPED\n");
    for op in &imported.operations {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            op.tool.as_deref().unwrap_or("-"),
            op.operation_id.as_deref().unwrap_or("-"),
            op.method,
            op.path,
            op.skipped.as_deref().unwrap_or("")
        ));
    }
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    let written = imported.operations.iter().filter(|o| o.tool.is_some()).count();
    eprintln!(
        "{written} of {} operations would become tools of toolkit `{}` in {}; nothing was written (leave out --list to write them)",
        imported.operations.len(),
        imported.toolkit,
        imported.file_name()
    );
    ExitCode::SUCCESS
}

/// The `next:` lines after an import into `out`: with secrets, they are named and read from
/// the environment by `toolhost.toml` (written now when missing), and the commands take it.
pub fn say(secrets: &BTreeSet<String>, out: &Path) -> anyhow::Result<()> {
    if secrets.is_empty() {
        let out = out.display();
        eprintln!("next: toolhost serve --dev --catalog {out}   # design: nothing is published while you iterate");
        eprintln!("next: toolhost check --lock {out}   # publish: record the versions, commit the file");
        return Ok(());
    }
    let names: Vec<&str> = secrets.iter().map(String::as_str).collect();
    eprintln!("put these in the server's [secrets]: {}", names.join(", "));
    let path = out.parent().unwrap_or(Path::new("")).join(CONFIG);
    let config = path.display();
    let out = out.display();
    if path.exists() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let missing: Vec<&str> = names.iter().copied().filter(|n| !text.contains(n)).collect();
        if !missing.is_empty() {
            eprintln!(
                "add to {config}'s [secrets] (it exists, so it is left as it is): {}",
                missing
                    .iter()
                    .map(|n| format!("{n} = {{ env = \"{n}\" }}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
    } else {
        let mut text = String::from(
            "# Written by `toolhost import`: the server secrets the imported tools read, each from the\n# environment variable of the same name (see docs/security.md).\n[secrets]\n",
        );
        for name in &names {
            text.push_str(&format!("{name} = {{ env = \"{name}\" }}\n"));
        }
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("failed to write {config}: {e}"))?;
        eprintln!("wrote {config}: its [secrets] read each from the environment variable of the same name");
    }
    // A placeholder that `serve` takes (a secret has at least 8 bytes), to replace.
    let exports: Vec<String> = names.iter().map(|n| format!("{n}=replace-me")).collect();
    eprintln!(
        "next: export {}   # put your values in place of replace-me",
        exports.join(" ")
    );
    eprintln!(
        "next: toolhost serve --dev --catalog {out} --config {config}   # design: nothing is published while you iterate"
    );
    eprintln!("next: toolhost check --lock --config {config} {out}   # publish: record the versions, commit the file");
    Ok(())
}
