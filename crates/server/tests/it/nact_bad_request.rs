//! Requests that are wrong before any parameter is looked at: unknown tools and versions,
//! bad version numbers, bad paging, wrong media type, oversized bodies, wrong method or path.

use serde_json::json;

use crate::support::{Spawn, histories, invocation, with_query};

fn detail(problem: &serde_json::Value) -> &str {
    problem["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn an_unknown_tool_is_404() {
    let server = Spawn::bundled().start().await;
    let unknown_uuid = "00000000-0000-4000-8000-000000000000";
    for path in [
        "/nact/tools/no_such_tool",
        "/nact/tools/no_such_tool/versions",
        "/nact/tools/no_such_tool/versions/1",
        format!("/nact/tools/{unknown_uuid}").as_str(),
    ] {
        let problem = server.get(path).await.expect_problem(404);
        assert_eq!(problem["type"], "urn:toolhost:problem:unknown-tool", "{path}");
        assert_eq!(problem["retryable"], false);
    }
    for path in [
        "/nact/tools/no_such_tool:invoke",
        "/nact/tools/no_such_tool/versions/1:invoke",
    ] {
        let problem = server.post_json(path, &invocation(None, &[])).await.expect_problem(404);
        assert!(detail(&problem).contains("no_such_tool"), "{problem}");
    }
}

#[tokio::test]
async fn an_unknown_version_number_is_404() {
    let server = Spawn::bundled().start().await;
    let problem = server
        .get("/nact/tools/convert_length/versions/4")
        .await
        .expect_problem(404);
    assert_eq!(problem["type"], "urn:toolhost:problem:unknown-version");
    assert!(
        detail(&problem).contains("1 (1.0.0), 2 (1.1.0), 3 (1.2.0)"),
        "lists the served versions: {problem}"
    );
    let args = [("value", json!(1)), ("from", json!("METRE")), ("to", json!("FOOT"))];
    server
        .invoke("/nact/tools/convert_length/versions/4", &args)
        .await
        .expect_problem(404);
    server
        .invoke("/nact/tools/convert_length/versions/4294967295", &args)
        .await
        .expect_problem(404);
}

#[tokio::test]
async fn a_version_that_is_not_a_positive_integer_is_400() {
    let server = Spawn::bundled().start().await;
    let args = [("value", json!(1)), ("from", json!("METRE")), ("to", json!("FOOT"))];
    for version in ["0", "-1", "abc", "1.2.0", "1.5", "%20"] {
        let problem = server
            .get(&format!("/nact/tools/convert_length/versions/{version}"))
            .await
            .expect_problem(400);
        assert!(detail(&problem).contains("positive integer"), "{version}: {problem}");
        let problem = server
            .invoke(&format!("/nact/tools/convert_length/versions/{version}"), &args)
            .await
            .expect_problem(400);
        assert!(detail(&problem).contains("positive integer"), "{version}: {problem}");
    }
}

#[tokio::test]
async fn a_page_limit_that_is_not_a_positive_integer_is_400() {
    let server = Spawn::new(vec![histories()]).start().await;
    for path in ["/nact/tools", "/nact/tools/evolving_tool/versions"] {
        for limit in ["0", "x", "-5", "2.5", "", "00000000000000000000000000", "1e3"] {
            let problem = server
                .get(&with_query(path, "pageLimit", limit))
                .await
                .expect_problem(400);
            assert!(
                detail(&problem).contains("pageLimit"),
                "{path} pageLimit={limit}: {problem}"
            );
        }
    }
}

#[tokio::test]
async fn a_huge_page_limit_is_clamped_to_500() {
    let server = Spawn::new(vec![histories()]).start().await;
    for path in [
        "/nact/tools?pageLimit=100000",
        "/nact/tools/evolving_tool/versions?pageLimit=100000",
        "/nact/tools?pageLimit=99999999999999999999999",
    ] {
        let reply = server.get(path).await;
        let page = reply.expect_ok();
        assert_eq!(page["paging"]["pageLimit"], 500, "{path}");
    }
}

#[tokio::test]
async fn a_forged_page_cursor_is_400() {
    let server = Spawn::new(vec![histories()]).start().await;
    let real = server.get("/nact/tools?pageLimit=1").await.expect_ok()["paging"]["next"]
        .as_str()
        .expect("next")
        .to_owned();
    let (data, sum) = real.rsplit_once('.').expect("cursor shape");
    // The real cursor with the last checksum digit changed.
    let (head, last) = sum.split_at(sum.len() - 1);
    let flipped = format!("{data}.{head}{}", if last == "0" { "1" } else { "0" });
    // (An empty one is no cursor: the first page, nact_listing.rs::an_empty_page_cursor_means_the_first_page.)
    for cursor in [
        "abc",
        "dDp6eno.000000000000",
        flipped.as_str(),
        format!("x{real}").as_str(),
        "🦀",
    ] {
        let reply = server.get(&with_query("/nact/tools", "pageCursor", cursor)).await;
        let problem = reply.expect_problem(400);
        assert!(detail(&problem).contains("pageCursor"), "{cursor}: {problem}");
    }
    server
        .get(&with_query("/nact/tools", "pageCursor", &real))
        .await
        .expect_ok();
}

#[tokio::test]
async fn a_cursor_from_another_listing_is_400() {
    let server = Spawn::new(vec![histories()]).start().await;
    let tools_cursor = server.get("/nact/tools?pageLimit=1").await.expect_ok()["paging"]["next"]
        .as_str()
        .expect("next")
        .to_owned();
    let versions_cursor = server
        .get("/nact/tools/evolving_tool/versions?pageLimit=1")
        .await
        .expect_ok()["paging"]["next"]
        .as_str()
        .expect("next")
        .to_owned();

    let path = with_query("/nact/tools/evolving_tool/versions", "pageCursor", &tools_cursor);
    let problem = server.get(&path).await.expect_problem(400);
    assert!(detail(&problem).contains("pageCursor"), "{problem}");

    let path = with_query("/nact/tools", "pageCursor", &versions_cursor);
    server.get(&path).await.expect_problem(400);

    // One tool's version cursor does not continue another tool's listing.
    let path = with_query("/nact/tools/withdrawn_latest/versions", "pageCursor", &versions_cursor);
    let problem = server.get(&path).await.expect_problem(400);
    assert!(detail(&problem).contains("pageCursor"), "{problem}");
}

#[tokio::test]
async fn an_unknown_query_parameter_is_400_naming_it() {
    let server = Spawn::new(vec![histories()]).start().await;
    for path in [
        "/nact/tools?limit=5",
        "/nact/tools?pagelimit=5",
        "/nact/tools/evolving_tool/versions?tag=x",
        "/nact/tools/evolving_tool/versions?cursor=x",
    ] {
        let problem = server.get(path).await.expect_problem(400);
        let key = path.split('?').nth(1).and_then(|q| q.split('=').next()).expect("key");
        assert!(detail(&problem).contains(&format!("`{key}`")), "{path}: {problem}");
    }
}

#[tokio::test]
async fn a_body_over_the_default_limit_is_413() {
    let server = Spawn::bundled().start().await;
    // 10 MB of otherwise valid JSON; the default limit is 1 MiB.
    let body = invocation(
        None,
        &[("text", json!("a".repeat(10 * 1024 * 1024))), ("case", json!("UPPER"))],
    );
    let problem = server
        .post_json("/nact/tools/convert_text_case:invoke", &body)
        .await
        .expect_problem(413);
    assert!(detail(&problem).contains("larger"), "{problem}");
}

#[tokio::test]
async fn a_body_over_a_configured_limit_is_413() {
    let server = Spawn::bundled().with_body_limit(1024).start().await;
    let small = invocation(None, &[("text", json!("a".repeat(500))), ("case", json!("UPPER"))]);
    server
        .post_json("/nact/tools/convert_text_case:invoke", &small)
        .await
        .expect_ok();
    let large = invocation(None, &[("text", json!("a".repeat(2000))), ("case", json!("UPPER"))]);
    server
        .post_json("/nact/tools/convert_text_case:invoke", &large)
        .await
        .expect_problem(413);
}

#[tokio::test]
async fn a_body_that_is_not_json_by_content_type_is_415() {
    let server = Spawn::bundled().start().await;
    let body = serde_json::to_vec(&invocation(None, &[("a", json!(1)), ("b", json!(2))])).expect("json");
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let reply = server
            .post("/nact/tools/add_numbers:invoke", content_type, body.clone())
            .await;
        let problem = reply.expect_problem(415);
        assert!(
            detail(&problem).contains("application/json"),
            "{content_type:?}: {problem}"
        );
    }
    // JSON with parameters, and `+json` types, are JSON.
    for content_type in [
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
        "application/vnd.nact+json",
    ] {
        server
            .post("/nact/tools/add_numbers:invoke", Some(content_type), body.clone())
            .await
            .expect_ok();
    }
}

