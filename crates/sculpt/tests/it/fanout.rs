//! Issue #13: upstream pagination (a `Link` header, a next URL or a cursor in the body, page
//! numbers) and `for_each` fan-out over an earlier step's list, bounded in pages, elements and
//! requests in flight, never following a next page to another origin.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::support::{call, engine, failure, problems, serve, tool};

const OUT: &str = r#"[{name: all, type: json, description: "Everything gathered."}]"#;

/// Tickets 1..=7 in pages of `size` (default 3), offered four ways: `/linked` (a `Link`
/// header), `/urls` (a `next` URL in the body), `/cursors` (a `next_cursor`), `/numbered`
/// (pages numbered from 1, the last one empty); users by id, slowly, counting requests in
/// flight.
fn desk(in_flight: Arc<AtomicUsize>, most: Arc<AtomicUsize>, elsewhere: String) -> Router {
    fn page(n: usize) -> Vec<Value> {
        (1..=7usize)
            .skip((n - 1) * 3)
            .take(3)
            .map(|id| json!({"id": id, "assignee": format!("u{}", id % 2)}))
            .collect()
    }
    let number = |q: &std::collections::HashMap<String, String>, key: &str| {
        q.get(key).and_then(|p| p.parse::<usize>().ok()).unwrap_or(1)
    };
    Router::new()
        .route(
            "/linked",
            get(
                move |Query(q): Query<std::collections::HashMap<String, String>>| async move {
                    let n = number(&q, "page");
                    let mut headers = HeaderMap::new();
                    if n < 3 {
                        let link = format!("</linked?page={}>; rel=\"next\", </linked?page=3>; rel=\"last\"", n + 1);
                        headers.insert("link", link.parse().unwrap());
                    }
                    (headers, axum::Json(json!({"results": page(n)})))
                },
            ),
        )
        .route(
            "/urls",
            get(move |Query(q): Query<std::collections::HashMap<String, String>>| {
                let elsewhere = elsewhere.clone();
                async move {
                    let n = number(&q, "page");
                    let next = match (n, q.contains_key("away")) {
                        (1, true) => json!(format!("{elsewhere}/urls?page=2")),
                        (1 | 2, _) => json!(format!("/urls?page={}", n + 1)),
                        _ => Value::Null,
                    };
                    axum::Json(json!({"results": page(n), "next": next}))
                }
            }),
        )
        .route(
            "/cursors",
            get(
                move |Query(q): Query<std::collections::HashMap<String, String>>| async move {
                    let n = q
                        .get("after")
                        .map_or(1, |c| c.trim_start_matches('c').parse::<usize>().unwrap_or(1) + 1);
                    let next = if n < 3 { json!(format!("c{n}")) } else { Value::Null };
                    axum::Json(json!({"items": page(n), "next_cursor": next}))
                },
            ),
        )
        .route(
            "/numbered",
            get(
                move |Query(q): Query<std::collections::HashMap<String, String>>| async move {
                    let n = number(&q, "p");
                    axum::Json(if n <= 3 { json!(page(n)) } else { json!([]) })
                },
            ),
        )
        .route(
            "/users/{id}",
            get(move |Path(id): Path<String>| {
                let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
                async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    axum::Json(json!({"id": id, "name": format!("User {id}")}))
                }
            }),
        )
        .route(
            "/notes/{id}",
            post(|Path(id): Path<u32>| async move {
                if id == 2 {
                    (StatusCode::BAD_GATEWAY, axum::Json(json!({"error": "down"})))
                } else {
                    (StatusCode::CREATED, axum::Json(json!({"note": id})))
                }
            }),
        )
}

async fn upstream() -> (String, Arc<AtomicUsize>) {
    let most = Arc::new(AtomicUsize::new(0));
    let other = serve(Router::new()).await;
    let up = serve(desk(Arc::new(AtomicUsize::new(0)), Arc::clone(&most), other.base)).await;
    (up.base, most)
}

/// A one-step catalog reading `path` with `paginate`.
fn paged(path: &str, paginate: &str) -> String {
    tool(
        "[]",
        OUT,
        &format!(
            "kind: http\nbase_url: BASE\nsteps:\n  - name: list\n    path: {path}\n    paginate: {paginate}\noutputs: {{ all: list.body }}\n"
        ),
    )
}

async fn ids(catalog: &str, base: &str) -> Vec<u64> {
    let output = call(&engine(catalog, base, &[]), json!({})).await.unwrap();
    output["all"]
        .as_array()
        .unwrap_or_else(|| panic!("{output:?}"))
        .iter()
        .filter_map(|t| t["id"].as_u64())
        .collect()
}

