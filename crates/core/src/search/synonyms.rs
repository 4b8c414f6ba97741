//! The words people use for what APIs name otherwise: a small table of verbs and nouns that
//! mean the same thing in a request to an API ("fetch" for `get`, "remove" for `delete`,
//! "PR" for "pull request"). A query's word also looks for each of its synonyms, at a lower
//! weight than the word itself, so a tool that uses the user's own word still ranks first.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::{stem, words};

/// Words that stand for one another, each group read both ways.
const GROUPS: &[&[&str]] = &[
    &[
        "get", "list", "fetch", "show", "retrieve", "read", "view", "display", "see", "lookup", "find",
    ],
    &["create", "new", "post", "make", "open", "start", "insert", "register"],
    &[
        "delete", "remove", "destroy", "erase", "drop", "unset", "clear", "revoke",
    ],
    &[
        "update", "edit", "patch", "change", "modify", "set", "replace", "rename", "alter",
    ],
    &["rerun", "retry", "restart", "rerequest", "again"],
    &["cancel", "stop", "abort", "halt", "terminate"],
    &["search", "find", "query", "lookup", "filter"],
    &["send", "post", "publish", "write", "say"],
    &["invite", "add"],
    &["kick", "remove"],
    &["upload", "attach", "put"],
    &["download", "export", "get"],
    &["close", "archive", "resolve"],
    &["reopen", "unarchive", "restore"],
    &["enable", "activate", "turn"],
    &["disable", "deactivate"],
    &["repo", "repository"],
    &["org", "organization", "organisation", "company"],
    &["user", "member", "person", "people", "account", "collaborator"],
    &["channel", "conversation", "room"],
    &["message", "chat", "post", "msg"],
    &["reaction", "emoji"],
    &["guild", "server"],
    &["permission", "role", "access", "right"],
    &["webhook", "hook"],
    &["secret", "credential", "token", "key"],
    &["comment", "reply", "note"],
    &["star", "favorite", "favourite", "bookmark", "like"],
    &["tag", "label"],
    &["assign", "assignee"],
    &["workflow", "pipeline", "action", "job"],
    &["file", "document", "attachment"],
    &["reminder", "remind"],
    &["forecast", "weather"],
    &["info", "detail", "information", "metadata"],
];

/// One-way readings: a word a user writes and the terms an API uses for it.
const READINGS: &[(&str, &[&str])] = &[
    ("my", &["authenticated", "me", "own"]),
    ("mine", &["authenticated", "me", "own"]),
    ("me", &["authenticated", "self"]),
    ("i", &["authenticated", "me", "my"]),
    ("logged", &["authenticated", "current", "me"]),
    ("current", &["authenticated", "me", "my"]),
    ("last", &["latest", "recent", "history"]),
    ("recent", &["latest", "history", "last"]),
    ("online", &["presence", "active", "status"]),
    ("away", &["presence", "status"]),
    ("pause", &["snooze", "suspend", "disable"]),
    ("what", &["info", "get"]),
    ("pr", &["pull", "request"]),
    ("prs", &["pull", "request"]),
    ("ci", &["workflow", "check", "action"]),
    ("dm", &["direct", "message", "im"]),
    ("im", &["direct", "message"]),
    ("private", &["direct"]),
    ("follow", &["follower", "following"]),
    ("unfollow", &["follow", "delete"]),
    ("unstar", &["star", "delete"]),
    ("unpin", &["pin", "remove"]),
    ("unlabel", &["label", "remove"]),
    ("unassign", &["assignee", "remove"]),
    // "Add" is also "add to" (labels, members): it reads as "create" one way only.
    ("add", &["create", "insert", "set"]),
    ("put", &["add", "set"]),
    ("close", &["update", "state"]),
    ("leave", &["create", "post"]),
    ("review", &["reviewer"]),
    ("reviewer", &["review"]),
    ("ask", &["request"]),
    ("approve", &["review", "approval"]),
    ("cut", &["create"]),
    ("set", &["create", "configure"]),
    ("history", &["list", "commit", "log"]),
    ("changed", &["file", "diff"]),
    ("off", &["remove", "delete"]),
    ("how", &["count", "number"]),
    ("many", &["count", "number"]),
    ("who", &["user", "member"]),
    ("failed", &["fail", "failure"]),
    ("broken", &["fail", "failure"]),
    ("cron", &["schedule", "scheduled"]),
    ("env", &["environment", "variable"]),
    ("var", &["variable"]),
    ("vars", &["variable"]),
    ("profile", &["user", "identity"]),
    ("team", &["workspace"]),
    ("workspace", &["team"]),
    ("invite", &["invitation"]),
    ("ban", &["block"]),
    ("block", &["ban"]),
    ("mute", &["ignore", "snooze"]),
    ("thread", &["reply", "replies"]),
    ("release", &["version", "tag"]),
    ("commit", &["sha", "ref"]),
];

/// The stemmed table: a term and the terms it also looks for.
fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        let stems = |list: &[&str]| -> Vec<String> { list.iter().flat_map(|w| words(w)).map(|w| stem(&w)).collect() };
        for group in GROUPS {
            let members = stems(group);
            for member in &members {
                let entry = table.entry(member.clone()).or_default();
                entry.extend(members.iter().filter(|m| *m != member).cloned());
            }
        }
        for (word, reading) in READINGS {
            table.entry(stem(word)).or_default().extend(stems(reading));
        }
        for list in table.values_mut() {
            list.sort();
            list.dedup();
        }
        table
    })
}

/// The terms a query's `word` (lower-case, unstemmed) also looks for, stemmed; empty when it
/// has none.
pub(super) fn of(word: &str) -> &'static [String] {
    table().get(&stem(word)).map(Vec::as_slice).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_read_both_ways() {
        assert!(of("fetch").contains(&stem("get")));
        assert!(of("get").contains(&stem("fetch")));
        assert!(of("removing").contains(&stem("delete")));
        assert!(of("retry").contains(&stem("rerun")));
    }

    #[test]
    fn readings_expand_a_user_word_into_api_terms() {
        assert!(of("PR".to_lowercase().as_str()).contains(&"pull".to_owned()));
        assert!(of("my").contains(&stem("authenticated")));
        assert!(of("zebra").is_empty());
    }
}
