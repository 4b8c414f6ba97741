//! Enumeration: `GET /nact/tools`, one tool, its versions (N-ACT §6.1–6.4, docs/protocols.md §3).

use serde_json::Value;

use crate::support::{Spawn, generated, histories, is_uuid, names, with_query};

fn all_names(pages: &[Value]) -> Vec<String> {
    pages.iter().flat_map(names).collect()
}

fn version_numbers(page: &Value) -> Vec<u64> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|s| s["version"].as_u64().expect("integer version"))
        .collect()
}

#[tokio::test]
async fn pages_walk_a_generated_catalog_end_to_end() {
    let server = Spawn::new(vec![generated(120)]).start().await;
    let pages = server.pages("/nact/tools?pageLimit=25").await;
    let sizes: Vec<usize> = pages.iter().map(|p| names(p).len()).collect();
    assert_eq!(sizes, [25, 25, 25, 25, 20]);
    let expected: Vec<String> = (0..120).map(|i| format!("tool_{i:03}")).collect();
    assert_eq!(all_names(&pages), expected, "every tool exactly once, in name order");
    for page in &pages {
        assert_eq!(page["paging"]["pageLimit"], 25);
    }
    for page in &pages[..4] {
        assert!(
            page["paging"]["next"].is_string(),
            "a cursor on every page but the last"
        );
    }
    let last = &pages[4]["paging"];
    assert!(
        last.get("next").is_none(),
        "`next` is absent (not null) on the last page: {last}"
    );
}

#[tokio::test]
async fn the_last_page_has_no_next_even_when_it_is_exactly_full() {
    let server = Spawn::new(vec![generated(120)]).start().await;
    let pages = server.pages("/nact/tools?pageLimit=40").await;
    assert_eq!(pages.iter().map(|p| names(p).len()).collect::<Vec<_>>(), [40, 40, 40]);
    let pages = server.pages("/nact/tools?pageLimit=120").await;
    assert_eq!(pages.len(), 1);
    assert!(pages[0]["paging"].get("next").is_none());
}

#[tokio::test]
async fn page_limit_defaults_to_50() {
    let server = Spawn::new(vec![generated(120)]).start().await;
    let pages = server.pages("/nact/tools").await;
    assert_eq!(pages.iter().map(|p| names(p).len()).collect::<Vec<_>>(), [50, 50, 20]);
    for page in &pages {
        assert_eq!(page["paging"]["pageLimit"], 50, "the applied limit is returned");
    }
}

#[tokio::test]
async fn page_limit_is_clamped_to_500_and_the_applied_value_returned() {
    let server = Spawn::new(vec![generated(510)]).start().await;
    let pages = server.pages("/nact/tools?pageLimit=100000").await;
    assert_eq!(pages.iter().map(|p| names(p).len()).collect::<Vec<_>>(), [500, 10]);
    assert_eq!(pages[0]["paging"]["pageLimit"], 500);
    assert_eq!(pages[1]["paging"]["pageLimit"], 500);
    let exact = server.get("/nact/tools?pageLimit=500").await.expect_ok();
    assert_eq!(exact["paging"]["pageLimit"], 500);
}

#[tokio::test]
async fn tag_filter_is_repeatable_and_every_tag_must_match() {
    let server = Spawn::new(vec![generated(120)]).start().await;
    let count = |query: &'static str| {
        let server = &server;
        async move { all_names(&server.pages(&format!("/nact/tools?pageLimit=500&{query}")).await) }
    };
    assert_eq!(count("tag=odd").await.len(), 60);
    let odd_triples = count("tag=odd&tag=triple").await;
    let expected: Vec<String> = (0..120)
        .filter(|i| i % 6 == 3)
        .map(|i| format!("tool_{i:03}"))
        .collect();
    assert_eq!(odd_triples, expected, "both tags must be on the tool");
    assert_eq!(
        count("tag=triple&tag=odd").await,
        expected,
        "the order of tags does not matter"
    );
    // The toolkit counts as a tag (docs/protocols.md §3).
    let kit1: Vec<String> = (30..60).map(|i| format!("tool_{i:03}")).collect();
    assert_eq!(count("tag=Kit1").await, kit1);
    assert_eq!(count("tag=Kit1&tag=even").await.len(), 15);
    assert_eq!(count("tag=Kit1&tag=Kit2").await, Vec::<String>::new());

    let none = server.get("/nact/tools?tag=no_such_tag").await.expect_ok();
    assert_eq!(none["items"], serde_json::json!([]));
    assert!(none["paging"].get("next").is_none());
}

