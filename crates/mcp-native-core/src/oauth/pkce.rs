//! Proof Key for Code Exchange (RFC 7636, method `S256` only) and the `state` value of an
//! authorization request. Shared by every OAuth flow of the package; the randomness comes from
//! the operating system through the same crypto library rustls uses (aws-lc).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Random bytes behind a verifier: 32, the RFC 7636 recommendation (43 characters of base64url).
pub const VERIFIER_BYTES: usize = 32;
/// Random bytes behind a `state` value: 16, printed as 32 lower-case hex characters.
pub const STATE_BYTES: usize = 16;

/// A PKCE pair. `Debug` never prints the verifier.
#[derive(Clone)]
pub struct Pkce {
    /// base64url (no padding) of [`VERIFIER_BYTES`] random bytes; sent only to the token endpoint.
    pub verifier: String,
    /// base64url (no padding) of the SHA-256 of `verifier`; sent with the authorization request.
    pub challenge: String,
}

impl Pkce {
    /// A fresh pair.
    pub fn generate() -> Self {
        let verifier = URL_SAFE_NO_PAD.encode(random_bytes::<VERIFIER_BYTES>());
        let challenge = challenge_for(&verifier);
        Pkce {
            verifier,
            challenge,
        }
    }

    /// The `code_challenge_method` this module produces.
    pub const METHOD: &'static str = "S256";
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce")
            .field("verifier", &"<redacted>")
            .field("challenge", &self.challenge)
            .finish()
    }
}

/// The `S256` challenge of `verifier`: base64url (no padding) of SHA-256 of its ASCII bytes.
pub fn challenge_for(verifier: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// A fresh `state`: [`STATE_BYTES`] random bytes as lower-case hex.
pub fn random_state() -> String {
    random_bytes::<STATE_BYTES>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `N` bytes from the operating system's generator.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // aws-lc's generator fails only when the OS cannot give entropy at all; then no OAuth flow
    // can be safe, and a panic (an `MCP_INTERNAL` error at the boundary) is the honest outcome.
    aws_lc_rs::rand::fill(&mut bytes).expect("the operating system's random generator failed");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_example() {
        assert_eq!(
            challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn fresh_pairs_have_the_documented_shape() {
        let a = Pkce::generate();
        let b = Pkce::generate();
        assert_eq!(a.verifier.len(), 43);
        assert!(
            a.verifier
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(a.challenge, challenge_for(&a.verifier));
        assert_ne!(a.verifier, b.verifier);
        assert!(!format!("{a:?}").contains(&a.verifier));
    }

    #[test]
    fn states_are_32_hex_characters() {
        let s = random_state();
        assert_eq!(s.len(), 32);
        assert!(
            s.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(s, random_state());
    }
}
