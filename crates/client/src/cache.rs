//! The on-disk catalog cache: responses to `GET` kept with their RFC 9111 cache policy
//! (http-cache-semantics), so a later run reuses a fresh listing without a request, or revalidates
//! a stale one with `If-None-Match` and gets a 304 instead of the whole catalog.
//!
//! One JSON file per URL, named by the SHA-256 of the URL. A file that cannot be read or parsed
//! is treated as absent; writes go to a temporary file renamed into place, so concurrent runs
//! never see half a file.

use std::path::{Path, PathBuf};

use http_cache_semantics::CachePolicy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A cached response.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The URL, to detect a (practically impossible) hash collision.
    pub url: String,
    /// The cache policy of the response.
    pub policy: CachePolicy,
    /// The body, as text (catalogs are JSON).
    pub body: String,
}

/// A directory of cached responses.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir`, created on first write.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    fn path(&self, url: &str) -> PathBuf {
        let digest = Sha256::digest(url.as_bytes());
        let name = toolhost_core::hex(&digest);
        self.dir.join(format!("{name}.json"))
    }

    /// The entry for `url`, if there is a readable one.
    pub async fn load(&self, url: &str) -> Option<Entry> {
        let text = tokio::fs::read(self.path(url)).await.ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        (entry.url == url).then_some(entry)
    }

    /// Stores `entry`; failures are logged, never fatal (the cache is an optimisation).
    pub async fn store(&self, entry: &Entry) {
        if let Err(e) = self.write(entry).await {
            tracing::debug!(dir = %self.dir.display(), error = %e, "failed to write the catalog cache");
        }
    }

    async fn write(&self, entry: &Entry) -> std::io::Result<()> {
        tokio::fs::create_dir_all(&self.dir).await?;
        let path = self.path(&entry.url);
        let temp = temp_name(&path);
        let text = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        tokio::fs::write(&temp, text).await?;
        tokio::fs::rename(&temp, &path).await
    }
}

fn temp_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    PathBuf::from(name)
}

/// The default cache directory: `$XDG_CACHE_HOME/toolhost/catalogs`, else
/// `$HOME/.cache/toolhost/catalogs`; `None` when neither variable is set.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("toolhost").join("catalogs"))
}
