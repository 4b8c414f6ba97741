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

/// Whether a name can be used as it is: not empty, within [`MAX_NAME`], free of anything
/// [`clean`] would remove, and with no whitespace but single spaces between words, so what a
/// terminal shows is what is sent. Spaces are allowed because the drafts write names so
/// (N-ACT Figure 2's tool `Lookup Weather`, Figure 3's input `Flight Class`); a target that
/// needs other names (an LLM provider's) gets them from [`crate::export`].
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && !name.contains("  ")
        && name
            .chars()
            .all(|c| shown(c, false) && (c == ' ' || !c.is_whitespace()))
}

#[cfg(test)]
mod tests {

    #[test]
    fn urls_lose_their_credentials_before_they_are_written() {
        let source =
            crate::Source::parse("https://me:pw@api.example/mcp?api_key=k&access_token=t&Signature=s&page=2").unwrap();
        assert_eq!(
            without_credentials(&source).to_string(),
            "https://api.example/mcp?page=2"
        );
        let command = crate::Source::parse("stdio:npx server").unwrap();
        assert_eq!(without_credentials(&command), command);
    }

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
        assert!(is_plain_name("Lookup Weather"), "N-ACT Figure 2");
        assert!(is_plain_name("Flight Class"), "N-ACT Figure 3");
        for odd in [
            " add",
            "add ",
            "add  numbers",
            "add\tnumbers",
            "add\u{a0}numbers",
            "add\nnumbers",
        ] {
            assert!(!is_plain_name(odd), "{odd:?}");
        }
        assert!(!is_plain_name("evil\u{1b}[31m"));
        assert!(!is_plain_name(""));
        assert!(!is_plain_name(&"a".repeat(256)));
    }
}

/// A URL as messages show it: without user name and password, and with every query value
/// replaced by `…`, since a user may put a key in either (issue #12.10). Text that is not a URL
/// is returned as it is.
pub fn shown_url(text: &str) -> String {
    let Ok(mut url) = url::Url::parse(text) else {
        return text.to_owned();
    };
    if url.cannot_be_a_base() {
        return text.to_owned();
    }
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let keys: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    if keys.is_empty() {
        return url.to_string();
    }
    url.set_query(None);
    let fragment = url.fragment().map(str::to_owned);
    url.set_fragment(None);
    let query: Vec<String> = keys.iter().map(|k| format!("{k}=…")).collect();
    let mut shown = format!("{url}?{}", query.join("&"));
    if let Some(fragment) = fragment {
        shown.push('#');
        shown.push_str(&fragment);
    }
    shown
}

/// Whether a query parameter's name says it carries a credential (`api_key`, `token`, …).
fn is_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "auth",
        "signature",
        "sig",
        "credential",
    ]
    .iter()
    .any(|word| name == *word || name.contains(word))
}

/// `source` without the credentials a URL can carry: its user and password, and query
/// parameters whose names say they hold one (`api_key`, `access_token`, …). What is written
/// to a lockfile or a catalog, and so may be committed, never holds a secret; pass credentials
/// with `--bearer`, `--api-key` or `--header` instead.
pub fn without_credentials(source: &crate::Source) -> crate::Source {
    let crate::Source::Url(url) = source else {
        return source.clone();
    };
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !is_credential(k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    crate::Source::Url(url)
}

/// An error text from a library, in the user's terms: no Rust type paths (`[rmcp::transport::
/// worker::WorkerTransport<…>]`, `reqwest::Error { … }`), no transport plumbing words.
pub fn plain_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // Drop every bracketed segment that names a Rust path.
    while let Some(start) = rest.find('[') {
        let Some(len) = closing(&rest[start..]) else { break };
        let inside = &rest[start..start + len];
        out.push_str(&rest[..start]);
        if !inside.contains("::") {
            out.push_str(inside);
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    let out = out
        .replace("Send message error Transport  error: ", "")
        .replace("Send message error Transport error: ", "")
        .replace(", when send initialize request", " to `initialize`")
        .replace("when send initialize request", "sending `initialize`");
    one_line(&out, 1000)
}

/// The length of the bracketed segment `text` starts with, nested brackets and angle brackets
/// included; `None` when it does not close.
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '<' => depth += 1,
            ']' | '>' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + c.len_utf8());
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod message_tests {
    use super::{plain_error, shown_url};

    #[test]
    fn urls_in_messages_lose_credentials() {
        assert_eq!(
            shown_url("https://me:pw@api.example.com/x?api_key=s3cret&v=1"),
            "https://api.example.com/x?api_key=…&v=…"
        );
        assert_eq!(shown_url("http://127.0.0.1:8080/nact"), "http://127.0.0.1:8080/nact");
        assert_eq!(shown_url("stdio:npx server"), "stdio:npx server");
    }

    #[test]
    fn library_errors_lose_type_names() {
        let rmcp = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>] error: HTTP 501, when send initialize request";
        assert_eq!(plain_error(rmcp), "HTTP 501 to `initialize`");
        assert_eq!(plain_error("keep [this] part"), "keep [this] part");
    }
}
