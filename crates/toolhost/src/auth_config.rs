//! The `[auth]` table of the config file: API keys, JWT issuers and tag scopes.
//!
//! ```toml
//! [auth]
//! tag_scopes = { admin = ["admin"] }      # every tool tagged `admin` needs scope `admin`
//!
//! [[auth.api_keys]]
//! name = "ci"                              # for logs and limits; never the key
//! sha256 = "…64 hex digits…"               # `toolhost hash-key` prints it
//! scopes = ["calc"]
//!
//! [[auth.jwt]]
//! issuer = "https://issuer.example"        # checked against `iss` when set
//! audience = "toolhost"                    # checked against `aud` when set
//! algorithms = ["RS256"]                   # pinned; the token's `alg` is never trusted
//! jwks_url = "https://issuer.example/.well-known/jwks.json"   # or jwks_file, public_key_file,
//!                                          # secret_env / secret_file (HS256)
//!
//! operator_scope = "toolhost:operator"     # the scope that reads /metrics (the default)
//! token_authorization = ["corp"]           # a caller's own verified JWT meets
//!                                          # `requirements.authorization` of provider `corp`
//!
//! [[auth.callers]]                         # what tools' requirements get for one caller
//! subject = "alice"                        # a JWT `sub` (or `api_key = "ci"`, a key's name)
//! issuer = "https://issuer.example"        # the subject's issuer: required with more than one
//!                                          # [[auth.jwt]], optional with one
//! secrets = { GITHUB_TOKEN = "ALICE_GITHUB_TOKEN" }   # requirement id → a [secrets] name
//! authorization = { github = "ALICE_GITHUB_OAUTH" }   # provider id → a [secrets] name
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toolhost_server::auth::{ApiKey, Authenticator, Grantee, Grants, Issuer, KeySource};

/// The `[auth]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthFile {
    #[serde(default)]
    api_keys: Vec<ApiKeyFile>,
    #[serde(default)]
    jwt: Vec<JwtFile>,
    /// Scopes required of every tool carrying a tag (or in a toolkit of that name).
    #[serde(default)]
    pub tag_scopes: BTreeMap<String, Vec<String>>,
    /// What tools' requirements get for particular callers.
    #[serde(default)]
    callers: Vec<CallerFile>,
    /// Provider ids of `requirements.authorization` a caller's own verified JWT meets.
    #[serde(default)]
    token_authorization: Vec<String>,
    /// The scope that lets a caller read `/metrics` (default `toolhost:operator`).
    #[serde(default)]
    operator_scope: Option<String>,
}

