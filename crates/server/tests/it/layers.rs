//! The fence of the server crate's layers (issue #39.7; ARCHITECTURE.md, "Layers of the server"):
//! every `crate::…`, `super::…` and `self::…` path in `src/**/*.rs`, and every re-export of a
//! child module, is resolved to the file of the module it names, and no file may name one in a
//! layer above its own. Files of one layer may name each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first: a module's layer is that of the longest prefix of its path listed
/// here (`""` is the crate root, `lib.rs`).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "config",
            "http",
            "view",
            "seal",
            "idempotency",
            "shared",
            "tasks",
            "auth",
            "limits",
            "approvals",
        ],
    ),
    ("state", &["state", "ops", "calls"]),
    ("endpoints", &["adapter", "approvals::page"]),
    ("agents", &["agents"]),
    ("app", &["", "front", "tls"]),
];

/// One source file: its module path (`["adapter", "mcp"]` for `adapter/mcp/mod.rs`).
struct File {
    module: Vec<String>,
    path: PathBuf,
    text: String,
}

/// One path a source file names, resolved.
struct Edge {
    /// The naming file, from `src/`.
    file: String,
    from: Vec<String>,
    path: Vec<String>,
    to: Vec<String>,
}

/// Every crate path each file of `src/` names, with the module it lands in.
fn edges() -> Vec<Edge> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&src);
    let modules: BTreeMap<Vec<String>, usize> = files.iter().enumerate().map(|(i, f)| (f.module.clone(), i)).collect();
    let aliases = aliases(&files[modules[&Vec::new()]].text);
    let mut edges = Vec::new();
    for file in &files {
        for path in paths(&inline_modules(&strip(&file.text)), &file.module, &modules) {
            if let Some(to) = resolve(&path, &modules, &aliases) {
                edges.push(Edge {
                    file: file.path.strip_prefix(&src).unwrap_or(&file.path).display().to_string(),
                    from: file.module.clone(),
                    path,
                    to,
                });
            }
        }
    }
    // A fence that resolves nothing would pass any change: the crate has hundreds of edges.
    assert!(
        edges.len() > 200,
        "only {} paths resolved: the scan no longer reads the sources",
        edges.len()
    );
    edges
}

#[test]
fn no_module_names_one_in_a_layer_above_its_own() {
    let mut upward: Vec<String> = edges()
        .iter()
        .filter(|e| placed(&e.to).0 > placed(&e.from).0)
        .map(|e| {
            format!(
                "{} ({}) names `{}`, in {} ({})",
                e.file,
                LAYERS[placed(&e.from).0].0,
                e.path.join("::"),
                shown(&e.to),
                LAYERS[placed(&e.to).0].0,
            )
        })
        .collect();
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "upward edges between the server's layers (ARCHITECTURE.md, \"Layers of the server\"): \
         move what is named below its user, or pass it as an argument:\n  {}",
        upward.join("\n  ")
    );
}

/// Within a layer the modules listed in [`LAYERS`] may name each other, but no new circle may
/// form among them. Two are left, and this list only shrinks: `http` reads the `Config` that
/// holds the limits, approvals and accept settings (which use `http`'s problems); the state
/// holds `ops`' reload and readiness records, and `ops` reloads the state.
#[test]
fn no_new_circle_forms() {
    let mut named: BTreeMap<&'static str, BTreeSet<&'static str>> = BTreeMap::new();
    for edge in edges() {
        let (from, to) = (placed(&edge.from).1, placed(&edge.to).1);
        if from != to {
            named.entry(from).or_default().insert(to);
        }
    }
    // What each unit reaches, by closing `named` (a few dozen units).
    let mut reaches = named.clone();
    loop {
        let mut grew = false;
        for unit in named.keys() {
            let through: BTreeSet<&str> = reaches[unit]
                .iter()
                .flat_map(|next| reaches.get(next).into_iter().flatten().copied())
                .collect();
            let set = reaches.get_mut(unit).expect("a key of named");
            let before = set.len();
            set.extend(through);
            grew |= set.len() > before;
        }
        if !grew {
            break;
        }
    }
    let circles: BTreeSet<Vec<&str>> = reaches
        .iter()
        .filter(|(unit, reached)| reached.contains(*unit))
        .map(|(unit, _)| {
            let mut circle: Vec<&str> = reaches
                .keys()
                .filter(|other| reaches[*other].contains(unit) && reaches[unit].contains(*other))
                .copied()
                .collect();
            circle.sort_unstable();
            circle
        })
        .collect();
    let circles: Vec<Vec<&str>> = circles.into_iter().collect();
    assert_eq!(
        circles,
        [vec!["approvals", "config", "http", "limits"], vec!["ops", "state"]],
        "circles among the server's modules: a new one formed, or one was broken (then drop it here)"
    );
}

