//! Names: tools' from operation ids (`snake_case`, cut at words to fit OTC's `Toolkit_tool`),
//! the toolkit's from a short form of the description's title (issue #32.7), and globs.

use std::collections::BTreeSet;

use super::{MAX_NAME, MAX_TOOLKIT};

/// `snake_case` of an identifier or a `METHOD /path`, starting with a letter, at most 64.
pub fn snake(text: &str) -> String {
    let mut out = words(text);
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out = format!("op_{out}");
    }
    out.chars()
        .take(MAX_NAME)
        .collect::<String>()
        .trim_end_matches('_')
        .to_owned()
}

/// The words of `text` (split at non-alphanumerics and lower-to-upper steps: `getPetById`,
/// `New York`), lower case, joined by `_`.
pub(crate) fn words(text: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if matches!(c, '\'' | '’') {
            continue;
        }
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower && !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            previous_lower = false;
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
    }
    out.trim_matches('_').to_owned()
}

/// A toolkit name from a title: its first few words that name the API, without the words
/// every title has (`GitHub's official OpenAPI spec` → `GitHub`, `Swagger Petstore - OpenAPI
/// 3.0` → `Petstore`), so tool names keep their room in OTC's `Toolkit_tool` (issue #32.7).
pub(crate) fn short_title(title: &str) -> String {
    // What follows a separator is an aside too ("… spec + Octokit extension", "Petstore -
    // OpenAPI 3.0"), when what precedes it names something.
    let head = [" + ", " - ", " | ", ": ", " — ", " – "]
        .iter()
        .filter_map(|sep| title.find(sep))
        .min()
        .map(|at| &title[..at]);
    head.and_then(naming_words)
        .or_else(|| naming_words(title))
        .unwrap_or_else(|| pascal(title))
}

/// The words of a title that name the API, in `PascalCase` (at most three, 20 characters);
/// `None` when none is left.
fn naming_words(title: &str) -> Option<String> {
    const FILLER: &[&str] = &[
        "a",
        "an",
        "and",
        "api",
        "apis",
        "definition",
        "definitions",
        "description",
        "document",
        "documentation",
        "extension",
        "extensions",
        "for",
        "http",
        "interface",
        "json",
        "of",
        "official",
        "openapi",
        "reference",
        "rest",
        "restful",
        "schema",
        "service",
        "services",
        "spec",
        "specification",
        "specs",
        "swagger",
        "the",
        "v",
        "version",
        "yaml",
    ];
    // Parenthesised asides go: "(Octokit extension)".
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in title.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let mut name = String::new();
    let kept = plain
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| {
            let w = w.trim_end_matches("'s").trim_end_matches("’s");
            w.chars().filter(char::is_ascii_alphanumeric).collect::<String>()
        })
        .filter(|w| !w.is_empty() && !FILLER.contains(&w.to_ascii_lowercase().as_str()))
        // Versions go too: `3`, `v2`.
        .filter(|w| !w.trim_start_matches(['v', 'V']).chars().all(|c| c.is_ascii_digit()));
    for word in kept.take(3) {
        let mut c = word.chars();
        let word: String = c.next().map(|f| f.to_ascii_uppercase()).into_iter().chain(c).collect();
        if !name.is_empty() && name.len() + word.len() > 20 {
            break;
        }
        name.push_str(&word);
    }
    let name: String = name.chars().take(MAX_TOOLKIT).collect();
    match name.chars().next() {
        None => None,
        Some(c) if c.is_ascii_digit() => Some(format!("Api{name}").chars().take(MAX_TOOLKIT).collect()),
        Some(_) => Some(name),
    }
}

/// `PascalCase` of a title, for a toolkit name: whole words up to [`MAX_TOOLKIT`] characters,
/// since the toolkit's name and each tool's share OTC's 63.
pub(crate) fn pascal(text: &str) -> String {
    let mut name = String::new();
    for word in snake(text).split('_') {
        let mut c = word.chars();
        let word = c
            .next()
            .map_or_else(String::new, |f| f.to_ascii_uppercase().to_string() + c.as_str());
        if !name.is_empty() && name.len() + word.len() > MAX_TOOLKIT {
            break;
        }
        name.push_str(&word);
    }
    if name.is_empty() {
        "Imported".to_owned()
    } else {
        name.chars().take(MAX_TOOLKIT).collect()
    }
}

/// `base`, or `base_2`, `base_3`… (kept within the name limit), not yet in `taken`.
pub(crate) fn unique(base: &str, taken: &mut BTreeSet<String>) -> String {
    unique_within(base, taken, MAX_NAME)
}

/// [`unique`] within `max` characters, cut at a word (`_`) when one leaves most of the name.
pub(crate) fn unique_within(base: &str, taken: &mut BTreeSet<String>, max: usize) -> String {
    let base = fit(base, max);
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        name = format!("{}{suffix}", fit(&base, max.saturating_sub(suffix.len())));
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// `name` in at most `max` characters: whole words when the cut leaves at least half of it.
fn fit(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.trim_end_matches('_').to_owned();
    }
    let cut: String = name.chars().take(max).collect();
    if name.chars().nth(max) == Some('_') {
        return cut.trim_end_matches('_').to_owned();
    }
    match cut.rfind('_') {
        Some(i) if i >= max / 2 => cut[..i].trim_end_matches('_').to_owned(),
        _ => cut.trim_end_matches('_').to_owned(),
    }
}

/// Says how many tool names were cut (or numbered), with one example and what to do.
pub(crate) fn cut_note(cut: &[(String, String)], toolkit: &str, budget: usize) -> Option<String> {
    let (from, to) = cut.first()?;
    Some(format!(
        "{} tool name(s) were cut to {budget} characters (OTC names a tool `{toolkit}_name`, 64 characters at most) or numbered to be unique, e.g. `{from}` is `{to}`; a shorter --toolkit, or `name:` in an overlay, changes them",
        cut.len()
    ))
}

/// Whether `name` matches a glob with `*` (any run) and `?` (one character).
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    go(&p, &n)
}
