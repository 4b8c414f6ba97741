//! Untrusted text from servers: names, descriptions and outputs (WoA draft §8.3, docs/protocols.md §7).
//!
//! A server controls every string it sends. Before such text reaches a terminal or a model it
//! loses control characters (which could move the cursor, rewrite earlier lines or hide text)
//! and bidirectional overrides (which could make text read differently from what it is), and is
//! cut to a bound, so one server cannot flood a prompt or a screen.

/// The longest tool or parameter name kept; longer names are refused (N-ACT: < 255 characters).
pub const MAX_NAME: usize = 255;

/// The longest description kept, in characters (N-ACT: < 2000; some servers send more).
pub const MAX_DESCRIPTION: usize = 4000;

/// Whether a character may be shown: no C0/C1 controls or DEL (tab and newline only when
/// `multiline`), no bidirectional embeddings, overrides or isolates, no zero-width joiners that
/// hide text.
fn shown(c: char, multiline: bool) -> bool {
    match c {
        '\n' | '\t' => multiline,
        c if c.is_control() => false,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' => false,
        _ => true,
    }
}

/// `text` without control and bidirectional-override characters (keeping newlines and tabs),
/// at most `max` characters; a cut ends in `…`.
pub fn clean(text: &str, max: usize) -> String {
    bound(text.chars().filter(|&c| shown(c, true)), max)
}

/// `text` on one line: like [`clean`], with every run of whitespace (newlines too) one space.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4));
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if !shown(c, false) {
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    bound(out.chars(), max)
}

fn bound(chars: impl Iterator<Item = char>, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in chars.enumerate() {
        if i == max {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// Whether a name can be used as it is: not empty, within [`MAX_NAME`], and free of anything
/// [`clean`] would remove or of whitespace, so what a terminal shows is what is sent.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().count() <= MAX_NAME && name.chars().all(|c| shown(c, false) && !c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_escapes_and_overrides() {
        assert_eq!(clean("a\u{1b}[2Jb\u{202E}c\u{7f}d\r\ne", 100), "a[2Jbcd\ne");
        assert_eq!(one_line("  two\n lines\t here ", 100), "two lines here");
        assert_eq!(one_line("x\u{9b}31my", 100), "x31my");
    }

    #[test]
    fn bounds_length() {
        assert_eq!(clean("abcdef", 4), "abc…");
        assert_eq!(clean("abcd", 4), "abcd");
        assert_eq!(one_line("ééééé", 3), "éé…");
    }

    #[test]
    fn plain_names() {
        assert!(is_plain_name("add_numbers"));
        assert!(!is_plain_name("add numbers"));
        assert!(!is_plain_name("evil\u{1b}[31m"));
        assert!(!is_plain_name(""));
        assert!(!is_plain_name(&"a".repeat(256)));
    }
}
