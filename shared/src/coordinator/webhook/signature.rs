//! The `X-Hub-Signature-256` header GitHub signs each delivery with: `sha256=` followed by
//! the hex HMAC-SHA256 of the raw request body under the webhook's secret ("Validating
//! webhook deliveries", docs.github.com). Verification compares in constant time
//! (`Mac::verify_slice`), over the exact bytes received, never over re-serialised JSON.

use hmac::Hmac;
use hmac::Mac;
use sha2::Sha256;

/// The header's name, lower case as HTTP libraries normalise it.
pub const HEADER: &str = "x-hub-signature-256";

/// The header's prefix before the hex digest.
const PREFIX: &str = "sha256=";

/// Why a delivery's signature does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The delivery has no `X-Hub-Signature-256` header (a webhook without a secret, or not
    /// GitHub).
    #[error("no X-Hub-Signature-256 header (is the webhook's secret set?)")]
    Missing,
    /// The header is not `sha256=` followed by 64 hex digits.
    #[error("X-Hub-Signature-256 is not sha256=<64 hex digits>")]
    Malformed,
    /// The signature is well formed but is not the body's under the configured secret.
    #[error("X-Hub-Signature-256 does not match the body under the configured secret")]
    Mismatch,
}

/// Returns the 32 digest bytes of a header value `sha256=<64 hex digits>` (either case).
pub fn parse_header(value: &str) -> Result<[u8; 32], SignatureError> {
    let hex = value
        .trim()
        .strip_prefix(PREFIX)
        .ok_or(SignatureError::Malformed)?;
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return Err(SignatureError::Malformed);
    }
    let mut out = [0u8; 32];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        let (Some(high), Some(low)) = (nibble(pair[0]), nibble(pair[1])) else {
            return Err(SignatureError::Malformed);
        };
        out[i] = (high << 4) | low;
    }
    Ok(out)
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Verifies `header` (the `X-Hub-Signature-256` value, if any) over the raw `body` under
/// `secret`, comparing in constant time.
pub fn verify(secret: &[u8], body: &[u8], header: Option<&str>) -> Result<(), SignatureError> {
    let expected = parse_header(header.ok_or(SignatureError::Missing)?)?;
    let mut mac = keyed(secret);
    mac.update(body);
    mac.verify_slice(&expected)
        .map_err(|_| SignatureError::Mismatch)
}

/// Returns the header value GitHub would send for `body` under `secret` (`sha256=<hex>`),
/// for tests and for replaying a captured delivery against a local listener.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = keyed(secret);
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut out = String::with_capacity(PREFIX.len() + 64);
    out.push_str(PREFIX);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

fn keyed(secret: &[u8]) -> Hmac<Sha256> {
    <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .expect("HMAC takes a key of any length (longer ones are hashed first)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of GitHub's "Validating webhook deliveries" page.
    const DOC_SECRET: &[u8] = b"It's a Secret to Everybody";
    const DOC_BODY: &[u8] = b"Hello, World!";
    const DOC_HEADER: &str =
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    #[test]
    fn signs_githubs_documented_test_vector() {
        assert_eq!(sign(DOC_SECRET, DOC_BODY), DOC_HEADER);
    }

    #[test]
    fn verifies_githubs_documented_test_vector_in_either_case() {
        assert_eq!(verify(DOC_SECRET, DOC_BODY, Some(DOC_HEADER)), Ok(()));
        let upper = format!("sha256={}", DOC_HEADER[7..].to_uppercase());
        assert_eq!(verify(DOC_SECRET, DOC_BODY, Some(&upper)), Ok(()));
    }

    #[test]
    fn refuses_another_body_another_secret_and_a_missing_header() {
        assert_eq!(
            verify(DOC_SECRET, b"Hello, World?", Some(DOC_HEADER)),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(b"another secret", DOC_BODY, Some(DOC_HEADER)),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(DOC_SECRET, DOC_BODY, None),
            Err(SignatureError::Missing)
        );
    }

    #[test]
    fn malformed_headers_are_named_as_such() {
        for header in [
            "",
            "sha1=757107ea0eb2509fc211221cce984b8a37570b6d",
            "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
            "sha256=757107ea",
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1",
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1z",
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17aa",
        ] {
            assert_eq!(
                verify(DOC_SECRET, DOC_BODY, Some(header)),
                Err(SignatureError::Malformed),
                "{header:?}"
            );
        }
    }

    #[test]
    fn a_signature_of_the_right_shape_but_wrong_digits_is_a_mismatch() {
        let mut wrong = DOC_HEADER.to_owned();
        wrong.replace_range(wrong.len() - 1.., "8");
        assert_eq!(
            verify(DOC_SECRET, DOC_BODY, Some(&wrong)),
            Err(SignatureError::Mismatch)
        );
    }
}
