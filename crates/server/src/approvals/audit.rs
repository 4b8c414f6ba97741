//! Evidence (issue #40.6, APPROVALS.md §5.2.9): each decision and each consumption is a signed
//! audit record, a JWS in the General JSON Serialization (RFC 7515 §7.2.1, so a confirmation
//! service's countersignature can join toolhost's), `EdDSA` (Ed25519), `typ: cheq+jwt`, its
//! key published at `/approvals/jwks.json`. The payload carries the binding and the CHEQ
//! draft's own keys (`version`, `operation`, `operation name`, `inputs.parameters[]`, `date`).

use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair as _};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::{Entry, rfc3339};

/// The path of the public keys.
pub const JWKS_PATH: &str = "/approvals/jwks.json";

/// Signs audit records with one Ed25519 key.
pub struct Signer {
    key: Ed25519KeyPair,
    kid: String,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("kid", &self.kid).finish_non_exhaustive()
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl Signer {
    /// A signer from a 32-byte seed (`[approvals] audit_key_secret`, the same on every
    /// replica), or a fresh key for this process.
    pub fn new(seed: Option<&[u8]>) -> Self {
        let seed: Vec<u8> = match seed {
            Some(seed) => Sha256::digest(seed).to_vec(),
            None => [uuid::Uuid::new_v4().into_bytes(), uuid::Uuid::new_v4().into_bytes()].concat(),
        };
        let key =
            Ed25519KeyPair::from_seed_unchecked(&seed).unwrap_or_else(|_| unreachable!("any 32 bytes are a seed"));
        let kid = toolhost_core::hex(&Sha256::digest(key.public_key().as_ref())[..8]);
        Self { key, kid }
    }

    /// The JWKS (RFC 7517) with the public key.
    pub fn jwks(&self) -> Value {
        json!({"keys": [{
            "kty": "OKP",
            "crv": "Ed25519",
            "alg": "EdDSA",
            "use": "sig",
            "kid": self.kid,
            "x": b64(self.key.public_key().as_ref()),
        }]})
    }

    /// The signed record of `event` (`approved`, `declined`, `consumed`) on `entry`.
    pub fn record(&self, entry: &Entry, event: &str, issuer: &str) -> String {
        let r = &entry.record;
        let now = toolhost_core::unix_ms();
        let parameters: Vec<Value> = r
            .parameters
            .iter()
            .map(|p| json!({"parameter name": p.description, "parameter value": super::cheq::text(&p.value)}))
            .collect();
        let payload = json!({
            "iss": issuer,
            "aud": issuer,
            "sub": r.principal,
            "jti": r.id,
            "iat": now / 1000,
            "event": event,
            "tool": {"id": r.tool_id, "name": r.tool, "version": r.version},
            "args_sha256": r.args_sha256,
            "policy_rev": r.policy_rev,
            "protocol": r.protocol,
            "call_id": r.call_id,
            "decision": match entry.status {
                super::Status::Declined => "declined",
                super::Status::Pending | super::Status::Expired => "none",
                _ => "approved",
            },
            "approver": entry.decided_by,
            "decided_at": entry.decided_ms.map(rfc3339),
            "version": 1.0,
            "operation": format!("{issuer}/confirm/{}", r.id),
            "operation name": r.title.clone().unwrap_or_else(|| r.tool.clone()),
            "inputs": {"parameters": parameters},
            "date": rfc3339(now),
        });
        // What the human typed is in no record: a keyed hash of each value is (APPROVALS.md
        // §5.2.9's "salted hash"; the salt is secret, docs/approvals.md says why).
        let mut payload = payload;
        if let Some(fingerprints) = &entry.fingerprints {
            payload["human_inputs"] = Value::Object(fingerprints.clone());
        }
        let protected = b64(json!({"alg": "EdDSA", "typ": "cheq+jwt", "kid": self.kid})
            .to_string()
            .as_bytes());
        let payload = b64(payload.to_string().as_bytes());
        let signature = self.key.sign(format!("{protected}.{payload}").as_bytes());
        json!({"payload": payload, "signatures": [{"protected": protected, "signature": b64(signature.as_ref())}]})
            .to_string()
    }

    /// Whether `jws` (General JSON Serialization) carries a valid signature by this key.
    pub fn verify(&self, jws: &str) -> bool {
        let Ok(document) = serde_json::from_str::<Value>(jws) else {
            return false;
        };
        let payload = document["payload"].as_str().unwrap_or_default();
        document["signatures"].as_array().into_iter().flatten().any(|s| {
            let protected = s["protected"].as_str().unwrap_or_default();
            let Ok(signature) =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s["signature"].as_str().unwrap_or_default())
            else {
                return false;
            };
            aws_lc_rs::signature::UnparsedPublicKey::new(&aws_lc_rs::signature::ED25519, self.key.public_key().as_ref())
                .verify(format!("{protected}.{payload}").as_bytes(), &signature)
                .is_ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        let record = super::super::Record {
            id: "abc".into(),
            binding: "b".into(),
            principal: "key:alice".into(),
            protocol: "nact".into(),
            call_id: None,
            tool_id: "t".into(),
            tool: "send_payment".into(),
            title: None,
            version: "1.0.0".into(),
            description: String::new(),
            upstreams: Vec::new(),
            policy_rev: "p".into(),
            approvers: vec!["caller".into()],
            args_sha256: "d".into(),
            parameters: Vec::new(),
            human: Vec::new(),
            created_ms: 0,
            nonce: "n".into(),
        };
        Entry::pending(record, 1)
    }

    #[test]
    fn a_record_verifies_under_its_key_only_and_not_once_changed() {
        let signer = Signer::new(Some(b"seed"));
        let jws = signer.record(&entry(), "consumed", "https://tools.example");
        assert!(signer.verify(&jws));
        assert!(!Signer::new(Some(b"other")).verify(&jws));
        let mut document: Value = serde_json::from_str(&jws).unwrap();
        document["payload"] = b64(b"{\"sub\":\"key:mallory\"}").into();
        assert!(!signer.verify(&document.to_string()));
        assert_eq!(signer.jwks()["keys"][0]["crv"], "Ed25519");
    }
}
