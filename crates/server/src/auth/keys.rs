//! API keys, stored in config as SHA-256 hashes and compared in constant time.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

/// One configured API key.
#[derive(Clone)]
pub struct ApiKey {
    /// A name for logs and limits (never the key).
    pub name: String,
    /// SHA-256 of the key.
    pub sha256: [u8; 32],
    /// The scopes the key grants.
    pub scopes: BTreeSet<String>,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("name", &self.name)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ApiKey {
    /// A key from its config entry: `sha256` is 64 hex digits (`toolhost hash-key` prints them).
    pub fn new(name: &str, sha256_hex: &str, scopes: Vec<String>) -> Result<Self, String> {
        let hex = sha256_hex.trim().strip_prefix("sha256:").unwrap_or(sha256_hex.trim());
        let mut sha256 = [0u8; 32];
        if hex.len() != 64 {
            return Err(format!(
                "api key `{name}`: `sha256` must be 64 hex digits (the SHA-256 of the key), not the key itself"
            ));
        }
        for (i, byte) in sha256.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
                .map_err(|_| format!("api key `{name}`: `sha256` must be hex digits"))?;
        }
        Ok(Self {
            name: name.to_owned(),
            sha256,
            scopes: scopes.into_iter().collect(),
        })
    }
}

/// The hex SHA-256 of a key, as config stores it.
pub fn hash(key: &str) -> String {
    toolhost_core::hex(&Sha256::digest(key.as_bytes()))
}

/// The configured key whose hash matches `presented`. Every key is compared, each in constant
/// time, so timing reveals neither which key nor how much of it matched.
pub(super) fn find<'a>(keys: &'a [ApiKey], presented: &str) -> Option<&'a ApiKey> {
    let digest = Sha256::digest(presented.as_bytes());
    let mut found = None;
    for key in keys {
        let diff = key
            .sha256
            .iter()
            .zip(digest.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff == 0 && found.is_none() {
            found = Some(key);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_by_hash_only() {
        let key = ApiKey::new("ci", &hash("s3cret"), vec!["calc".into()]).unwrap();
        let keys = [key];
        assert_eq!(find(&keys, "s3cret").map(|k| k.name.as_str()), Some("ci"));
        assert!(find(&keys, "s3cre").is_none());
        assert!(
            ApiKey::new("x", "s3cret", vec![])
                .unwrap_err()
                .contains("64 hex digits")
        );
        assert!(
            !format!("{:?}", keys[0]).contains(&hash("s3cret")[..8]),
            "Debug shows no hash"
        );
    }
}