#[test]
fn the_fence_sees_an_upward_edge() {
    let modules: BTreeMap<Vec<String>, usize> = [vec![], vec!["http".to_owned()], vec!["state".to_owned()]]
        .into_iter()
        .enumerate()
        .map(|(i, m)| (m, i))
        .collect();
    let text = "use crate::{State, http::problem};\nfn f() { crate::state::agents::base(\"a\"); }\n// crate::app\n";
    let found: Vec<Vec<String>> = paths(&strip(text), &["http".to_owned()], &modules)
        .iter()
        .filter_map(|p| resolve(p, &modules, &aliases("pub use state::State;\n")))
        .collect();
    assert_eq!(
        found,
        [
            vec!["state".to_owned()],
            vec!["http".to_owned()],
            vec!["state".to_owned()]
        ],
        "the comment is not read; `crate::State` is the root's re-export of `state::State`"
    );
    assert!(placed(&found[0]).0 > placed(&["http".to_owned()]).0);
}

/// The layer index of `module`, and the entry of [`LAYERS`] it falls under.
fn placed(module: &[String]) -> (usize, &'static str) {
    let joined = module.join("::");
    let mut best: Option<(usize, &'static str)> = None;
    for (index, (_, prefixes)) in LAYERS.iter().enumerate() {
        for prefix in *prefixes {
            let matches = prefix.is_empty()
                || joined == *prefix
                || joined.strip_prefix(prefix).is_some_and(|rest| rest.starts_with("::"));
            if matches && best.is_none_or(|(_, longest)| prefix.len() > longest.len()) {
                best = Some((index, prefix));
            }
        }
    }
    best.unwrap_or((0, ""))
}

fn shown(module: &[String]) -> String {
    if module.is_empty() {
        "lib.rs".to_owned()
    } else {
        module.join("::")
    }
}

/// Every `.rs` file under `src`, with its module path.
fn sources(src: &Path) -> Vec<File> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("failed to read {}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).expect("under src").with_extension("");
                let mut module: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                let text = std::fs::read_to_string(&path).expect("a readable source file");
                files.push(File { module, path, text });
            }
        }
    }
    files
}

