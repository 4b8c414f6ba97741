//! Sealed state a client carries between two requests of one flow (MCP's `requestState`): a
//! JSON payload signed with HMAC-SHA256 under the server's key, bound to a context the server
//! recomputes on return (for a call's answers: the tool, the caller, a digest of the
//! arguments), and expiring. Protocol-free: the token is opaque text.
//!
//! Two kinds travel in the same `requestState` member ([`Kind`]): a call's answers to its
//! questions (docs/asking.md) and a confirmation by a human (docs/approvals.md). A
//! confirmation's token starts with `confirm.` so the two are told apart before opening, and
//! the kind is sealed with the payload, so one is never opened as the other.
//!
//! Why signed and not kept server-side (docs/asking.md): a stateless server keeps nothing
//! between requests, and any replica that shares the key can open the seal, with no store and
//! no affinity. The payload is readable by the client (signed, not encrypted): only what the
//! client sent or may see goes in it (its own answers). The token format is rmcp's
//! `RequestStateCodec` `rs2` (key id, issue time and expiry authenticated with the payload).

use std::time::Duration;

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The key id written in each token; one key at a time (a restart with a new key makes older
/// tokens fail as tampered, which a client answers by starting the call again).
const KEY_ID: &str = "k1";

/// What a sealed state is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A call's answers to the questions it asked (MCP `elicit.rs`).
    Answers,
    /// A confirmation waiting for (or given by) a human: its id (MCP `approval.rs`). What it
    /// holds authorizes nothing alone: the gate checks the record's binding in the store.
    Confirmation,
}

/// The visible mark of a confirmation's token.
const CONFIRMATION_PREFIX: &str = "confirm.";

impl Kind {
    /// The kind `token` says it is (by its prefix; opening it checks that too).
    pub fn of(token: &str) -> Self {
        if token.starts_with(CONFIRMATION_PREFIX) {
            Self::Confirmation
        } else {
            Self::Answers
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Self::Answers => "",
            Self::Confirmation => CONFIRMATION_PREFIX,
        }
    }

    /// Sealed with the binding, so a token opens only as the kind it was sealed as.
    fn label(self) -> &'static [u8] {
        match self {
            Self::Answers => b"answers",
            Self::Confirmation => b"confirmation",
        }
    }
}

/// Seals and opens state.
pub struct Seal {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seal").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

/// Why a sealed token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Broken {
    /// It was changed, sealed with another key or for another context.
    #[error("it was changed, or was issued for another call, caller or server key")]
    Tampered,
    /// Its time ran out.
    #[error("it expired")]
    Expired,
    /// It is not a token at all.
    #[error("it is not a sealed state this server issued")]
    Malformed,
}

impl Seal {
    /// A seal with `key` (at least 32 bytes, e.g. a `[secrets]` entry), whose tokens expire
    /// after `ttl`.
    pub fn new(key: &[u8], ttl: Duration) -> Result<Self, String> {
        // The key is stretched through SHA-256 when shorter than the codec asks: a passphrase
        // of fewer bytes is still refused below 16.
        if key.len() < 16 {
            return Err("the request state key must be at least 16 bytes (32 random bytes are best)".to_owned());
        }
        let material = if key.len() < RequestStateCodec::MIN_KEY_LENGTH {
            Sha256::digest(key).to_vec()
        } else {
            key.to_vec()
        };
        let codec = RequestStateCodec::new_with_keyring(KEY_ID, [(KEY_ID, material)]).map_err(|e| e.to_string())?;
        Ok(Self { codec, ttl })
    }

    /// A seal with a random key of this process: tokens open only here (one replica).
    pub fn random(ttl: Duration) -> Self {
        let key: Vec<u8> = [uuid::Uuid::new_v4(), uuid::Uuid::new_v4()]
            .iter()
            .flat_map(|u| u.as_bytes().to_vec())
            .collect();
        Self::new(&key, ttl).unwrap_or_else(|_| unreachable!("32 bytes are a valid key"))
    }

    /// How long a token lives.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A call's answers, `payload`, sealed for `binding` (what must be the same when it is
    /// opened), living the seal's time.
    pub fn seal(&self, binding: &[u8], payload: &Value) -> String {
        self.seal_as(Kind::Answers, binding, payload, self.ttl)
    }