#[tokio::test]
async fn post_to_a_tool_without_invoke_is_405() {
    let server = Spawn::bundled().start().await;
    let body = invocation(None, &[("a", json!(1)), ("b", json!(2))]);
    for path in ["/nact/tools/add_numbers", "/nact/tools/add_numbers/versions/1"] {
        let problem = server.post_json(path, &body).await.expect_problem(405);
        assert!(
            detail(&problem).contains(":invoke"),
            "{path}: says where to send it: {problem}"
        );
    }
    for path in ["/nact/tools", "/nact/tools/add_numbers/versions"] {
        server.post_json(path, &body).await.expect_problem(405);
    }
}

#[tokio::test]
async fn other_methods_are_405() {
    let server = Spawn::bundled().start().await;
    let client = reqwest::Client::builder().no_proxy().build().expect("client");
    for path in [
        "/nact/tools",
        "/nact/tools/add_numbers",
        "/nact/tools/add_numbers/versions/1",
    ] {
        let response = client
            .delete(format!("{}{path}", server.base))
            .send()
            .await
            .expect("response");
        assert_eq!(response.status().as_u16(), 405, "{path}");
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert_eq!(content_type, crate::support::PROBLEM, "{path}");
        let allow = response
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            allow.contains("GET"),
            "{path}: RFC 9110 §15.5.6, a 405 lists the allowed methods: {allow:?}"
        );
    }
}