/// The source without comments, string and char literals (a doc link or a message naming
/// `crate::x` is not a dependency).
fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if let Some(raw) = raw_string(rest) {
            i += raw;
            out.push_str("\"\"");
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if bytes[i] == b'\'' && (rest.get(2..3) == Some("'") || rest.starts_with("'\\")) {
            // A char literal ('a', '\n', '\''); a lifetime (`'a`) has no closing quote there.
            let end = rest[2..].find('\'').map_or(rest.len(), |e| e + 3);
            i += end;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of the raw string literal `rest` opens with, if it does (`r"…"`, `r#"…"#`).
fn raw_string(rest: &str) -> Option<usize> {
    let after = rest.strip_prefix('r').or_else(|| rest.strip_prefix("br"))?;
    let hashes = after.len() - after.trim_start_matches('#').len();
    let body = after[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some(rest.len() - body.len() + end + close.len())
}

/// The source with `super::` inside an inline module (`mod tests { use super::*; }`) written
/// `self::`: the scan takes a file for one module, and there `super` is the file's module.
fn inline_modules(text: &str) -> String {
    let mut out = text.to_owned();
    let mut from = 0;
    while let Some(at) = out[from..].find("mod ").map(|a| from + a) {
        from = at + 4;
        let word_start = at == 0 || !out[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let after = out[from..].trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
        if !word_start || !after.trim_start().starts_with('{') {
            continue;
        }
        let open = from + (out[from..].len() - after.len()) + after.find('{').expect("checked");
        let mut depth = 0;
        let mut close = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = &out[open..close];
        let mut rewritten = String::with_capacity(body.len());
        let mut rest = body;
        while let Some(at) = rest.find("super::") {
            let chained = rest[..at].ends_with("::");
            let word = !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
            rewritten.push_str(&rest[..at]);
            rewritten.push_str(if word && !chained { "self::" } else { "super::" });
            rest = &rest[at + 7..];
        }
        rewritten.push_str(rest);
        out.replace_range(open..close, &rewritten);
    }
    out
}

/// The crate root's re-exports (`pub use state::State;`): a path through the root to one of
/// them names the module it comes from.
fn aliases(lib: &str) -> BTreeMap<String, Vec<String>> {
    let mut aliases = BTreeMap::new();
    for statement in strip(lib).split(';') {
        let Some(used) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (path, name) = match used.split_once(" as ") {
            Some((path, name)) => (path.trim(), name.trim()),
            None => (used.trim(), used.trim().rsplit("::").next().unwrap_or_default()),
        };
        let mut module: Vec<String> = path.split("::").map(|s| s.trim().to_owned()).collect();
        module.pop();
        aliases.insert(name.to_owned(), module);
    }
    aliases
}

/// The crate paths a file names, each from the crate root: in `use` trees (braces expanded),
/// anywhere else as `crate::a::b`, `super::a` or `self::a`, and `use child::…` re-exports.
fn paths(text: &str, module: &[String], modules: &BTreeMap<Vec<String>, usize>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = text;
    // `use` trees first, removed from what is scanned next.
    let mut plain = String::with_capacity(text.len());
    while let Some(at) = find_use(rest) {
        plain.push_str(&rest[..at]);
        let tree_start = at + rest[at..].find("use ").expect("found") + 4;
        let end = rest[tree_start..].find(';').map_or(rest.len(), |e| tree_start + e);
        let mut leaves = Vec::new();
        expand(&rest[tree_start..end], &mut Vec::new(), &mut leaves);
        for leaf in leaves {
            let child = leaf.first().is_some_and(|first| {
                let mut m = module.to_vec();
                m.push(first.clone());
                modules.contains_key(&m)
            });
            if child {
                let mut absolute = module.to_vec();
                absolute.extend(leaf);
                found.push(absolute);
            } else if let Some(absolute) = absolute(&leaf, module) {
                found.push(absolute);
            }
        }
        rest = &rest[end..];
    }
    plain.push_str(rest);
    let words: Vec<char> = plain.chars().collect();
    let mut i = 0;
    while i < words.len() {
        let starts_word = i == 0 || !(words[i - 1].is_alphanumeric() || words[i - 1] == '_' || words[i - 1] == ':');
        if starts_word && let Some((path, len)) = path_at(&words[i..]) {
            if path.len() > 1
                && let Some(absolute) = absolute(&path, module)
            {
                found.push(absolute);
            }
            i += len;
        } else {
            i += 1;
        }
    }
    found
}

/// Where the next `use` statement starts (a word `use`, maybe after `pub`/`pub(crate)`).
fn find_use(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find("use ") {
        let at = from + at;
        let before = text[..at].chars().next_back();
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// The leaves of a `use` tree, `{a, b::{c, d}}` as `a`, `b::c`, `b::d`.
fn expand(tree: &str, prefix: &mut Vec<String>, leaves: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let depth = prefix.len();
        prefix.extend(head);
        let mut level = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => level += 1,
                '}' => level -= 1,
                ',' if level == 0 => {
                    expand(&inner[start..i], prefix, leaves);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], prefix, leaves);
        prefix.truncate(depth);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap_or_default();
        let mut leaf = prefix.clone();
        leaf.extend(
            path.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        leaves.push(leaf);
    }
}

/// The path of identifiers joined by `::` at the start of `chars`, and its length.
fn path_at(chars: &[char]) -> Option<(Vec<String>, usize)> {
    let mut segments = Vec::new();
    let mut i = 0;
    loop {
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        if i == start {
            break;
        }
        segments.push(chars[start..i].iter().collect::<String>());
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            break;
        }
    }
    (!segments.is_empty()).then_some((segments, i))
}

/// `path` from the crate root, when it starts at `crate`, `super` or `self`.
fn absolute(path: &[String], module: &[String]) -> Option<Vec<String>> {
    let mut base = module.to_vec();
    let mut rest = path;
    if !matches!(rest.first().map(String::as_str), Some("crate" | "self" | "super")) {
        return None;
    }
    loop {
        match rest.first().map(String::as_str) {
            Some("crate") => base.clear(),
            Some("self") => {}
            Some("super") => {
                base.pop()?;
            }
            _ => break,
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The module a crate path lands in: its longest prefix that is a module of the crate, through
/// the root's re-exports.
fn resolve(
    path: &[String],
    modules: &BTreeMap<Vec<String>, usize>,
    aliases: &BTreeMap<String, Vec<String>>,
) -> Option<Vec<String>> {
    if let Some(first) = path.first()
        && let Some(module) = aliases.get(first)
        && !modules.contains_key(&vec![first.clone()])
    {
        let mut through = module.clone();
        through.extend(path[1..].iter().cloned());
        return resolve(&through, modules, &BTreeMap::new());
    }
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|m| modules.contains_key(m))
}
