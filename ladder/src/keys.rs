//! Owner and version keys, and the registration policy.
//!
//! A key is 256 random bits from the operating system, written as a kind prefix (`mmo_` for an
//! owner key, `mmv_` for a version key) and 52 lowercase base32 characters (RFC 4648 alphabet, no
//! padding). It is shown once; the store keeps only its SHA-256 hash ([`KeyHash`]). To check a
//! presented key the caller hashes it, looks the hash up, and compares the stored hash with
//! [`KeyHash::matches`], which takes the same time wherever the bytes differ.
//!
//! ```
//! use maumau_ladder::keys::{KeyKind, SecretKey};
//!
//! let key = SecretKey::generate(KeyKind::Version).unwrap();
//! assert!(key.as_str().starts_with("mmv_"));
//! let stored = key.hash();
//! let presented = SecretKey::parse(key.as_str()).unwrap();
//! assert!(stored.matches(&presented.hash()));
//! ```

use std::fmt;

use sha2::{Digest, Sha256};

use crate::error::{LadderError, Result};

/// Who a key speaks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// An owner key: registers bots and versions, rotates and revokes keys, resumes its bots.
    Owner,
    /// A version key: opens the lobby stream of one version.
    Version,
}

impl KeyKind {
    /// The text every key of this kind starts with.
    pub fn prefix(self) -> &'static str {
        match self {
            KeyKind::Owner => "mmo_",
            KeyKind::Version => "mmv_",
        }
    }

    /// The stored name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Owner => "owner",
            KeyKind::Version => "version",
        }
    }

    /// The kind named by [`KeyKind::as_str`].
    pub fn from_str_opt(s: &str) -> Option<KeyKind> {
        match s {
            "owner" => Some(KeyKind::Owner),
            "version" => Some(KeyKind::Version),
            _ => None,
        }
    }
}

/// Random bytes in a key.
pub const KEY_BYTES: usize = 32;
/// Base32 characters after the prefix: ceil(256 / 5).
const KEY_CHARS: usize = (KEY_BYTES * 8).div_ceil(5);
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A key in clear text. Exists only between generation and showing it once, or between receiving
/// it and hashing it; its `Debug` form hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey {
    kind: KeyKind,
    text: String,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({}…)", self.kind.prefix())
    }
}

impl SecretKey {
    /// A new key of 256 bits from the operating system's random source.
    pub fn generate(kind: KeyKind) -> Result<SecretKey> {
        let mut bytes = [0u8; KEY_BYTES];
        getrandom::fill(&mut bytes)
            .map_err(|e| LadderError::Io(std::io::Error::other(e.to_string())))?;
        Ok(SecretKey::from_bytes(kind, &bytes))
    }

    /// The key made of these bytes (for tests and for generators the caller controls).
    pub fn from_bytes(kind: KeyKind, bytes: &[u8; KEY_BYTES]) -> SecretKey {
        let mut text = String::with_capacity(kind.prefix().len() + KEY_CHARS);
        text.push_str(kind.prefix());
        let mut acc: u32 = 0;
        let mut bits = 0;
        for &b in bytes {
            acc = (acc << 8) | u32::from(b);
            bits += 8;
            while bits >= 5 {
                bits -= 5;
                text.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
            }
        }
        if bits > 0 {
            text.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
        }
        SecretKey { kind, text }
    }

    /// Checks the form of a presented key (prefix, length, alphabet). Says nothing about whether
    /// the key exists.
    pub fn parse(text: &str) -> Result<SecretKey> {
        let kind = [KeyKind::Owner, KeyKind::Version]
            .into_iter()
            .find(|k| text.starts_with(k.prefix()))
            .ok_or(LadderError::Unauthenticated)?;
        let body = &text[kind.prefix().len()..];
        if body.len() != KEY_CHARS || !body.bytes().all(|b| ALPHABET.contains(&b)) {
            return Err(LadderError::Unauthenticated);
        }
        Ok(SecretKey {
            kind,
            text: text.to_string(),
        })
    }

    /// Who the key speaks for.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The key as shown to its holder, once.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The hash that is stored instead of the key: SHA-256 of its full text.
    pub fn hash(&self) -> KeyHash {
        KeyHash(Sha256::digest(self.text.as_bytes()).into())
    }
}

/// SHA-256 of a key (or of an invitation code): what the store keeps.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(pub [u8; 32]);

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash(")?;
        for b in &self.0[..4] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

impl KeyHash {
    /// True when both hashes are equal, in time that does not depend on where they differ.
    pub fn matches(&self, other: &KeyHash) -> bool {
        constant_time_eq(&self.0, &other.0)
    }
}

/// Compares two equal-length byte strings without an early exit.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= std::hint::black_box(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// Who may register an owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistrationPolicy {
    /// Anyone.
    Open,
    /// Only someone who gives one of the operator's invitation codes (kept as hashes).
    Invitation(Vec<KeyHash>),
}