#[tokio::test]
async fn post_without_invoke_names_the_allowed_methods() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .post_json("/nact/tools/add_numbers", &invocation(None, &[]))
        .await;
    reply.expect_problem(405);
    assert!(
        reply.header("allow").is_some_and(|a| a.contains("GET")),
        "RFC 9110 §15.5.6: {:?}",
        reply.headers
    );
}

#[tokio::test]
async fn an_unknown_route_is_a_404_problem() {
    let server = Spawn::bundled().start().await;
    for path in [
        "/",
        "/nope",
        "/nact",
        "/nact/tool",
        "/nact/tools/add_numbers/versions/1/extra",
        "/tools",
    ] {
        let problem = server.get(path).await.expect_problem(404);
        assert_eq!(problem["type"], "urn:toolhost:problem:not-found", "{path}");
    }
    server.post_json("/nact/invoke", &json!({})).await.expect_problem(404);
}

/// Issue #22.8: a GET of an invocation URL is 405 with `Allow: POST`, not an unknown tool.
#[tokio::test]
async fn get_of_an_invocation_url_is_405_allow_post() {
    let server = Spawn::bundled().start().await;
    for path in [
        "/nact/tools/add_numbers:invoke",
        "/nact/tools/add_numbers/versions/1:invoke",
    ] {
        let reply = server.get(path).await;
        reply.expect_problem(405);
        assert_eq!(reply.header("allow"), Some("POST"), "{path}");
    }
}