#[tokio::test]
async fn pages_are_followed_by_link_header_next_url_cursor_and_number() {
    let (base, _) = upstream().await;
    let all: Vec<u64> = (1..=7).collect();
    assert_eq!(
        ids(&paged("/linked", "{ items: body.results, next_link: true }"), &base).await,
        all
    );
    assert_eq!(
        ids(&paged("/urls", "{ items: body.results, next_url: body.next }"), &base).await,
        all
    );
    assert_eq!(
        ids(
            &paged(
                "/cursors",
                "{ items: body.items, cursor: body.next_cursor, cursor_param: after }"
            ),
            &base
        )
        .await,
        all
    );
    assert_eq!(
        ids(&paged("/numbered", "{ page_param: p }"), &base).await,
        all,
        "until an empty page"
    );
    // Capped: two pages, and what they had.
    assert_eq!(
        ids(
            &paged("/linked", "{ items: body.results, next_link: true, max_pages: 2 }"),
            &base
        )
        .await,
        (1..=6).collect::<Vec<u64>>()
    );
}

#[tokio::test]
async fn a_next_page_on_another_origin_is_not_followed() {
    let (base, _) = upstream().await;
    let catalog = paged("/urls?away=1", "{ items: body.results, next_url: body.next }");
    let f = failure(call(&engine(&catalog, &base, &[]), json!({})).await);
    assert_eq!(f.code.as_deref(), Some("upstream_redirect"), "{f:?}");
    assert!(f.developer_message.unwrap_or_default().contains("the next page is on"));
}

#[tokio::test]
async fn for_each_runs_once_per_element_bounded_in_count_and_concurrency() {
    let (base, most) = upstream().await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: tickets
    path: /linked
    paginate: { items: body.results, next_link: true }
  - name: assignees
    for_each: tickets.body
    path: "/users/{{item.assignee}}"
    query: { ticket: "{{item.id}}" }
    concurrency: 2
    max_items: 5
outputs: { all: assignees.body }
"#;
    let output = call(&engine(&tool("[]", OUT, backend), &base, &[]), json!({}))
        .await
        .unwrap();
    let names: Vec<&str> = output["all"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["User u1", "User u0", "User u1", "User u0", "User u1"],
        "in the list's order, the first 5"
    );
    assert_eq!(
        most.load(Ordering::SeqCst),
        2,
        "at most `concurrency` in flight, and more than one"
    );
}

#[tokio::test]
async fn a_for_each_that_changes_things_and_fails_midway_has_an_unknown_outcome() {
    let (base, _) = upstream().await;
    let backend = r#"
kind: http
base_url: BASE
steps:
  - name: tickets
    path: /numbered
    paginate: { page_param: p, max_pages: 1 }
  - name: notes
    method: POST
    for_each: tickets.body
    path: "/notes/{{item.id}}"
    concurrency: 1
    retries: 0
outputs: { all: notes.body }
"#;
    let f = failure(call(&engine(&tool("[]", OUT, backend), &base, &[]), json!({})).await);
    assert!(
        f.outcome_unknown && !f.retryable,
        "note 1 was written before note 2 failed: {f:?}"
    );
}

#[test]
fn fan_out_and_paging_mistakes_are_load_errors() {
    let one = |extra: &str| {
        tool(
            "[]",
            OUT,
            &format!(
                "kind: http\nbase_url: BASE\nsteps:\n  - name: a\n    path: /a\n  - name: b\n    path: /b\n{extra}outputs: {{ all: b.body }}\n"
            ),
        )
    };
    let cases = [
        ("    query: { x: \"{{item.id}}\" }\n", "`item` is the current element"),
        ("    for_each: input.x\n", "refers to input `x`"),
        (
            "    for_each: nope.body\n",
            "neither `input`, `secret`, `steps` nor an earlier step",
        ),
        ("    max_items: 3\n", "go with `for_each`"),
        ("    for_each: a.body\n    concurrency: 99\n", "from 1 to 16"),
        ("    paginate: { items: body.x }\n", "say one way to the next page"),
        ("    paginate: { cursor: body.c }\n", "`cursor` needs `cursor_param`"),
        (
            "    method: POST\n    paginate: { next_link: true }\n",
            "only an idempotent step follows pages",
        ),
        (
            "    paginate: { next_link: true, max_pages: 0 }\n",
            "`max_pages` is from 1 to 100",
        ),
    ];
    for (extra, expected) in cases {
        let found = problems(&one(extra)).join("\n");
        assert!(found.contains(expected), "{extra:?}: expected {expected:?} in\n{found}");
    }
}
