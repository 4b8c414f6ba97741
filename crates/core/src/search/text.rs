//! Text into search terms: words split at punctuation, `_` and camelCase, lower-cased, common
//! words dropped, and each word cut to a light stem, so "labels", "labeled" and "labelling" are
//! one term, as are "create", "created" and "creating".
//!
//! The same function reads the catalog and the query, so both sides always agree.

/// Words that say nothing about which tool is meant ("please list all of my …"). A query made
/// only of them finds nothing rather than everything.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "do", "does", "each", "for", "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "just",
    "let", "like", "may", "more", "must", "need", "of", "on", "one", "or", "our", "please", "same", "should", "so",
    "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to", "too",
    "us", "use", "used", "using", "via", "want", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "will", "with", "would", "you", "your",
];

/// Whether `word` (lower-case) is a stop word.
pub(super) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The words of `text`, lower-cased, split at anything not a letter or digit, at `_`, and
/// between a lower-case letter and an upper-case one (`postMessage` is `post`, `message`;
/// `HTTPServer` is `http`, `server`). "re-run" and "re run" read as "rerun", the way API
/// names write it. Stop words are kept: callers decide.
pub(super) fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut joined_re = false;
    for run in text.split(|c: char| !c.is_alphanumeric()).filter(|r| !r.is_empty()) {
        let pieces = camel_pieces(run);
        // A word in odd case ("wEaThEr", "iPhone") is one word: camelCase has no one-letter parts.
        if pieces.len() > 1 && pieces.iter().all(|p| p.chars().count() >= 2) {
            for piece in pieces {
                push_word(&mut out, piece.to_lowercase(), &mut joined_re);
            }
        } else {
            push_word(&mut out, run.to_lowercase(), &mut joined_re);
        }
    }
    out
}

/// `run` split before an upper-case letter that follows a lower-case one or a digit, or that
/// starts a lower-case tail after capitals (`HTTPServer` is `HTTP`, `Server`).
fn camel_pieces(run: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let previous = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        if c.is_uppercase()
            && (previous.is_lowercase() || previous.is_ascii_digit() || (previous.is_uppercase() && next_lower))
        {
            pieces.push(&run[start..at]);
            start = at;
        }
    }
    pieces.push(&run[start..]);
    pieces
}

fn push_word(out: &mut Vec<String>, word: String, joined_re: &mut bool) {
    // "re-run", "re run", `re_run_workflow`: one word, as "rerun" and `reRun` are.
    if *joined_re {
        *joined_re = false;
        if let Some(last) = out.last_mut() {
            last.push_str(&word);
            return;
        }
    }
    if word == "re" {
        *joined_re = true;
    }
    out.push(word);
}

/// The terms of `text`: its words without stop words, each stemmed.
pub(super) fn terms(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop_word(w))
        .map(|w| stem(&w))
        .collect()
}

/// A light stem of a lower-case word: plural, `-ing` and `-ed` endings off, a doubled final
/// consonant undone and a final `e` dropped, so "issues"/"issue", "created"/"creating"/"create"
/// and "starred"/"star" meet. Words of three letters or fewer, and words with digits, are kept.
pub(super) fn stem(word: &str) -> String {
    if word.len() <= 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    let mut w = word.to_owned();
    // Plurals.
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if ["sses", "ches", "shes", "xes"].iter().any(|e| w.ends_with(e)) || (w.ends_with("uses") && w.len() > 5) {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    // Verb endings, when a word with a vowel is left.
    let has_vowel = |s: &str| s.bytes().any(|b| b"aeiouy".contains(&b));
    for ending in ["ing", "ed"] {
        if let Some(base) = w.strip_suffix(ending)
            && base.len() >= 3
            && has_vowel(base)
            && !w.ends_with("eed")
        {
            w = undouble(base);
            break;
        }
    }
    if w.len() > 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// `base` with a doubled final consonant made single ("runn" → "run", "labell" → "label"),
/// except the doubles English keeps at a word's end ("ss", "ll" after a vowel pair, "ff", "zz").
fn undouble(base: &str) -> String {
    let bytes = base.as_bytes();
    let n = bytes.len();
    if n >= 2 && bytes[n - 1] == bytes[n - 2] && !b"aeiouslfz".contains(&bytes[n - 1]) {
        return base[..n - 1].to_owned();
    }
    if n >= 4 && base.ends_with("ll") && !b"aeiou".contains(&bytes[n - 4]) {
        return base[..n - 1].to_owned();
    }
    base.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn words_split_at_underscores_camel_case_and_punctuation() {
        assert_eq!(words("issues_add_labels"), ["issues", "add", "labels"]);
        assert_eq!(words("chat.postMessage"), ["chat", "post", "message"]);
        assert_eq!(words("HTTPServer v2Beta"), ["http", "server", "v2", "beta"]);
        assert_eq!(
            words("Put the 'bug' label on #42"),
            ["put", "the", "bug", "label", "on", "42"]
        );
    }

    #[test]
    fn re_joins_the_word_after_it() {
        assert_eq!(words("re-run a workflow"), ["rerun", "a", "workflow"]);
        assert_eq!(words("re_run_workflow"), ["rerun", "workflow"]);
        assert_eq!(words("wEaThEr iPhone"), ["weather", "iphone"]);
        assert_eq!(words("reRun"), ["rerun"]);
        assert_eq!(words("rerun"), ["rerun"]);
    }

    #[test]
    fn stems_meet_across_inflections() {
        for group in [
            &["issue", "issues"][..],
            &["create", "created", "creating", "creates"],
            &["label", "labels", "labeled", "labelled", "labeling"],
            &["star", "starred", "starring", "stars"],
            &["repository", "repositories"],
            &["branch", "branches"],
            &["run", "runs", "running"],
            &["status", "statuses"],
            &["update", "updated", "updates", "updating"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(stems.windows(2).all(|w| w[0] == w[1]), "{group:?} stem to {stems:?}");
        }
    }

    #[test]
    fn stems_keep_short_words_and_words_that_only_look_inflected() {
        assert_eq!(stem("gis"), "gis");
        assert_eq!(stem("need"), "need");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("v2"), "v2");
    }

    #[test]
    fn terms_drop_stop_words() {
        assert_eq!(terms("List all of the repositories"), ["list", "all", "repository"]);
        assert!(terms("the of and").is_empty());
    }
}
