//! The names to suggest for a tool name a server does not have: the nearest few, not every
//! name of a server that may list a thousand (issue #32.10).

/// How many names a suggestion shows; a server with at most this many is listed whole.
const SHOWN: usize = 5;

/// The names for "its tools are: …": all of them when they are few, else the [`SHOWN`] nearest
/// to `wanted` (a name containing it, or it containing the name, first; then the most words in
/// common; then by edit distance) and how to see the rest.
pub fn nearest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>, source: &str) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return "(none)".to_owned();
    }
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    let wanted = wanted.to_ascii_lowercase();
    let words: Vec<&str> = wanted.split(['_', '-', '.']).filter(|w| !w.is_empty()).collect();
    let mut scored: Vec<(bool, std::cmp::Reverse<usize>, usize, &str)> = names
        .iter()
        .map(|name| {
            let lower = name.to_ascii_lowercase();
            let contained = !wanted.is_empty() && (lower.contains(&wanted) || wanted.contains(&lower));
            let shared = words
                .iter()
                .filter(|w| lower.split(['_', '-', '.']).any(|n| alike(w, n)))
                .count();
            (
                !contained,
                std::cmp::Reverse(shared),
                toolhost_core::edit_distance(&wanted, &lower),
                *name,
            )
        })
        .collect();
    scored.sort_unstable();
    let shown: Vec<&str> = scored.iter().take(SHOWN).map(|s| s.3).collect();
    format!(
        "{} — the nearest of {}; `toolhost tools {source}` lists them all",
        shown.join(", "),
        names.len()
    )
}

/// Whether two words of names are the same word: equal, or one a prefix of the other of at
/// least three letters (`repo`, `repos`).
fn alike(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= 3 && long.starts_with(short))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_names_are_listed_and_many_are_cut_to_the_nearest() {
        assert_eq!(nearest("x", ["b", "a"], "URL"), "a, b");
        assert_eq!(nearest("x", [], "URL"), "(none)");
        let many: Vec<String> = (0..1000).map(|i| format!("tool_{i}")).collect();
        let names = many
            .iter()
            .map(String::as_str)
            .chain(["repos_get", "repos_get_branch", "issues_list"]);
        let said = nearest("repo_get", names, "http://h/mcp");
        assert!(
            said.starts_with("repos_get, repos_get_branch,")
                && said.ends_with("the nearest of 1003; `toolhost tools http://h/mcp` lists them all"),
            "{said}"
        );
        assert_eq!(toolhost_core::edit_distance("kitten", "sitting"), 3);
    }
}
