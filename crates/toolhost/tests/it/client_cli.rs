//! The client subcommands as a user runs them: `tools`, `describe`, `call`, `lock`, `verify`,
//! `export`, against an in-process toolhost on 127.0.0.1 and toolhost itself over stdio.

use std::process::Output;

use serde_json::Value;

use crate::client_support::{Local, echo_catalog};
use crate::support::{BIN, Scratch};

/// Runs `toolhost ARGS` off the async runtime (the server under test runs on it).
async fn toolhost(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(BIN)
            .args(&args)
            .env("NO_COLOR", "1")
            .output()
            .expect("run toolhost")
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `args` plus the flags every test needs: loopback allowed, no cache.
fn net(list: &[&str]) -> Vec<String> {
    let mut v = args(list);
    v.extend(args(&["--allow-private", "--no-cache"]));
    v
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test]
async fn tools_describe_and_call() {
    let local = Local::start(&echo_catalog("Echo a city name back.", &["1.0.0"])).await;
    let nact = format!("{}/nact", local.base);

    // A URL the user typed is theirs to reach, loopback included, with a note.
    let typed = toolhost(args(&["tools", &nact, "--no-cache"])).await;
    assert!(typed.status.success(), "{}", stderr(&typed));
    assert!(stderr(&typed).contains("because you gave it"), "{}", stderr(&typed));
    let allowed = toolhost(args(&["tools", &nact, "--no-cache", "--allow-net", "127.0.0.1/32"])).await;
    assert!(allowed.status.success(), "{}", stderr(&allowed));

    let table = toolhost(net(&["tools", &nact])).await;
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains("NAME") && text.contains("echo_city") && text.contains("1.0.0"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "no colours off a terminal");

    let json = toolhost(net(&["tools", &nact, "--json"])).await;
    let tools: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(tools[0]["name"], "echo_city");
    assert_eq!(tools[0]["protocol"], "nact");
    assert_eq!(tools[0]["inputs"][0]["accepts"], "a string of at most 20 characters");

    let described = toolhost(net(&["describe", &nact, "echo_city"])).await;
    assert!(
        stdout(&described).contains("a string of at most 20 characters"),
        "{}",
        stdout(&described)
    );
    let unknown = toolhost(net(&["describe", &nact, "nope"])).await;
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("its tools are: echo_city"),
        "{}",
        stderr(&unknown)
    );

    let called = toolhost(net(&["call", &nact, "echo_city", "--arg", "city=Oslo"])).await;
    assert!(called.status.success(), "{}", stderr(&called));
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(result, serde_json::json!({"city": "Oslo"}));

    let invalid = toolhost(net(&[
        "call",
        &nact,
        "echo_city",
        "--input",
        r#"{"city": "Llanfairpwllgwyngyll-long", "x": 1}"#,
    ]))
    .await;
    assert_eq!(invalid.status.code(), Some(2), "invalid arguments exit 2");
    let message = stderr(&invalid);
    assert!(
        message.contains("`city` expects a string of at most 20 characters"),
        "{message}"
    );
    assert!(message.contains("has no parameter `x`"), "{message}");
}

#[tokio::test]
async fn a_failing_tool_exits_1_with_its_text() {
    let local = Local::bundled().await;
    for (url, name) in [
        (format!("{}/otc", local.base), "Calculator_divide_numbers"),
        (local.base.clone(), "divide_numbers"),
    ] {
        let out = toolhost(net(&["call", &url, name, "--arg", "dividend=1", "--arg", "divisor=0"])).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("non-zero divisor"), "{}", stderr(&out));
    }
}