/// One `[[auth.callers]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallerFile {
    #[serde(default)]
    subject: Option<String>,
    /// The `issuer` of the `[[auth.jwt]]` entry whose tokens `subject` is from.
    #[serde(default)]
    issuer: Option<String>,
    #[serde(default)]
    api_key: Option<String>,
    /// Requirement id → the name of one of the server's `[secrets]`.
    #[serde(default)]
    secrets: BTreeMap<String, String>,
    /// Provider id → the name of one of the server's `[secrets]`.
    #[serde(default)]
    authorization: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApiKeyFile {
    name: String,
    sha256: String,
    #[serde(default)]
    scopes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JwtFile {
    #[serde(default)]
    issuer: Option<String>,
    #[serde(default)]
    audience: Option<String>,
    algorithms: Vec<String>,
    #[serde(default)]
    jwks_url: Option<String>,
    #[serde(default)]
    jwks_file: Option<PathBuf>,
    #[serde(default)]
    public_key_file: Option<PathBuf>,
    #[serde(default)]
    secret_env: Option<String>,
    #[serde(default)]
    secret_file: Option<PathBuf>,
}

impl AuthFile {
    /// Builds the authenticator; relative paths are relative to the config file's directory.
    /// Errors name the entry and never include a secret.
    pub fn authenticator(
        &self,
        base: &Path,
        secrets: &std::collections::HashMap<String, toolhost_core::Secret>,
        policy: toolhost_server::auth::TokenPolicy,
    ) -> anyhow::Result<Arc<Authenticator>> {
        let keys = self
            .api_keys
            .iter()
            .map(|k| ApiKey::new(&k.name, &k.sha256, k.scopes.clone()).map_err(anyhow::Error::msg))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let issuers = self
            .jwt
            .iter()
            .map(|j| j.issuer(base))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut grants = std::collections::HashMap::new();
        for (i, entry) in self.callers.iter().enumerate() {
            let place = format!("auth.callers[{i}]");
            let grantee = match (&entry.subject, &entry.api_key) {
                (Some(subject), None) => Grantee::Subject {
                    issuer: self.issuer_of(&place, subject, entry.issuer.as_deref())?,
                    subject: subject.clone(),
                },
                (None, Some(_)) if entry.issuer.is_some() => {
                    anyhow::bail!("{place}: `issuer` goes with `subject` (a JWT's); an API key has none")
                }
                (None, Some(name)) if self.api_keys.iter().any(|k| &k.name == name) => Grantee::ApiKey(name.clone()),
                (None, Some(name)) => anyhow::bail!("{place}: no [[auth.api_keys]] entry is named `{name}`"),
                _ => anyhow::bail!("{place}: give exactly one of `subject` (a JWT's sub) and `api_key` (a key's name)"),
            };
            let lookup = |field: &str, map: &BTreeMap<String, String>| {
                map.iter()
                    .map(|(id, name)| {
                        let value = secrets.get(name).ok_or_else(|| {
                            anyhow::anyhow!("{place}.{field}.{id}: `{name}` is not one of the server's [secrets]")
                        })?;
                        Ok((id.clone(), value.clone()))
                    })
                    .collect::<anyhow::Result<std::collections::HashMap<_, _>>>()
            };
            let granted = Grants {
                secrets: lookup("secrets", &entry.secrets)?,
                authorization: lookup("authorization", &entry.authorization)?,
            };
            if grants.insert(grantee, granted).is_some() {
                anyhow::bail!("{place}: this caller is listed twice");
            }
        }
        Ok(Arc::new(
            Authenticator::new(keys, issuers)
                .with_grants(grants, self.token_authorization.clone())
                .with_operator_scope(self.operator_scope.clone())
                .with_token_policy(policy),
        ))
    }
}

impl AuthFile {
    /// The configured issuer a grant to `subject` is for: the one its `issuer` names, which must
    /// be given when more than one `[[auth.jwt]]` is configured, since a `sub` is unique only
    /// within its issuer (issue #30.4).
    fn issuer_of(&self, place: &str, subject: &str, named: Option<&str>) -> anyhow::Result<Option<String>> {
        let configured: Vec<Option<&str>> = self.jwt.iter().map(|j| j.issuer.as_deref()).collect();
        let listed = || {
            let names: Vec<String> = configured.iter().flatten().map(|i| format!("\"{i}\"")).collect();
            if names.is_empty() {
                "none of them has an `issuer`; give each [[auth.jwt]] its `issuer`".to_owned()
            } else {
                format!("the configured issuers are {}", names.join(", "))
            }
        };
        match (named, configured.as_slice()) {
            (_, []) => anyhow::bail!(
                "{place}: `subject = \"{subject}\"` is a JWT subject, but no [[auth.jwt]] issuer is configured"
            ),
            (None, [only]) => Ok(only.map(str::to_owned)),
            (None, _) => anyhow::bail!(
                "{place}: `subject = \"{subject}\"` needs `issuer`: {} [[auth.jwt]] issuers are configured, and a subject names one user only within its issuer (another issuer's \"{subject}\" is someone else); {}",
                configured.len(),
                listed()
            ),
            (Some(name), _) if configured.contains(&Some(name)) => Ok(Some(name.to_owned())),
            (Some(name), _) => anyhow::bail!(
                "{place}: `issuer = \"{name}\"` is not the `issuer` of any [[auth.jwt]]; {}",
                listed()
            ),
        }
    }
}

impl JwtFile {
    fn issuer(&self, base: &Path) -> anyhow::Result<Issuer> {
        let name = self.issuer.as_deref().unwrap_or("(any issuer)");
        let path = |p: &PathBuf| if p.is_relative() { base.join(p) } else { p.clone() };
        let mut sources = Vec::new();
        if let Some(url) = &self.jwks_url {
            sources.push(KeySource::JwksUrl(url.clone()));
        }
        if let Some(p) = &self.jwks_file {
            sources.push(KeySource::JwksFile(path(p)));
        }
        if let Some(p) = &self.public_key_file {
            sources.push(KeySource::PemFile(path(p)));
        }
        if let Some(var) = &self.secret_env {
            let secret = std::env::var(var)
                .map_err(|_| anyhow::anyhow!("auth.jwt {name}: environment variable {var} (secret_env) is not set"))?;
            sources.push(KeySource::Secret(secret.into_bytes()));
        }
        if let Some(p) = &self.secret_file {
            let secret = std::fs::read(path(p))
                .map_err(|e| anyhow::anyhow!("auth.jwt {name}: failed to read secret_file: {e}"))?;
            sources.push(KeySource::Secret(secret.trim_ascii().to_vec()));
        }
        let [source] = <[KeySource; 1]>::try_from(sources).map_err(|s| {
            anyhow::anyhow!("auth.jwt {name}: give exactly one of jwks_url, jwks_file, public_key_file, secret_env, secret_file (got {})", s.len())
        })?;
        Issuer::new(self.issuer.clone(), self.audience.clone(), &self.algorithms, source).map_err(anyhow::Error::msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "the-first-issuers-secret-of-32-bytes!!";
    const TWO: &str = "the-other-issuers-secret-of-32-bytes!!";

    fn file(text: &str) -> AuthFile {
        #[derive(Deserialize)]
        struct Config {
            auth: AuthFile,
        }
        toml::from_str::<Config>(text).unwrap().auth
    }

    fn jwt(iss: &str, secret: &str) -> String {
        let exp = toolhost_core::unix_ms() / 1000 + 600;
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &serde_json::json!({"iss": iss, "sub": "alice", "exp": exp}),
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap()
    }

    fn build(text: &str) -> anyhow::Result<Arc<Authenticator>> {
        let dir = std::env::temp_dir().join({
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!("toolhost-auth-{}-{n}", std::process::id())
        });
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("one"), ONE).unwrap();
        std::fs::write(dir.join("two"), TWO).unwrap();
        let secrets = [("ALICE_GH".to_owned(), toolhost_core::Secret::new("alices-token"))].into();
        let built = file(text).authenticator(&dir, &secrets, toolhost_server::auth::TokenPolicy::default());
        let _ = std::fs::remove_dir_all(&dir);
        built
    }

    const ISSUERS: &str = r#"
[[auth.jwt]]
issuer = "https://one.example"
algorithms = ["HS256"]
secret_file = "one"

[[auth.jwt]]
issuer = "https://two.example"
algorithms = ["HS256"]
secret_file = "two"
"#;

    async fn granted(auth: &Authenticator, token: &str) -> bool {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
        let caller = auth.authenticate(&headers).await.unwrap();
        caller.grants.is_some_and(|g| g.secrets.contains_key("GITHUB_TOKEN"))
    }

    #[tokio::test]
    async fn a_grant_is_keyed_on_issuer_and_subject() {
        let auth = build(&format!(
            "[[auth.callers]]\nsubject = \"alice\"\nissuer = \"https://one.example\"\nsecrets = {{ GITHUB_TOKEN = \"ALICE_GH\" }}\n{ISSUERS}"
        ))
        .unwrap();
        assert!(granted(&auth, &jwt("https://one.example", ONE)).await);
        assert!(!granted(&auth, &jwt("https://two.example", TWO)).await);
    }

    #[test]
    fn with_two_issuers_a_subject_grant_must_name_one_it_knows() {
        let open = build(&format!("[[auth.callers]]\nsubject = \"alice\"\n{ISSUERS}"))
            .unwrap_err()
            .to_string();
        assert!(
            open.contains("auth.callers[0]: `subject = \"alice\"` needs `issuer`")
                && open.contains("\"https://one.example\", \"https://two.example\""),
            "{open}"
        );
        let unknown = build(&format!(
            "[[auth.callers]]\nsubject = \"alice\"\nissuer = \"https://three.example\"\n{ISSUERS}"
        ))
        .unwrap_err()
        .to_string();
        assert!(unknown.contains("is not the `issuer` of any [[auth.jwt]]"), "{unknown}");
        let on_a_key = build("[[auth.callers]]\napi_key = \"ci\"\nissuer = \"https://one.example\"\n[[auth.api_keys]]\nname = \"ci\"\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n")
            .unwrap_err()
            .to_string();
        assert!(on_a_key.contains("`issuer` goes with `subject`"), "{on_a_key}");
        // One issuer: `issuer` may be left out.
        let one = ISSUERS.split("\n\n[[auth.jwt]]").next().unwrap();
        assert!(build(&format!("[[auth.callers]]\nsubject = \"alice\"\n{one}")).is_ok());
    }
}
