//! Issue #41.1: the book documents every flag and config key there is. The flags are read from
//! clap's command tree as the binary prints it (`toolhost --help`, then each subcommand's,
//! recursively), the config keys from the config structs themselves (each refuses an unknown
//! key naming the ones it knows); each must appear on a page of the book, so an undocumented
//! flag or key fails here.

use crate::book::{Page, pages};
use crate::support::{Scratch, run, run_bounded};

/// Every subcommand path (`[]`, `["serve"]`, `["import", "openapi"]`, …) with its help text.
fn command_tree() -> Vec<(Vec<String>, String)> {
    let mut tree = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let out = run(&args);
        assert!(out.status.success(), "toolhost {}", args.join(" "));
        let help = String::from_utf8(out.stdout).unwrap();
        for sub in section(&help, "Commands:") {
            let name = sub.split_whitespace().next().unwrap().to_owned();
            if name != "help" {
                let mut next = path.clone();
                next.push(name);
                todo.push(next);
            }
        }
        tree.push((path, help));
    }
    tree.sort();
    tree
}

/// The entry lines of a help section (`Commands:`, `Options:`, `Arguments:`): those indented by
/// at most six spaces, which start an entry; deeper ones continue its description.
fn section<'a>(help: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in help.lines().filter(|l| !l.trim().is_empty()) {
        if !line.starts_with(' ') {
            inside = line.trim_end() == title;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if inside && indent <= 6 {
            lines.push(line.trim());
        }
    }
    lines
}

/// The long flags of one command's help (`--help` and `--version` aside), with the
/// environment variables they are read from.
fn flags(help: &str) -> (Vec<String>, Vec<String>) {
    let mut flags = Vec::new();
    for entry in section(help, "Options:") {
        let long = entry
            .split([' ', ','])
            .find(|w| w.starts_with("--"))
            .map(|w| w.split(['=', '<', '[']).next().unwrap().to_owned());
        if let Some(long) = long.filter(|l| l != "--help" && l != "--version") {
            flags.push(long);
        }
    }
    let envs = help
        .split("[env: ")
        .skip(1)
        .map(|rest| rest.split(['=', ']']).next().unwrap().to_owned())
        .collect();
    (flags, envs)
}