#[tokio::test]
async fn tag_filter_pages_with_cursors() {
    let server = Spawn::new(vec![generated(120)]).start().await;
    let pages = server.pages("/nact/tools?tag=odd&pageLimit=25").await;
    assert_eq!(pages.iter().map(|p| names(p).len()).collect::<Vec<_>>(), [25, 25, 10]);
    let expected: Vec<String> = (0..120)
        .filter(|i| i % 2 == 1)
        .map(|i| format!("tool_{i:03}"))
        .collect();
    assert_eq!(all_names(&pages), expected);
}

#[tokio::test]
async fn tag_filter_on_the_bundled_catalog() {
    let server = Spawn::bundled().start().await;
    let math = server.get("/nact/tools?tag=math").await.expect_ok();
    assert_eq!(names(&math), ["add_numbers", "convert_length", "divide_numbers"]);
    let both = server.get("/nact/tools?tag=math&tag=Units").await.expect_ok();
    assert_eq!(names(&both), ["convert_length"]);
    let signature = &both["items"][0];
    assert_eq!(
        signature["tags"],
        serde_json::json!(["Units", "math", "conversion"]),
        "toolkit first, then the tags"
    );
}

#[tokio::test]
async fn q_finds_by_words_of_name_or_description_in_any_case() {
    let server = Spawn::new(vec![generated(120)]).start().await;
    let weather: Vec<String> = (0..120)
        .filter(|i| i % 10 == 7)
        .map(|i| format!("tool_{i:03}"))
        .collect();
    for q in ["weather", "WEATHER", "wEaThEr", "the weather"] {
        let page = server
            .get(&with_query("/nact/tools?pageLimit=500", "q", q))
            .await
            .expect_ok();
        assert_eq!(
            names(&page),
            weather,
            "q={q} matches the description; equal scores keep name order"
        );
    }
    // Ranked (issue #42): the tool whose name the query says comes first.
    let by_name = server.get("/nact/tools?q=TOOL_011").await.expect_ok();
    assert_eq!(names(&by_name)[0], "tool_011", "q matches the name: {by_name}");
    let with_tag = server.get("/nact/tools?q=weather&tag=Kit0").await.expect_ok();
    assert_eq!(
        names(&with_tag),
        ["tool_007", "tool_017", "tool_027"],
        "q and tag combine"
    );
    let paged = server.pages("/nact/tools?q=weather&pageLimit=5").await;
    assert_eq!(all_names(&paged), weather, "q pages with cursors");

    let bundled = Spawn::bundled().start().await;
    let page = bundled.get("/nact/tools?q=QUOTIENT").await.expect_ok();
    assert_eq!(names(&page), ["divide_numbers"]);
    let page = bundled.get("/nact/tools?q=zzz_nothing").await.expect_ok();
    assert_eq!(page["items"], serde_json::json!([]));
}

#[tokio::test]
async fn every_bundled_tool_is_listed_at_its_latest_version() {
    let server = Spawn::bundled().start().await;
    let page = server.get("/nact/tools").await.expect_ok();
    assert_eq!(
        names(&page),
        [
            "add_numbers",
            "convert_length",
            "convert_text_case",
            "count_words_in_text",
            "divide_numbers",
            "lookup_country_by_code"
        ]
    );
    for signature in page["items"].as_array().expect("items") {
        // N-ACT §6.1: the enumeration returns the latest version, so version == currentVersion.
        assert!(
            signature["version"].is_u64() && signature["currentVersion"].is_u64(),
            "integers: {signature}"
        );
        assert_eq!(signature["version"], signature["currentVersion"], "{signature}");
        assert!(is_uuid(signature["toolId"].as_str().expect("toolId")), "{signature}");
        let name = signature["name"].as_str().expect("name");
        let one = server.get(&format!("/nact/tools/{name}")).await.expect_ok();
        assert_eq!(&one, signature, "the listing item is the tool's signature");
    }
}

#[tokio::test]
async fn a_tool_by_uuid_and_by_name_is_the_same_signature() {
    let server = Spawn::bundled().start().await;
    let id = server.tool_id("convert_length");
    let by_name = server.get("/nact/tools/convert_length").await;
    let by_id = server.get(&format!("/nact/tools/{id}")).await;
    let by_upper_id = server.get(&format!("/nact/tools/{}", id.to_uppercase())).await;
    let signature = by_name.expect_ok();
    assert_eq!(by_id.expect_ok(), signature);
    assert_eq!(by_upper_id.expect_ok(), signature);
    assert_eq!(by_name.header("etag"), by_id.header("etag"));
    assert_eq!(signature["toolId"], id.as_str());
    assert_eq!(signature["name"], "convert_length");
    assert_eq!(signature["version"], 3, "the current version (N-ACT §6.2)");
    assert_eq!(signature["currentVersion"], 3);
    assert_eq!(signature["semver"], "1.2.0");
}

