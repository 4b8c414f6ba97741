//! Opaque page cursors (N-ACT §6.4): keyset positions with a checksum, so a forged or corrupted
//! cursor is refused instead of silently starting somewhere.

use std::hash::Hasher;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What a cursor continues: the tool listing or one tool's version listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Tools,
    Versions,
    /// A ranked listing (`q`): the position of the next result and the query it ranks.
    Ranked,
}

impl Kind {
    fn tag(self) -> char {
        match self {
            Self::Tools => 't',
            Self::Versions => 'v',
            Self::Ranked => 'r',
        }
    }
}

/// Encodes "continue after `key`" for a listing of `kind`.
pub(super) fn encode(kind: Kind, key: &str) -> String {
    let payload = format!("{}:{key}", kind.tag());
    format!("{}.{:012x}", URL_SAFE_NO_PAD.encode(&payload), checksum(&payload))
}

/// Decodes a cursor of `kind` back to its key, or `None` if this server did not issue it.
pub(super) fn decode(kind: Kind, cursor: &str) -> Option<String> {
    let (data, sum) = cursor.rsplit_once('.')?;
    let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(data).ok()?).ok()?;
    if u64::from_str_radix(sum, 16).ok()? != checksum(&payload) {
        return None;
    }
    let key = payload.strip_prefix(kind.tag())?.strip_prefix(':')?;
    Some(key.to_owned())
}

/// 48 bits of a fixed-key SipHash: an integrity check, not a secret (cursors carry no authority).
fn checksum(payload: &str) -> u64 {
    #[allow(deprecated)] // fixed keys are the point: every replica must accept every other's cursors
    let mut hasher = std::hash::SipHasher::new_with_keys(0x746f_6f6c_686f_7374, 0x6e61_6374_6375_7273);
    hasher.write(payload.as_bytes());
    hasher.finish() & 0xffff_ffff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_forgeries() {
        let c = encode(Kind::Tools, "lookup_weather");
        assert_eq!(decode(Kind::Tools, &c).as_deref(), Some("lookup_weather"));
        assert_eq!(
            decode(Kind::Versions, &c),
            None,
            "a tools cursor is not a versions cursor"
        );
        let forged = format!("{}.{}", URL_SAFE_NO_PAD.encode("t:zzz"), &c[c.len() - 12..]);
        assert_eq!(decode(Kind::Tools, &forged), None);
        assert_eq!(decode(Kind::Tools, "abc"), None);
        assert_eq!(decode(Kind::Tools, ""), None);
    }
}

/// Issue #12: any text is safely refused or decoded, and every key round-trips.
#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::{Kind, decode, encode};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn cursors_round_trip_and_never_panic(key in "\\PC{0,64}", junk in "\\PC{0,64}") {
            prop_assert_eq!(decode(Kind::Tools, &encode(Kind::Tools, &key)), Some(key.clone()));
            prop_assert_eq!(decode(Kind::Versions, &encode(Kind::Tools, &key)), None);
            let _ = decode(Kind::Tools, &junk);
        }
    }
}
