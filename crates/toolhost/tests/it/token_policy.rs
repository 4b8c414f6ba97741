//! Issue #31.4 through the binary: a present `aud` is validated against the public URL when the
//! issuer configures no audience; `max_token_lifetime_secs` refuses long-lived tokens, and
//! `serve` warns at start when no maximum is enforced.

use serde_json::{Value, json};

use crate::support::{Scratch, Server};

const SECRET: &str = "the-issuers-shared-secret-of-32-bytes!";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An HS256 JWT with `claims` over an issuer, a subject and ten minutes' life.
fn jwt(claims: Value) -> String {
    let mut all = json!({"iss": "https://issuer.example", "sub": "alice", "iat": now(), "exp": now() + 600});
    all.as_object_mut().unwrap().extend(claims.as_object().unwrap().clone());
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &all,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap()
}

async fn status(server: &Server, token: &str) -> (u16, Value) {
    let reply = reqwest::Client::new()
        .post(format!("{}/otc/tools/call", server.base))
        .bearer_auth(token)
        .json(&json!({"request": {"tool_id": "Calculator.add_numbers", "input": {"a": 1, "b": 2}}}))
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap_or(Value::Null))
}

fn start(dir: &Scratch, extra: &str) -> Server {
    let config = dir.write(
        "toolhost.toml",
        &format!(
            "{extra}\n[[auth.jwt]]\nissuer = \"https://issuer.example\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n"
        ),
    );
    Server::start(
        &[
            "--config",
            config.to_str().unwrap(),
            "--public-url",
            "https://tools.example.com",
        ],
        &[("JWT_SECRET", SECRET)],
        None,
    )
}

#[tokio::test]
async fn an_aud_naming_another_service_is_refused_and_lifetimes_are_bounded() {
    let dir = Scratch::new();
    let server = start(&dir, "");
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("max_token_lifetime_secs")));
    assert!(
        logs.iter()
            .any(|x| x.contains("WARN") && x.contains("max_token_lifetime_secs")),
        "no maximum lifetime is said at start: {logs:#?}"
    );
    assert_eq!(status(&server, &jwt(json!({}))).await.0, 200, "no aud");
    assert_eq!(
        status(&server, &jwt(json!({"aud": "https://tools.example.com"})))
            .await
            .0,
        200,
        "aud is the public URL"
    );
    let (code, body) = status(&server, &jwt(json!({"aud": "someone-else"}))).await;
    assert_eq!(code, 401, "{body}");
    let day = jwt(json!({"exp": now() + 86_400}));
    assert_eq!(status(&server, &day).await.0, 200, "no maximum configured");
    assert!(server.terminate());

    let server = start(&dir, "max_token_lifetime_secs = 3600");
    let (code, body) = status(&server, &day).await;
    assert_eq!(code, 401, "{body}");
    assert!(body.to_string().contains("max_token_lifetime_secs"), "{body}");
    assert_eq!(status(&server, &jwt(json!({}))).await.0, 200);
    let logs = server.logs_when(|_| true);
    assert!(!logs.iter().any(|x| x.contains("whatever their lifetime")), "{logs:#?}");
    assert!(
        !logs.iter().any(|x| x.contains("that carry `aud` are refused")),
        "the public URL is the audience: {logs:#?}"
    );
    assert!(server.terminate());

    // Neither an audience nor a public URL: a token naming any audience is refused, and
    // `serve` says so at start, with what to configure.
    let config = dir.write(
        "toolhost.toml",
        "[[auth.jwt]]\nissuer = \"https://issuer.example\"\nalgorithms = [\"HS256\"]\nsecret_env = \"JWT_SECRET\"\n",
    );
    let server = Server::start(&["--config", config.to_str().unwrap()], &[("JWT_SECRET", SECRET)], None);
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("that carry `aud` are refused")));
    assert!(
        logs.iter().any(|x| x.contains("that carry `aud` are refused")
            && x.contains("https://issuer.example")
            && x.contains("public_url")),
        "{logs:#?}"
    );
    let (code, body) = status(&server, &jwt(json!({"aud": server.base.clone()}))).await;
    assert_eq!(code, 401, "{body}");
    assert!(body.to_string().contains("public_url"), "{body}");
    assert_eq!(status(&server, &jwt(json!({}))).await.0, 200);
    assert!(server.terminate());
}