#[tokio::test]
async fn listings_and_signatures_carry_etag_and_cache_control_and_answer_304() {
    let server = Spawn::new(vec![histories()])
        .with_sources(vec![generated(10)])
        .start()
        .await;
    for path in [
        "/nact/tools",
        "/nact/tools?pageLimit=2",
        "/nact/tools?tag=Kit0&q=tool",
        "/nact/tools/evolving_tool",
        "/nact/tools/evolving_tool/versions",
        "/nact/tools/evolving_tool/versions?pageLimit=2",
        "/nact/tools/evolving_tool/versions/2",
    ] {
        let first = server.get(path).await;
        first.expect_ok();
        let etag = first
            .header("etag")
            .unwrap_or_else(|| panic!("{path}: ETag"))
            .to_owned();
        assert!(
            etag.starts_with('"') && etag.ends_with('"'),
            "{path}: a quoted entity tag, got {etag}"
        );
        assert!(
            first.header("cache-control").is_some_and(|c| c.contains("max-age")),
            "{path}: Cache-Control"
        );

        let again = server.get(path).await;
        assert_eq!(again.header("etag"), Some(etag.as_str()), "{path}: the tag is stable");

        let cached = server.get_if_none_match(path, &etag).await;
        assert_eq!(cached.status, 304, "{path}: If-None-Match with the current tag");
        assert!(cached.text.is_empty(), "{path}: a 304 has no body");
        assert_eq!(
            cached.header("etag"),
            Some(etag.as_str()),
            "{path}: a 304 repeats the tag"
        );
        assert!(
            cached.header("cache-control").is_some(),
            "{path}: a 304 repeats Cache-Control"
        );

        let weak = server.get_if_none_match(path, &format!("\"other\", W/{etag}")).await;
        assert_eq!(weak.status, 304, "{path}: weak comparison, any tag in the list");

        let stale = server.get_if_none_match(path, "\"not-the-tag\"").await;
        stale.expect_ok();
    }
    let page1 = server.get("/nact/tools?pageLimit=2").await;
    let page2 = server
        .get(&format!(
            "/nact/tools?pageLimit=2&pageCursor={}",
            page1.json()["paging"]["next"].as_str().expect("next")
        ))
        .await;
    assert_ne!(
        page1.header("etag"),
        page2.header("etag"),
        "different pages, different tags"
    );
}

#[tokio::test]
async fn versions_are_newest_first_and_paginated_with_a_cursor() {
    let server = Spawn::new(vec![histories()]).start().await;
    let all = server.get("/nact/tools/evolving_tool/versions").await.expect_ok();
    // N-ACT §6.3: most recent to oldest; number 4 is retired and so not listed.
    assert_eq!(version_numbers(&all), [7, 6, 5, 3, 2, 1]);
    assert_eq!(all["paging"]["pageLimit"], 50);
    assert!(all["paging"].get("next").is_none());
    for signature in all["items"].as_array().expect("items") {
        assert_eq!(signature["currentVersion"], 7, "{signature}");
        assert_eq!(signature["name"], "evolving_tool");
    }

    let pages = server.pages("/nact/tools/evolving_tool/versions?pageLimit=2").await;
    let numbers: Vec<Vec<u64>> = pages.iter().map(version_numbers).collect();
    assert_eq!(numbers, [vec![7, 6], vec![5, 3], vec![2, 1]]);
    assert!(pages.iter().all(|p| p["paging"]["pageLimit"] == 2));

    // The same listing by UUID.
    let id = server.tool_id("evolving_tool");
    let by_id = server.pages(&format!("/nact/tools/{id}/versions?pageLimit=4")).await;
    assert_eq!(
        by_id.iter().map(version_numbers).collect::<Vec<_>>(),
        [vec![7, 6, 5, 3], vec![2, 1]]
    );
}

#[tokio::test]
async fn one_version_by_number() {
    let server = Spawn::new(vec![histories()]).start().await;
    let v2 = server.get("/nact/tools/evolving_tool/versions/2").await.expect_ok();
    assert_eq!(v2["version"], 2);
    assert_eq!(
        v2["currentVersion"], 7,
        "currentVersion names the newest version, not this one"
    );
    assert_eq!(v2["semver"], "1.1.0");
    let v7 = server.get("/nact/tools/evolving_tool/versions/7").await.expect_ok();
    let current = server.get("/nact/tools/evolving_tool").await.expect_ok();
    assert_eq!(v7, current, "the newest version's signature is the tool's signature");
    let listed = server.get("/nact/tools/evolving_tool/versions").await.expect_ok();
    assert_eq!(
        listed["items"][4], v2,
        "the listed signature equals the one fetched alone"
    );
}