#[tokio::test]
async fn lock_then_verify_finds_drift() {
    let local = Local::start(&echo_catalog("Echo a city name back.", &["1.0.0"])).await;
    let dir = Scratch::new();
    let lockfile = dir.0.join("toolhost.lock");
    let lockfile = lockfile.to_str().unwrap();
    let nact = format!("{}/nact", local.base);
    let otc = format!("{}/otc", local.base);
    // Credentials in a URL never reach the lockfile (it is committed).
    let nact_with_secrets = nact.replace("http://", "http://someone:Pw-Secret-8@");
    let locked = toolhost(net(&["lock", &nact_with_secrets, &otc, "-o", lockfile])).await;
    assert!(locked.status.success(), "{}", stderr(&locked));
    let text = std::fs::read_to_string(lockfile).unwrap();
    assert!(
        !text.contains("Secret-8") && !text.contains("Secret-9") && !text.contains("someone"),
        "{text}"
    );
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["lockfile"], 1);
    assert_eq!(parsed["tools"].as_array().unwrap().len(), 2);
    assert!(parsed["tools"][0]["signature"].as_str().unwrap().starts_with("sha256:"));

    let ok = toolhost(net(&["verify", lockfile])).await;
    assert!(ok.status.success(), "{}{}", stdout(&ok), stderr(&ok));
    assert!(stdout(&ok).contains("unchanged"));

    local.replace(&echo_catalog("Echo a city name back.", &["1.0.0", "1.1.0"]));
    let newer = toolhost(net(&["verify", lockfile])).await;
    assert!(
        newer.status.success(),
        "a newer version is information: {}",
        stdout(&newer)
    );
    assert!(stdout(&newer).contains("1.1.0 is available"), "{}", stdout(&newer));

    local.replace(&echo_catalog("Echo any city name back.", &["1.0.0"]));
    let drift = toolhost(net(&["verify", lockfile])).await;
    assert_eq!(drift.status.code(), Some(1), "{}", stdout(&drift));
    assert!(stdout(&drift).contains("broke N-ACT's lock rule"), "{}", stdout(&drift));
    assert!(
        stderr(&drift).contains("2 of 2 pinned tools failed verification"),
        "{}",
        stderr(&drift)
    );
}

#[tokio::test]
async fn export_names_are_unique_and_map_back() {
    let local = Local::start(&echo_catalog("Echo a city name back.", &["1.0.0"])).await;
    let dir = Scratch::new();
    let mapping = dir.0.join("map.json");
    let nact = format!("{}/nact", local.base);
    let mcp = format!("{}/mcp", local.base);
    for (format, path) in [
        ("openai", "/0/function/name"),
        ("anthropic", "/0/name"),
        ("mcp-json", "/tools/0/name"),
    ] {
        let out = toolhost(net(&[
            "export",
            "--format",
            format,
            &nact,
            &mcp,
            "--mapping",
            mapping.to_str().unwrap(),
        ]))
        .await;
        assert!(out.status.success(), "{}", stderr(&out));
        let definitions: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(definitions.pointer(path).unwrap(), "echo_city", "{format}");
        let names: Vec<String> = match format {
            "openai" => definitions
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["function"]["name"].as_str().unwrap().to_owned())
                .collect(),
            "anthropic" => definitions
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect(),
            _ => definitions["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect(),
        };
        assert_eq!(names.len(), 2);
        assert_ne!(names[0], names[1], "{format}: {names:?}");
        for name in &names {
            assert!(
                (1..=64).contains(&name.len())
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{name}"
            );
        }
        let map: Value = serde_json::from_str(&std::fs::read_to_string(&mapping).unwrap()).unwrap();
        assert_eq!(map["tools"][&names[1]]["protocol"], "mcp");
        assert_eq!(map["tools"][&names[1]]["name"], "echo_city");
        assert_eq!(map["tools"][&names[0]]["server"], nact);
    }
    let out = toolhost(net(&["export", "--format", "openai", &nact])).await;
    let definitions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(definitions[0]["type"], "function");
    assert_eq!(definitions[0]["function"]["parameters"]["type"], "object");
}

#[tokio::test]
async fn toolhost_itself_over_stdio() {
    let source = format!("stdio:{BIN} serve --stdio --log warn");
    let listed = toolhost(args(&["tools", &source, "--json", "--no-cache"])).await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    let tools: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(
        tools.as_array().unwrap().iter().any(|t| t["name"] == "add_numbers"),
        "{tools}"
    );
    assert!(tools.as_array().unwrap().iter().all(|t| t["protocol"] == "mcp"));
    let called = toolhost(args(&[
        "call",
        &source,
        "add_numbers",
        "--arg",
        "a=2",
        "--arg",
        "b=40",
        "--no-cache",
    ]))
    .await;
    assert!(called.status.success(), "{}", stderr(&called));
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(result["sum"], 42.0);
    let missing = toolhost(args(&["tools", "stdio:/nonexistent/server", "--no-cache"])).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("failed to start `/nonexistent/server`"),
        "{}",
        stderr(&missing)
    );
}