/// Whether `text` has `word` standing alone (not as part of a longer flag or name).
fn mentions(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let after = text[i + word.len()..].chars().next();
        let before = text[..i].chars().next_back();
        !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[test]
fn every_flag_of_every_command_is_documented_on_its_page() {
    let pages = pages();
    let tree = command_tree();
    // The flags every client command takes are documented once, in client.md's table.
    let client = pages.iter().find(|p| p.name == "docs/client.md").unwrap();
    let shared: Vec<String> = tree
        .iter()
        .find(|(path, _)| path == &["tools"])
        .map(|(_, help)| flags(help).0)
        .unwrap()
        .into_iter()
        .filter(|flag| mentions(&client.text, flag))
        .collect();
    let mut missing = Vec::new();
    let mut counted = 0;
    for (path, help) in tree {
        // The page of its task names the command (`toolhost import openapi`, `eval search`);
        // serve's are in configuration.md, whose table is serve's; the client's shared ones
        // in client.md.
        let named = path.join(" ");
        let home: Vec<&Page> = pages
            .iter()
            .filter(|p| {
                path.is_empty()
                    || mentions(&p.text, &format!("toolhost {named}"))
                    || (path.len() > 1 && mentions(&p.text, &format!("`{named}")))
                    || (path == ["serve"] && p.name == "docs/configuration.md")
            })
            .collect();
        let (flags, envs) = flags(&help);
        for flag in flags {
            counted += 1;
            if !shared.contains(&flag) && !home.iter().any(|p| mentions(&p.text, &flag)) {
                missing.push(format!("toolhost {named} {flag}"));
            }
        }
        for env in envs {
            if !pages.iter().any(|p| mentions(&p.text, &env)) {
                missing.push(format!("toolhost {named}: {env}"));
            }
        }
    }
    assert!(
        counted > 100,
        "only {counted} flags were read: is the help's shape still clap's?"
    );
    assert!(
        missing.is_empty(),
        "flags and environment variables no page of the book documents (on a page naming \
         the command, or docs/configuration.md for serve): {missing:#?}"
    );
}

/// Runs a `toolhost` command on a config file.
type OnFile = dyn Fn(&std::path::Path) -> std::process::Output;

/// The keys one table of a TOML file takes: a file with `preamble` and an unknown key after
/// it is refused by `command`, naming the keys there are.
fn keys_of(preamble: &str, command: &OnFile) -> Vec<String> {
    let dir = Scratch::new();
    let file = dir.write("config.toml", &format!("{preamble}\nnot_a_key_of_toolhost = 1\n"));
    let out = command(&file);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "an unknown key was taken: {preamble}");
    let known = said
        .split("expected one of ")
        .nth(1)
        .or_else(|| said.split("expected ").nth(1))
        .unwrap_or_else(|| panic!("no key list in the refusal of {preamble:?}: {said}"));
    let known = known.lines().next().unwrap();
    known.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

#[test]
fn every_config_key_is_documented() {
    let pages = pages();
    let serve =
        |file: &std::path::Path| run_bounded(&["serve", "--listen", "127.0.0.1:0", "--config", file.to_str().unwrap()]);
    let servers =
        |file: &std::path::Path| run(&["tools", "http://127.0.0.1:9/nact", "--servers", file.to_str().unwrap()]);
    // Each table with what a page that documents its keys must name.
    let tables: [(&str, &str, &OnFile); 7] = [
        ("", "toolhost.toml", &serve),
        ("[auth]", "[auth]", &serve),
        ("[[auth.api_keys]]", "[[auth.api_keys]]", &serve),
        ("[[auth.jwt]]", "[[auth.jwt]]", &serve),
        ("[[auth.callers]]", "[[auth.callers]]", &serve),
        ("[approvals]", "[approvals]", &serve),
        ("[[server]]", "[[server]]", &servers),
    ];
    let mut missing = Vec::new();
    for (preamble, table, command) in tables {
        let keys = keys_of(preamble, command);
        assert!(!keys.is_empty(), "{preamble}");
        for key in keys {
            // A table-valued key is documented by its table's header (`[[auth.jwt]]`).
            let dotted = table.trim_matches(['[', ']']);
            let header = if preamble.is_empty() {
                key.clone()
            } else {
                format!("{dotted}.{key}")
            };
            let forms = [
                format!("`{key}`"),
                format!("`{key} "),
                format!("{key} = "),
                format!("[{header}]"),
            ];
            let documented = pages.iter().any(|p| {
                (preamble.is_empty() || p.text.contains(table))
                    && forms.iter().any(|form| p.text.contains(form.as_str()))
            });
            if !documented {
                missing.push(format!("{table} {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "config keys no page of the book documents (on a page naming their table): {missing:#?}"
    );
}

/// The rows of the first table under `heading` on `page`, each split into its cells.
fn table_rows(page: &Page, heading: &str) -> Vec<Vec<String>> {
    let start = page
        .text
        .find(heading)
        .unwrap_or_else(|| panic!("{} has no {heading:?}", page.name));
    page.text[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect())
        .collect()
}

/// The other way round: what the reference tables name exists. Every flag of configuration.md's
/// table is one of `serve`'s and its TOML key one the config file takes; every flag of
/// client.md's shared table is one the client commands take. A flag renamed or removed in the
/// code fails here until the page follows.
#[test]
fn the_reference_tables_name_only_flags_and_keys_there_are() {
    let pages = pages();
    let page = |name: &str| pages.iter().find(|p| p.name == name).unwrap();
    let tree = command_tree();
    let flags_of = |path: &[&str]| {
        let (_, help) = tree.iter().find(|(p, _)| p == path).unwrap();
        let (mut flags, _) = flags(help);
        flags.push("--help".to_owned());
        flags
    };
    let serve = flags_of(&["serve"]);
    let keys = keys_of("", &|file: &std::path::Path| {
        run_bounded(&["serve", "--listen", "127.0.0.1:0", "--config", file.to_str().unwrap()])
    });
    let flags_in = |cell: &str| -> Vec<String> {
        cell.split(['`', ' ', ','])
            .filter(|w| w.starts_with("--"))
            .map(str::to_owned)
            .collect()
    };
    let mut stale = Vec::new();
    let rows = table_rows(page("docs/configuration.md"), "## Configuration");
    assert!(rows.len() > 50, "configuration.md's table has {} rows", rows.len());
    for row in &rows {
        for flag in flags_in(&row[0]) {
            if !serve.contains(&flag) {
                stale.push(format!("configuration.md: `serve {flag}`"));
            }
        }
        for key in row[2].split('`').skip(1).step_by(2) {
            if !keys.iter().any(|k| k == key.trim_matches(['[', ']'])) {
                stale.push(format!("configuration.md: key `{key}`"));
            }
        }
    }
    let tools = flags_of(&["tools"]);
    let rows = table_rows(page("docs/client.md"), "Flags of every client command");
    assert!(rows.len() > 5, "client.md's table has {} rows", rows.len());
    for row in &rows {
        for flag in flags_in(&row[0]) {
            if !tools.contains(&flag) {
                stale.push(format!("client.md: `{flag}`"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the reference names what the code does not have: {stale:#?}"
    );
}

/// Every TOML block of the book is a file a reader can copy: it parses, and toolhost takes
/// every key it has (`serve --config`, or the client's `--servers` for a `[[server]]` list).
/// What it leaves out (a secret's variable unset, a placeholder digest) may still stop `serve`;
/// an unknown key may not.
#[test]
fn every_toml_block_of_the_book_has_only_keys_there_are() {
    let blocks: Vec<_> = crate::book::blocks().into_iter().filter(|b| b.lang == "toml").collect();
    assert!(blocks.len() >= 5, "{} TOML blocks", blocks.len());
    for block in blocks {
        if let Err(e) = block.text.parse::<toml::Table>() {
            panic!("{} is no TOML file: {e}\n{}", block.at(), block.text);
        }
        let dir = Scratch::new();
        let file = dir.write("block.toml", &block.text);
        let file = file.to_str().unwrap();
        let out = if block.text.contains("[[server]]") {
            run(&["tools", "http://127.0.0.1:9/nact", "--servers", file])
        } else {
            run_bounded(&["serve", "--listen", "127.0.0.1:0", "--config", file])
        };
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            !said.contains("unknown field"),
            "{}: {said}\n{}",
            block.at(),
            block.text
        );
    }
}