impl RegistrationPolicy {
    /// Registration needing one of these codes (empty codes are ignored; with none left,
    /// nobody can register).
    pub fn invitation<S: AsRef<str>>(codes: &[S]) -> RegistrationPolicy {
        RegistrationPolicy::Invitation(
            codes
                .iter()
                .map(AsRef::as_ref)
                .filter(|c| !c.is_empty())
                .map(hash_code)
                .collect(),
        )
    }

    /// Whether a registration with this code (if any) is allowed. Every stored code is compared
    /// in constant time, so the answer's timing says nothing about which code was close.
    pub fn admits(&self, code: Option<&str>) -> Result<()> {
        match self {
            RegistrationPolicy::Open => Ok(()),
            RegistrationPolicy::Invitation(codes) => {
                let given = hash_code(code.unwrap_or(""));
                let mut ok = false;
                for c in codes {
                    ok |= c.matches(&given);
                }
                if ok && code.is_some_and(|c| !c.is_empty()) {
                    Ok(())
                } else {
                    Err(LadderError::InvitationRequired)
                }
            }
        }
    }
}

fn hash_code(code: &str) -> KeyHash {
    KeyHash(Sha256::digest(code.as_bytes()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_prefix_length_and_alphabet() {
        for kind in [KeyKind::Owner, KeyKind::Version] {
            let k = SecretKey::generate(kind).unwrap();
            assert!(k.as_str().starts_with(kind.prefix()));
            assert_eq!(k.as_str().len(), 4 + 52);
            assert_eq!(SecretKey::parse(k.as_str()).unwrap(), k);
            assert_eq!(SecretKey::parse(k.as_str()).unwrap().kind(), kind);
        }
    }

    #[test]
    fn generated_keys_differ() {
        let a = SecretKey::generate(KeyKind::Owner).unwrap();
        let b = SecretKey::generate(KeyKind::Owner).unwrap();
        assert_ne!(a.as_str(), b.as_str());
        assert!(!a.hash().matches(&b.hash()));
    }

    #[test]
    fn base32_encoding_is_rfc4648_lowercase() {
        // RFC 4648 test vector: "foobar" encodes as MZXW6YTBOI; our keys are 32 bytes, so check
        // the leading characters of a key that starts with those bytes (they depend only on them).
        let mut bytes = [0u8; 32];
        bytes[..5].copy_from_slice(b"fooba");
        let k = SecretKey::from_bytes(KeyKind::Owner, &bytes);
        assert!(k.as_str().starts_with("mmo_mzxw6ytb"), "{}", k.as_str());
        let ones = SecretKey::from_bytes(KeyKind::Owner, &[0xff; 32]);
        // 256 bits = 51 full characters + one holding a single bit followed by zero padding.
        assert_eq!(&ones.as_str()[4..], format!("{}q", "7".repeat(51)));
    }

    #[test]
    fn malformed_keys_are_refused() {
        let good = SecretKey::from_bytes(KeyKind::Version, &[7; 32]);
        let s = good.as_str();
        for bad in [
            "",
            "mmv_",
            &s[..s.len() - 1],
            &format!("{s}a"),
            &s.replace("mmv_", "mmx_"),
            &s.to_uppercase(),
            &format!("mmv_{}1", &s[4..s.len() - 1]),
        ] {
            assert!(
                matches!(SecretKey::parse(bad), Err(LadderError::Unauthenticated)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn hash_is_sha256_of_the_text() {
        let k = SecretKey::from_bytes(KeyKind::Owner, &[0; 32]);
        let expected: [u8; 32] = Sha256::digest(k.as_str().as_bytes()).into();
        assert_eq!(k.hash().0, expected);
        // Different kinds with the same bytes are different keys.
        let v = SecretKey::from_bytes(KeyKind::Version, &[0; 32]);
        assert!(!k.hash().matches(&v.hash()));
    }

    #[test]
    fn constant_time_compare_agrees_with_equality() {
        let a = [3u8; 32];
        for i in 0..32 {
            let mut b = a;
            b[i] ^= 0x80;
            assert!(!constant_time_eq(&a, &b));
        }
        assert!(constant_time_eq(&a, &a));
    }

    #[test]
    fn debug_never_prints_the_secret() {
        let k = SecretKey::from_bytes(KeyKind::Owner, &[9; 32]);
        let shown = format!("{k:?}");
        assert!(!shown.contains(&k.as_str()[4..12]), "{shown}");
    }

    #[test]
    fn registration_policy() {
        assert!(RegistrationPolicy::Open.admits(None).is_ok());
        let p = RegistrationPolicy::invitation(&["spring-2026", "friends"]);
        assert!(p.admits(Some("friends")).is_ok());
        assert!(p.admits(Some("spring-2026")).is_ok());
        for bad in [None, Some(""), Some("Friends"), Some("friends ")] {
            assert!(
                matches!(p.admits(bad), Err(LadderError::InvitationRequired)),
                "{bad:?}"
            );
        }
        let empty = RegistrationPolicy::invitation(&[""]);
        assert!(empty.admits(Some("")).is_err());
    }
}
