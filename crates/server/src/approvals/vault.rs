//! What a human typed on the confirmation page for `source: human` inputs (CHEQ's Flow B,
//! issue #40.4), sealed while it waits in the record store for the call it belongs to.
//!
//! AES-256-GCM under a key from `[approvals] inputs_key_secret` (the same on every replica of
//! one store) or a random key of this process; the confirmation id is the associated data, so a
//! sealed value moved to another record does not open. The audit record carries a keyed hash
//! of each value instead of the value: HMAC-SHA256 under a second key from the same secret, so
//! whoever holds the secret can check what was typed, and nobody who reads the log can find a
//! short value (a card number) by trying candidates.

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::hmac;
use aws_lc_rs::rand::{SecureRandom as _, SystemRandom};
use base64::Engine as _;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use toolhost_core::confirm::HumanValues;

/// Seals and opens human-typed values, and hashes them for the audit record.
pub struct Vault {
    key: LessSafeKey,
    hash_key: hmac::Key,
    random: SystemRandom,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").finish_non_exhaustive()
    }
}

/// A key for `purpose` from the secret: the AEAD and the hash never share one.
fn derive(secret: &[u8], purpose: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"toolhost-approvals-inputs\0");
    hash.update(purpose.as_bytes());
    hash.update([0]);
    hash.update(secret);
    hash.finalize().into()
}

impl Vault {
    /// A vault keyed by `secret` (shared by replicas), or by a random key of this process.
    pub fn new(secret: Option<&[u8]>) -> Self {
        let random = SystemRandom::new();
        let seed: Vec<u8> = match secret {
            Some(secret) => secret.to_vec(),
            None => {
                let mut seed = [0u8; 32];
                // The system's generator does not fail on the platforms toolhost runs on; two
                // v4 UUIDs (122 random bits each) are the fallback.
                if random.fill(&mut seed).is_err() {
                    seed = [uuid::Uuid::new_v4().into_bytes(), uuid::Uuid::new_v4().into_bytes()]
                        .concat()
                        .try_into()
                        .unwrap_or([0; 32]);
                }
                seed.to_vec()
            }
        };
        let unbound = UnboundKey::new(&AES_256_GCM, &derive(&seed, "seal"))
            .unwrap_or_else(|_| unreachable!("32 bytes are an AES-256 key"));
        Self {
            key: LessSafeKey::new(unbound),
            hash_key: hmac::Key::new(hmac::HMAC_SHA256, &derive(&seed, "hash")),
            random,
        }
    }

    /// `values`, sealed for the confirmation `id`: base64 of nonce ‖ ciphertext ‖ tag.
    pub fn seal(&self, id: &str, values: &HumanValues) -> Option<String> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).ok()?;
        let mut sealed = serde_json::to_vec(values.expose()).ok()?;
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(id.as_bytes()),
                &mut sealed,
            )
            .ok()?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Some(base64::engine::general_purpose::STANDARD_NO_PAD.encode(out))
    }

    /// The values sealed for `id`, or `None` when `text` was not sealed by this key for it.
    pub fn open(&self, id: &str, text: &str) -> Option<HumanValues> {
        let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(text).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(id.as_bytes()), &mut sealed)
            .ok()?;
        serde_json::from_slice::<Map<String, Value>>(plain)
            .ok()
            .map(HumanValues::new)
    }

    /// Each value's keyed hash for the audit record, `hmac-sha256:<hex>`, bound to the
    /// confirmation `id` and the parameter's name (the same value in two records hashes apart).
    pub fn fingerprints(&self, id: &str, values: &HumanValues) -> Map<String, Value> {
        values
            .expose()
            .iter()
            .map(|(name, value)| {
                let mut context = hmac::Context::with_key(&self.hash_key);
                for part in [id.as_bytes(), name.as_bytes(), value.to_string().as_bytes()] {
                    context.update(&(part.len() as u64).to_be_bytes());
                    context.update(part);
                }
                let tag = context.sign();
                let hex = toolhost_core::hex(tag.as_ref());
                (name.clone(), Value::String(format!("hmac-sha256:{hex}")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};
    use toolhost_core::confirm::HumanValues;

    use super::Vault;

    fn card() -> HumanValues {
        let Some(values) = json!({"card": "4111 1111 1111 1111", "cvc": 123}).as_object().cloned() else {
            unreachable!()
        };
        HumanValues::new(values)
    }

    #[test]
    fn a_sealed_value_opens_for_its_record_only() {
        let vault = Vault::new(None);
        let sealed = vault.seal("abc", &card()).unwrap();
        assert!(!sealed.contains("4111"), "{sealed}");
        assert_eq!(vault.open("abc", &sealed), Some(card()));
        // Moved to another record, or opened with another key, it does not open.
        assert_eq!(vault.open("abd", &sealed), None);
        assert_eq!(Vault::new(None).open("abc", &sealed), None);
        // A flipped byte does not open either (GCM's tag).
        let mut bytes: Vec<char> = sealed.chars().collect();
        let last = bytes.len() - 3;
        bytes[last] = if bytes[last] == 'A' { 'B' } else { 'A' };
        let tampered: String = bytes.into_iter().collect();
        assert_eq!(vault.open("abc", &tampered), None);
        assert_eq!(vault.open("abc", "not base64!"), None);
        // Two seals of the same values differ (a fresh nonce each time).
        assert_ne!(vault.seal("abc", &card()).unwrap(), sealed);
    }

    #[test]
    fn replicas_sharing_the_secret_open_each_others_values() {
        let (a, b) = (
            Vault::new(Some(b"fleet key of thirty-two bytes..")),
            Vault::new(Some(b"fleet key of thirty-two bytes..")),
        );
        let sealed = a.seal("abc", &card()).unwrap();
        assert_eq!(b.open("abc", &sealed), Some(card()));
        assert_eq!(a.fingerprints("abc", &card()), b.fingerprints("abc", &card()));
    }

    #[test]
    fn fingerprints_are_keyed_and_show_no_value() {
        let vault = Vault::new(None);
        let prints = vault.fingerprints("abc", &card());
        assert_eq!(prints.len(), 2);
        let text = serde_json::to_string(&prints).unwrap();
        assert!(!text.contains("4111") && !text.contains("123\""), "{text}");
        assert!(prints["card"].as_str().unwrap().starts_with("hmac-sha256:"));
        assert_ne!(prints, Vault::new(None).fingerprints("abc", &card()));
        assert_ne!(prints, vault.fingerprints("abd", &card()));
        assert_eq!(format!("{:?}", card()), "{\"card\", \"cvc\"}");
        assert!(vault.fingerprints("abc", &HumanValues::new(Map::new())).is_empty());
    }
}