/// Issue #12.10: client errors in the user's terms. A server that wants credentials says so
/// (not "no tool protocol answered"); a key put in the URL is never echoed; no Rust type names;
/// a tool's failure is named once.
#[tokio::test]
async fn client_errors_say_what_failed_in_the_users_terms() {
    let dir = Scratch::new();
    let hash = toolhost_server::auth::hash_key("the-right-key");
    let config = dir.write(
        "toolhost.toml",
        &format!("[[auth.api_keys]]\nname = \"ci\"\nsha256 = \"{hash}\"\n"),
    );
    let server = crate::support::Server::start(&["--config", config.to_str().unwrap()], &[], None);
    let base = server.base.replace("http://", "http://someone:Pw-Secret-1@");
    for url in [
        format!("{base}/nact?api_key=Key-Secret-2"),
        format!("{base}/?api_key=Key-Secret-2"),
    ] {
        let out = toolhost(net(&["tools", &url])).await;
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("HTTP 401") && text.contains("credentials"), "{text}");
        assert!(!text.contains("no tool protocol answered"), "{text}");
        assert!(!text.contains("Secret-1") && !text.contains("Secret-2"), "{text}");
        assert!(!text.contains("::"), "no Rust paths: {text}");
    }

    // A web server that speaks no tool protocol: its markup and the MCP SDK's types stay out.
    let app = axum::Router::new().fallback(|method: axum::http::Method| async move {
        let status = if method == axum::http::Method::POST { 501 } else { 404 };
        (
            axum::http::StatusCode::from_u16(status).unwrap(),
            [("content-type", "text/html")],
            "<!DOCTYPE HTML><html><body><h1>Error response</h1></body></html>",
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let web = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let out = toolhost(net(&["tools", &web])).await;
    let text = stderr(&out);
    assert!(text.contains("no tool protocol answered"), "{text}");
    assert!(
        !text.contains("::") && !text.contains("<html") && !text.contains("DOCTYPE"),
        "{text}"
    );
    assert!(text.contains("HTTP 501 to `initialize`"), "{text}");
    assert!(
        !text.contains(&format!("MCP at {web}: MCP at")),
        "one prefix per cause: {text}"
    );

    let local = Local::bundled().await;
    let out = toolhost(net(&[
        "call",
        &local.base,
        "divide_numbers",
        "--arg",
        "dividend=1",
        "--arg",
        "divisor=0",
    ]))
    .await;
    let text = stderr(&out);
    assert_eq!(text.matches("failed").count(), 1, "{text}");
}

/// Issue #12 (WoA §8.2): only the origin the user typed is open. A redirect to another loopback
/// port, and the servers of a lockfile, stay under the SSRF guard without --allow-private.
#[tokio::test]
async fn learned_addresses_stay_guarded_when_the_typed_one_is_open() {
    let local = Local::start(&echo_catalog("Echo a city name back.", &["1.0.0"])).await;
    let target = format!("{}/nact/tools", local.base);
    let app = axum::Router::new().fallback(move || {
        let target = target.clone();
        async move { axum::response::Redirect::temporary(&target) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let redirecting = format!("http://{}/nact", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let out = toolhost(args(&["tools", &redirecting, "--no-cache", "--protocol", "nact"])).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("refused a redirect"), "{}", stderr(&out));

    let dir = Scratch::new();
    let lock = dir.0.join("toolhost.lock");
    let nact = format!("{}/nact", local.base);
    let locked = toolhost(args(&["lock", &nact, "--no-cache", "--output", lock.to_str().unwrap()])).await;
    assert!(locked.status.success(), "{}", stderr(&locked));
    let verify = toolhost(args(&["verify", lock.to_str().unwrap(), "--no-cache"])).await;
    assert_ne!(verify.status.code(), Some(0), "{}", stdout(&verify));
    let said = format!("{}{}", stdout(&verify), stderr(&verify));
    assert!(said.contains("loopback") && said.contains("--allow-private"), "{said}");
}

/// Issue #21.3: `verify` does not run commands it finds in a lockfile. A `stdio:` entry (here a
/// shell that would leave a marker file) is reported as not started, naming the command and
/// the flag; with `--allow-stdio` it runs.
#[tokio::test]
async fn verify_runs_no_command_from_a_lockfile_unless_allowed() {
    let dir = Scratch::new();
    let lock = dir.0.join("toolhost.lock");
    let source = format!("stdio:{BIN} serve --stdio --log warn");
    let locked = toolhost(args(&[
        "lock",
        &source,
        "--no-cache",
        "--output",
        lock.to_str().unwrap(),
    ]))
    .await;
    assert!(locked.status.success(), "{}", stderr(&locked));
    // Someone edits the lockfile to run their own command instead.
    let marker = dir.0.join("ran");
    let text = std::fs::read_to_string(&lock).unwrap();
    let hostile = format!("stdio:sh -c 'touch {}'", marker.display());
    let hostile_json = serde_json::to_string(&hostile).unwrap();
    let source_json = serde_json::to_string(&source).unwrap();
    assert!(text.contains(&source_json), "{text}");
    std::fs::write(&lock, text.replace(&source_json, &hostile_json)).unwrap();

    let verify = toolhost(args(&["verify", lock.to_str().unwrap(), "--no-cache"])).await;
    let said = format!("{}{}", stdout(&verify), stderr(&verify));
    assert_eq!(verify.status.code(), Some(1), "{said}");
    assert!(
        said.contains("not started") && said.contains("--allow-stdio") && said.contains("touch"),
        "{said}"
    );
    assert!(!marker.exists(), "the lockfile's command was run");

    let allowed = toolhost(args(&["verify", lock.to_str().unwrap(), "--no-cache", "--allow-stdio"])).await;
    assert!(marker.exists(), "with --allow-stdio it runs: {}", stderr(&allowed));
}

/// Issue #22.11: `call` sends OTC `context` from `--secret ID=env:VAR` / `file:PATH` and
/// `--user-id`, so a tool with `requirements` can be called; the value never shows in output.
#[tokio::test]
async fn call_sends_otc_context_from_the_environment_or_a_file() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&seen);
    let upstream = axum::Router::new().route(
        "/me",
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let record = Arc::clone(&record);
            async move {
                let token = headers.get("x-token").and_then(|v| v.to_str().ok()).unwrap_or_default();
                record.lock().unwrap().push(token.to_owned());
                axum::Json(serde_json::json!({"ok": true}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream_base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, upstream).await.unwrap() });
    let catalog = format!(
        "toolkits:\n  - name: Desk\n    tools:\n      - name: whoami\n        description: Who am I.\n        requirements: {{ secrets: [TOKEN] }}\n        versions:\n          - version: 1.0.0\n            outputs: [{{ name: ok, type: boolean, description: Done. }}]\n            backend:\n              kind: http\n              base_url: {upstream_base}\n              steps: [{{ name: me, path: /me, headers: {{ X-Token: \"{{{{secret.TOKEN}}}}\" }} }}]\n              outputs: {{ ok: me.body.ok }}\n"
    );
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.0.join("catalog")).unwrap();
    dir.write("catalog/desk.yaml", &catalog);
    let server = crate::support::Server::start(&["--catalog", dir.0.join("catalog").to_str().unwrap()], &[], None);
    let otc = format!("{}/otc", server.base);

    let missing = toolhost(net(&["call", &otc, "Desk_whoami"])).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("TOKEN"), "{}", stderr(&missing));

    let secret_file = dir.write("token.txt", "file-Token-42\n");
    let from_file = toolhost(net(&[
        "call",
        &otc,
        "Desk_whoami",
        "--secret",
        &format!("TOKEN=file:{}", secret_file.display()),
        "--user-id",
        "alice",
    ]))
    .await;
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    let from_env = tokio::task::spawn_blocking(move || {
        std::process::Command::new(BIN)
            .args([
                "call",
                &otc,
                "Desk_whoami",
                "--secret",
                "TOKEN=env:CLI_TEST_TOKEN",
                "--allow-private",
                "--no-cache",
            ])
            .env("CLI_TEST_TOKEN", "env-Token-7")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(from_env.status.success(), "{}", stderr(&from_env));
    assert_eq!(seen.lock().unwrap().as_slice(), ["file-Token-42", "env-Token-7"]);
    for out in [&from_file, &from_env] {
        let all = format!("{}{}", stdout(out), stderr(out));
        assert!(!all.contains("Token-42") && !all.contains("Token-7"), "{all}");
    }
    assert!(server.terminate());
}

/// Issue #15: the client sends credentials (`--bearer`, `--api-key`, `--header`, or
/// `TOOLHOST_BEARER`/`TOOLHOST_API_KEY`) to the server named, over every protocol, and never to
/// another origin: a redirect elsewhere is refused, and no message shows a value.
#[tokio::test]
async fn credentials_reach_the_named_server_on_every_protocol_and_nowhere_else() {
    let dir = Scratch::new();
    let hash = toolhost_server::auth::hash_key("Key-Secret-3");
    let config = dir.write(
        "toolhost.toml",
        &format!("[[auth.api_keys]]\nname = \"ci\"\nsha256 = \"{hash}\"\n"),
    );
    let server = crate::support::Server::start(&["--config", config.to_str().unwrap()], &[], None);
    for path in ["/nact", "/otc", "/mcp", "/"] {
        let url = format!("{}{path}", server.base);
        for credentials in [
            &["--api-key", "Key-Secret-3"][..],
            &["--bearer", "Key-Secret-3"],
            &["--header", "OTC-API-Key: Key-Secret-3"],
        ] {
            let mut list = vec!["tools", url.as_str()];
            list.extend_from_slice(credentials);
            let out = toolhost(net(&list)).await;
            assert!(out.status.success(), "{url} {credentials:?}: {}", stderr(&out));
            assert!(stdout(&out).contains("add_numbers"), "{url}");
        }
    }
    let call = tokio::task::spawn_blocking({
        let url = format!("{}/mcp", server.base);
        move || {
            std::process::Command::new(BIN)
                .args([
                    "call",
                    &url,
                    "add_numbers",
                    "--arg",
                    "a=1",
                    "--arg",
                    "b=2",
                    "--allow-private",
                    "--no-cache",
                ])
                .env("TOOLHOST_BEARER", "Key-Secret-3")
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(call.status.success(), "{}", stderr(&call));
    assert!(stdout(&call).contains("\"sum\": 3"), "{}", stdout(&call));
    let wrong = toolhost(net(&[
        "tools",
        &format!("{}/nact", server.base),
        "--bearer",
        "Wrong-Secret-4",
    ]))
    .await;
    let text = stderr(&wrong);
    assert!(text.contains("HTTP 401") && text.contains("--bearer"), "{text}");
    assert!(!text.contains("Wrong-Secret-4"), "{text}");

    // A server that redirects elsewhere: the other origin never sees the key.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let elsewhere = {
        let seen = std::sync::Arc::clone(&seen);
        let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
            let seen = std::sync::Arc::clone(&seen);
            async move {
                seen.lock().unwrap().push(format!("{headers:?}"));
                axum::Json(serde_json::json!({"items": [], "paging": {"page_limit": 50}}))
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    };
    let redirector = {
        let target = format!("{elsewhere}/nact/tools");
        let app = axum::Router::new().fallback(move || {
            let target = target.clone();
            async move { axum::response::Redirect::temporary(&target) }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    };
    let out = toolhost(net(&[
        "tools",
        &format!("{redirector}/nact"),
        "--protocol",
        "nact",
        "--api-key",
        "Key-Secret-3",
    ]))
    .await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("credentials are sent only to the server you named"),
        "{text}"
    );
    assert!(seen.lock().unwrap().is_empty(), "{:?}", seen.lock().unwrap());
    assert!(server.terminate());
}

/// Issue #15: a servers file gives each server its own credentials (by URL prefix), so one
/// command can reach several protected servers and no server gets another's key.
#[tokio::test]
async fn a_servers_file_gives_each_server_its_own_credentials() {
    let dir = Scratch::new();
    let start = |name: &str, key: &str| {
        let hash = toolhost_server::auth::hash_key(key);
        let config = dir.write(
            &format!("{name}.toml"),
            &format!("[[auth.api_keys]]\nname = \"ci\"\nsha256 = \"{hash}\"\n"),
        );
        crate::support::Server::start(&["--config", config.to_str().unwrap()], &[], None)
    };
    let (a, b) = (start("a", "Key-For-A-10"), start("b", "Key-For-B-11"));
    let servers = dir.write(
        "servers.toml",
        &format!(
            "[[server]]\nurl = \"{}/\"\napi_key = \"Key-For-A-10\"\n\n[[server]]\nurl = \"{}/\"\nbearer_env = \"B_TOKEN\"\n",
            a.base, b.base
        ),
    );
    let lockfile = dir.0.join("toolhost.lock");
    let run_with = |env: Option<(&'static str, &'static str)>| {
        let args = net(&[
            "lock",
            &format!("{}/nact", a.base),
            &format!("{}/otc", b.base),
            "--servers",
            servers.to_str().unwrap(),
            "-o",
            lockfile.to_str().unwrap(),
        ]);
        tokio::task::spawn_blocking(move || {
            let mut command = std::process::Command::new(BIN);
            command.args(&args).env("NO_COLOR", "1");
            if let Some((k, v)) = env {
                command.env(k, v);
            }
            command.output().unwrap()
        })
    };
    let missing = run_with(None).await.unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("`B_TOKEN` is not set"),
        "{}",
        stderr(&missing)
    );
    let locked = run_with(Some(("B_TOKEN", "Key-For-B-11"))).await.unwrap();
    assert!(locked.status.success(), "{}", stderr(&locked));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    assert!(
        text.contains("\"protocol\": \"nact\"") && text.contains("\"protocol\": \"otc\""),
        "{text}"
    );
    assert!(!text.contains("Key-For"), "{text}");
    assert!(a.terminate() && b.terminate());
}
