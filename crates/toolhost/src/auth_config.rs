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
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toolhost_server::auth::{ApiKey, Authenticator, Issuer, KeySource};

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
    pub fn authenticator(&self, base: &Path) -> anyhow::Result<Arc<Authenticator>> {
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
        Ok(Arc::new(Authenticator::new(keys, issuers)))
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
