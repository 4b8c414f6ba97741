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
//! token_authorization = ["corp"]           # a caller's own verified JWT meets
//!                                          # `requirements.authorization` of provider `corp`
//!
//! [[auth.callers]]                         # what tools' requirements get for one caller
//! subject = "alice"                        # a JWT `sub` (or `api_key = "ci"`, a key's name)
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
}

/// One `[[auth.callers]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallerFile {
    #[serde(default)]
    subject: Option<String>,
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
                (Some(subject), None) => Grantee::Subject(subject.clone()),
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
                .with_token_policy(policy),
        ))
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
