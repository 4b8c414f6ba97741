//! The ranker on a small catalog written like a real API's (issue #42.2).

use super::*;
use crate::catalog::{Loader, Source};

/// A test tool: name, description, and inputs as (name, description).
type Spec = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

/// A catalog of GitHub-like tools.
const TOOLS: &[Spec] = &[
    (
        "issues_add_labels",
        "Add labels to an issue. Adds labels to an issue.",
        &[
            ("issue_number", "The number that identifies the issue."),
            ("labels", "The names of the labels to add to the issue."),
        ],
    ),
    (
        "issues_remove_label",
        "Remove a label from an issue. Removes the specified label from the issue.",
        &[
            ("issue_number", "The number that identifies the issue."),
            ("name", "The label's name."),
        ],
    ),
    (
        "issues_create_label",
        "Create a label. Creates a label for the specified repository with the given name and color.",
        &[
            ("name", "The name of the label."),
            ("color", "The hexadecimal color code for the label."),
        ],
    ),
    (
        "issues_delete_label",
        "Delete a label. Deletes a label using the given label name.",
        &[("name", "The label's name.")],
    ),
    (
        "issues_list_labels_for_repo",
        "List labels for a repository. Lists all labels for a repository.",
        &[("per_page", "The number of results per page.")],
    ),
    (
        "issues_create",
        "Create an issue. Any user with pull access to a repository can create an issue.",
        &[
            ("title", "The title of the issue."),
            ("body", "The contents of the issue."),
        ],
    ),
    (
        "actions_re_run_workflow",
        "Re-run a workflow. Re-runs your workflow run using its `id`.",
        &[("run_id", "The unique identifier of the workflow run.")],
    ),
    (
        "actions_re_run_workflow_failed_jobs",
        "Re-run failed jobs from a workflow run. Re-run all of the failed jobs and their dependent jobs in a workflow run using the `id` of the workflow run.",
        &[("run_id", "The unique identifier of the workflow run.")],
    ),
    (
        "actions_cancel_workflow_run",
        "Cancel a workflow run. Cancels a workflow run using its `id`.",
        &[("run_id", "The unique identifier of the workflow run.")],
    ),
    (
        "actions_list_workflow_runs",
        "List workflow runs for a workflow. List all workflow runs for a workflow.",
        &[("workflow_id", "The ID of the workflow.")],
    ),
    (
        "pulls_create",
        "Create a pull request. Draft pull requests are available in public repositories.",
        &[
            ("head", "The name of the branch where your changes are implemented."),
            ("base", "The branch you want the changes pulled into."),
        ],
    ),
    (
        "pulls_merge",
        "Merge a pull request. Merges a pull request into the base branch.",
        &[("pull_number", "The number that identifies the pull request.")],
    ),
    (
        "repos_list_for_authenticated_user",
        "List repositories for the authenticated user. Lists repositories that the authenticated user has explicit permission to access.",
        &[(
            "visibility",
            "Limit results to repositories with the specified visibility.",
        )],
    ),
    (
        "activity_star_repo_for_authenticated_user",
        "Star a repository for the authenticated user.",
        &[("repo", "The name of the repository.")],
    ),
    (
        "chat_postMessage",
        "Sends a message to a channel.",
        &[
            ("channel", "Channel, private group, or IM channel to send message to."),
            ("text", "The text of the message."),
        ],
    ),
];

fn catalog() -> crate::Catalog {
    let mut text = String::from("toolkits:\n  - name: api\n    tools:\n");
    for (name, description, inputs) in TOOLS {
        text.push_str(&format!(
            "      - name: {name}\n        description: \"{description}\"\n"
        ));
        text.push_str("        versions:\n          - version: 1.0.0\n            returns_nothing: true\n            backend: { kind: static, output: {} }\n");
        if !inputs.is_empty() {
            text.push_str("            inputs:\n");
            for (input, about) in *inputs {
                text.push_str(&format!(
                    "              - {{ name: {input}, description: \"{about}\" }}\n"
                ));
            }
        }
    }
    Loader::default()
        .load(&[Source {
            name: "api.yaml".into(),
            text,
        }])
        .expect("the test catalog loads")
}

/// The names of the first `k` tools found for `query`.
fn top(catalog: &crate::Catalog, query: &str, k: usize) -> Vec<String> {
    catalog
        .search(query, k, |_| true)
        .into_iter()
        .map(|(tool, _)| tool.name.clone())
        .collect()
}