    /// The answers in `token`, if this server sealed them for `binding` and they have not expired.
    pub fn open(&self, token: &str, binding: &[u8]) -> Result<Value, Broken> {
        self.open_as(Kind::Answers, token, binding)
    }

    /// `payload` sealed as `kind` for `binding`, living `ttl`.
    pub fn seal_as(&self, kind: Kind, binding: &[u8], payload: &Value, ttl: Duration) -> String {
        let data = self::binding([kind.label(), binding]);
        let options = SealOptions::new().associated_data(&data).ttl(ttl);
        // A `Value` always serializes.
        let token = self
            .codec
            .seal_json_with(payload, &options)
            .unwrap_or_else(|_| self.codec.seal_with(b"null", &options));
        format!("{}{token}", kind.prefix())
    }

    /// The payload of `token`, if this server sealed it as `kind` for `binding` and it has not
    /// expired.
    pub fn open_as(&self, kind: Kind, token: &str, binding: &[u8]) -> Result<Value, Broken> {
        if Kind::of(token) != kind {
            return Err(Broken::Malformed);
        }
        let token = &token[kind.prefix().len()..];
        let data = self::binding([kind.label(), binding]);
        self.codec.open_json_with(token, &data).map_err(|e| match e {
            RequestStateError::Expired => Broken::Expired,
            RequestStateError::IntegrityCheckFailed | RequestStateError::UnknownKeyId => Broken::Tampered,
            _ => Broken::Malformed,
        })
    }
}

/// The binding of a flow: its parts, each length-prefixed so no two lists of parts collide.
pub fn binding<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        out.extend_from_slice(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sealed_state_opens_only_unchanged_for_its_binding() {
        let seal = Seal::random(Duration::from_secs(60));
        let bound = binding([b"tool".as_slice(), b"alice"]);
        let token = seal.seal(&bound, &json!({"answers": {"a": 1}}));
        assert_eq!(seal.open(&token, &bound), Ok(json!({"answers": {"a": 1}})));
        assert_eq!(
            seal.open(&token, &binding([b"tool".as_slice(), b"bob"])),
            Err(Broken::Tampered)
        );
        assert!(seal.open(&format!("{token}-TAMPERED"), &bound).is_err());
        assert_eq!(seal.open("not a token", &bound), Err(Broken::Malformed));
        let other = Seal::random(Duration::from_secs(60));
        assert_eq!(other.open(&token, &bound), Err(Broken::Tampered));
    }

    #[test]
    fn a_token_opens_only_as_the_kind_it_was_sealed_as() {
        let seal = Seal::random(Duration::from_secs(60));
        let ttl = Duration::from_secs(60);
        let confirmation = seal.seal_as(Kind::Confirmation, b"", &json!({"id": "abc"}), ttl);
        assert_eq!(Kind::of(&confirmation), Kind::Confirmation);
        assert_eq!(
            seal.open_as(Kind::Confirmation, &confirmation, b""),
            Ok(json!({"id": "abc"}))
        );
        assert_eq!(seal.open(&confirmation, b""), Err(Broken::Malformed));
        let answers = seal.seal(b"", &json!({"id": "abc"}));
        assert_eq!(Kind::of(&answers), Kind::Answers);
        assert_eq!(seal.open_as(Kind::Confirmation, &answers, b""), Err(Broken::Malformed));
        // Relabelled by hand, an answers token still does not open as a confirmation.
        let relabelled = format!("{CONFIRMATION_PREFIX}{answers}");
        assert_eq!(
            seal.open_as(Kind::Confirmation, &relabelled, b""),
            Err(Broken::Tampered)
        );
        let expired = seal.seal_as(Kind::Confirmation, b"", &json!({}), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(seal.open_as(Kind::Confirmation, &expired, b""), Err(Broken::Expired));
    }

    #[test]
    fn parts_do_not_run_together() {
        assert_ne!(binding([b"ab".as_slice(), b"c"]), binding([b"a".as_slice(), b"bc"]));
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(Seal::new(b"short", Duration::from_secs(1)).is_err());
        assert!(Seal::new(b"sixteen bytes ok", Duration::from_secs(1)).is_ok());
    }
}