#[tokio::test]
async fn retired_versions_are_neither_listed_nor_served() {
    let server = Spawn::new(vec![histories()]).start().await;
    let retired = server
        .get("/nact/tools/evolving_tool/versions/4")
        .await
        .expect_problem(404);
    assert!(
        retired["detail"].as_str().unwrap_or_default().contains('4'),
        "{retired}"
    );
    server
        .invoke("/nact/tools/evolving_tool/versions/4", &[("text", "x".into())])
        .await
        .expect_problem(404);
    server
        .get("/nact/tools/evolving_tool/versions/8")
        .await
        .expect_problem(404);

    // A retired newest version: the one before it is current.
    let current = server.get("/nact/tools/withdrawn_latest").await.expect_ok();
    assert_eq!(current["version"], 2);
    assert_eq!(current["currentVersion"], 2);
    let listed = server.get("/nact/tools/withdrawn_latest/versions").await.expect_ok();
    assert_eq!(version_numbers(&listed), [2, 1]);
    assert!(
        listed["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|s| s["currentVersion"] == 2)
    );
    server
        .get("/nact/tools/withdrawn_latest/versions/3")
        .await
        .expect_problem(404);
    let ran = server
        .invoke("/nact/tools/withdrawn_latest", &[("text", "hi".into())])
        .await
        .expect_ok();
    assert_eq!(ran["version"], 2, "invoking without a version runs the current one");
}

/// Issue #22.8 (N-ACT §6.4): paging through 1,000 tools with a small page size, while the
/// catalog is replaced under it (a tool removed and one added mid-walk), gives every tool that
/// was served throughout exactly once, in order, with no repeat and no gap.
#[tokio::test]
async fn a_thousand_tools_page_cleanly_across_a_reload() {
    use toolhost_core::catalog::{Loader, Source};
    let catalog_text = |names: &[String]| {
        let mut yaml = String::from("toolkits:\n  - name: Bulk\n    tools:\n");
        for name in names {
            yaml.push_str(&format!(
                "      - name: {name}\n        description: Tool {name}.\n        versions:\n          - version: 1.0.0\n            inputs: [{{ name: text, description: Any text. }}]\n            outputs: [{{ name: text, type: string, description: The text. }}]\n            backend: {{ kind: native, function: testing.echo }}\n"
            ));
        }
        vec![Source {
            name: "bulk.yaml".into(),
            text: yaml,
        }]
    };
    let names: Vec<String> = (0..1000).map(|i| format!("tool_{i:04}")).collect();
    let server = crate::support::Spawn::new(catalog_text(&names)).start().await;
    let mut seen = Vec::new();
    let mut path = "/nact/tools?pageLimit=37".to_owned();
    let mut pages = 0;
    loop {
        let page = server.get(&path).await.expect_ok();
        seen.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["name"].as_str().unwrap().to_owned()),
        );
        pages += 1;
        if pages == 10 {
            // Reload: tool_0100 (already listed) and tool_0900 (not yet) go, tool_0950x comes.
            let mut next: Vec<String> = names
                .iter()
                .filter(|n| *n != "tool_0100" && *n != "tool_0900")
                .cloned()
                .collect();
            next.push("tool_0950x".to_owned());
            let loader = Loader::default();
            server.engine.replace(loader.load(&catalog_text(&next)).unwrap());
        }
        match page["paging"]["next"].as_str() {
            Some(cursor) => path = format!("/nact/tools?pageLimit=37&pageCursor={cursor}"),
            None => break,
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "no tool listed twice");
    assert_eq!(sorted, seen, "in order");
    for name in &names {
        if name != "tool_0900" {
            assert!(seen.contains(name), "{name} was served throughout and is listed");
        }
    }
    assert!(!seen.contains(&"tool_0900".to_owned()), "removed before its page");
    assert!(
        seen.contains(&"tool_0950x".to_owned()),
        "added after the cursor, so it is listed"
    );
    assert_eq!(pages, seen.len().div_ceil(37));
}

/// Issue #31.6: `pageCursor=` (empty) is no cursor: the first page, on both listings.
#[tokio::test]
async fn an_empty_page_cursor_means_the_first_page() {
    let server = Spawn::new(vec![histories()]).start().await;
    for path in [
        "/nact/tools?pageLimit=1",
        "/nact/tools/evolving_tool/versions?pageLimit=2",
    ] {
        let first = server.get(path).await.expect_ok();
        let empty = server.get(&format!("{path}&pageCursor=")).await.expect_ok();
        assert_eq!(empty, first, "{path}");
        assert!(first["paging"]["next"].is_string(), "{path}: there is a next page");
    }
}