#[test]
fn a_request_in_a_users_words_finds_the_tool_first() {
    let catalog = catalog();
    for (query, want) in [
        ("put the 'bug' label on issue 42", "issues_add_labels"),
        ("rerun a failed CI workflow run", "actions_re_run_workflow_failed_jobs"),
        ("abort the workflow run", "actions_cancel_workflow_run"),
        ("take the wontfix label off issue 7", "issues_remove_label"),
        ("make a new label called triage", "issues_create_label"),
        ("open a PR from my branch", "pulls_create"),
        ("show my repos", "repos_list_for_authenticated_user"),
        ("stop a running workflow", "actions_cancel_workflow_run"),
        ("send a message to #general", "chat_postMessage"),
        ("postMessage", "chat_postMessage"),
    ] {
        let found = top(&catalog, query, 3);
        assert_eq!(
            found.first().map(String::as_str),
            Some(want),
            "{query:?} found {found:?}"
        );
    }
}

#[test]
fn the_users_own_word_outranks_its_synonym() {
    let catalog = catalog();
    // "delete" is the tool's own word; "remove" is its synonym, and the other tool's word.
    assert_eq!(top(&catalog, "delete a label", 1), ["issues_delete_label"]);
    assert_eq!(
        top(&catalog, "remove a label from an issue", 1),
        ["issues_remove_label"]
    );
}

#[test]
fn the_last_word_is_read_as_a_prefix() {
    let catalog = catalog();
    assert_eq!(top(&catalog, "hexadec", 1), ["issues_create_label"]);
    // Only the last word: an earlier fragment is a word of its own, found nowhere.
    assert!(top(&catalog, "hexadec zebra", 5).is_empty());
}

#[test]
fn nothing_matches_is_no_hit_and_stop_words_alone_find_nothing() {
    let catalog = catalog();
    assert!(top(&catalog, "zebra xylophone", 5).is_empty());
    assert!(top(&catalog, "the of and", 5).is_empty());
    assert!(top(&catalog, "", 5).is_empty());
}

#[test]
fn the_filter_and_the_limit_apply_and_scores_fall() {
    let catalog = catalog();
    let hits = catalog.search("label", 10, |t| t.name != "issues_delete_label");
    assert!(hits.len() >= 4, "{hits:?}");
    assert!(hits.iter().all(|(t, _)| t.name != "issues_delete_label"));
    assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
    assert_eq!(catalog.search("label", 2, |_| true).len(), 2);
}

#[test]
fn an_agents_catalog_searches_only_its_own_tools() {
    let catalog = catalog();
    let picked: Vec<_> = ["issues_create_label", "pulls_merge"]
        .iter()
        .map(|n| (Arc::clone(catalog.find(n).unwrap()), None, false))
        .collect();
    let own = catalog.restricted(&picked);
    assert_eq!(top(&own, "label", 5), ["issues_create_label"]);
}

#[test]
fn tools_too_alike_are_paired_and_distinct_ones_are_not() {
    let mut text = String::from("toolkits:\n  - name: api\n    tools:\n");
    for (name, description) in [
        ("get_user", "Get a user."),
        ("get_users", "Get the users."),
        ("list_repos", "List repositories of an organization."),
        ("create_gist", "Create a gist from files."),
    ] {
        text.push_str(&format!(
            "      - name: {name}\n        description: {description}\n        versions:\n          - version: 1.0.0\n            returns_nothing: true\n            backend: {{ kind: static, output: {{}} }}\n"
        ));
    }
    let catalog = Loader::default()
        .load(&[Source {
            name: "alike.yaml".into(),
            text,
        }])
        .unwrap();
    let pairs: Vec<(String, String)> = catalog
        .alike()
        .into_iter()
        .map(|(a, b)| (a.name.clone(), b.name.clone()))
        .collect();
    assert_eq!(pairs, [("get_user".to_owned(), "get_users".to_owned())]);
}

#[test]
fn a_large_catalog_is_searched_quickly() {
    let catalog = Loader::default()
        .load(&crate::testing::generated_catalog_files(2_000, 2))
        .unwrap();
    let started = std::time::Instant::now();
    let hits = catalog.search("generated tool number 1234 forecast city", 5, |_| true);
    let took = started.elapsed();
    assert_eq!(hits[0].0.name, "tool_01234");
    // Debug builds are slow; the release figure (100,000 tools) is in BENCHMARKS.md.
    assert!(took < std::time::Duration::from_millis(500), "{took:?}");
}
