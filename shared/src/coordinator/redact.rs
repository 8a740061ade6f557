//! Evidence hygiene (spec "Evidence hygiene"): everything the coordinator stores or publishes
//! passes through here first, redacted (known secrets, GitHub token shapes, `Authorization`
//! header values, private key blocks) and then bounded on a char boundary.
//!
//! Redaction replaces matches with bracketed markers, so a secret that contains neither `[` nor
//! `]` can never be re-formed across a marker.

/// Bytes of an issue body kept in the task record and the implementer prompt.
pub const ISSUE_BODY_MAX: usize = 8 * 1024;
/// Bytes of a lane's body (findings, question, blocker) kept after its protocol lines.
pub const LANE_BODY_MAX: usize = 16 * 1024;
/// Bytes of failed check output routed to the implementer.
pub const CHECK_OUTPUT_MAX: usize = 16 * 1024;
/// Bytes of text the coordinator puts into one GitHub comment.
pub const COMMENT_MAX: usize = 8 * 1024;

/// Text that replaces a secret, a token or a header value.
pub const REDACTED: &str = "[redacted]";
/// Text that replaces a private key block.
pub const REDACTED_KEY: &str = "[redacted private key]";

/// Secrets shorter than this (in chars) are ignored: replacing them would shred ordinary text.
pub const MIN_SECRET_CHARS: usize = 6;

/// Returns at most `max_bytes` of `text`, cut on a char boundary, followed by a marker
/// `"\n[… truncated N bytes]"` when anything was cut.
///
/// The result exceeds `max_bytes` only by the marker.
pub fn bound(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let cut = floor_char_boundary(text, max_bytes);
    format!("{}\n[… truncated {} bytes]", &text[..cut], text.len() - cut)
}

/// Returns at most the last `max_bytes` of `text`, cut on a char boundary, preceded by a marker
/// `"[… truncated N bytes]\n"` when anything was cut.
///
/// Failed check output keeps its tail: that is where test runners print the failures.
pub fn bound_tail(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… truncated {start} bytes]\n{}", &text[start..])
}

/// Returns `text` with every given secret (of at least [`MIN_SECRET_CHARS`] chars), every
/// GitHub token shape, every `Authorization:` header value, every password in a URL and every
/// private key block replaced by a marker.
pub fn redact(text: &str, secrets: &[&str]) -> String {
    let text = redact_secrets(text, secrets);
    let text = redact_private_keys(&text);
    let text = redact_authorization(&text);
    let text = redact_url_credentials(&text);
    redact_tokens(&text)
}

/// Returns `text` redacted with [`redact`] and then bounded with [`bound`].
pub fn clean(text: &str, secrets: &[&str], max_bytes: usize) -> String {
    bound(&redact(text, secrets), max_bytes)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Replaces every byte range covered by an occurrence of a secret; overlapping or adjacent
/// occurrences of different secrets merge into one marker.
fn redact_secrets(text: &str, secrets: &[&str]) -> String {
    let mut ranges: Vec<(usize, usize)> = secrets
        .iter()
        .filter(|s| s.chars().count() >= MIN_SECRET_CHARS)
        .flat_map(|s| text.match_indices(s).map(|(at, m)| (at, at + m.len())))
        .collect();
    if ranges.is_empty() {
        return text.to_owned();
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut iter = ranges.into_iter().peekable();
    while let Some((start, mut end)) = iter.next() {
        while let Some(&(next_start, next_end)) = iter.peek() {
            if next_start > end {
                break;
            }
            end = end.max(next_end);
            iter.next();
        }
        out.push_str(&text[done..start]);
        out.push_str(REDACTED);
        done = end;
    }
    out.push_str(&text[done..]);
    out
}

const TOKEN_PREFIXES: [&str; 5] = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"];
const PAT_PREFIX: &str = "github_pat_";
const TOKEN_MIN_TAIL: usize = 20;

/// Replaces GitHub token shapes: a classic prefix followed by 20+ alphanumerics, or a
/// fine-grained `github_pat_` followed by 20+ alphanumerics or underscores.
fn redact_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let tail = if rest.starts_with(PAT_PREFIX) {
            Some((PAT_PREFIX.len(), true))
        } else if TOKEN_PREFIXES.iter().any(|p| rest.starts_with(p)) {
            Some((4, false))
        } else {
            None
        };
        if let Some((prefix_len, underscores)) = tail {
            let run = rest.as_bytes()[prefix_len..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || (underscores && **b == b'_'))
                .count();
            if run >= TOKEN_MIN_TAIL {
                out.push_str(&text[done..at]);
                out.push_str(REDACTED);
                at += prefix_len + run;
                done = at;
                continue;
            }
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    out.push_str(&text[done..]);
    out
}

const AUTHORIZATION: &str = "authorization";

/// Replaces the value of every `Authorization:` header (any case, also quoted as in
/// `"Authorization": "…"`) up to the end of its line.
fn redact_authorization(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&redact_authorization_line(line));
    }
    out
}

fn redact_authorization_line(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(AUTHORIZATION) {
        let name_end = from + found + AUTHORIZATION.len();
        let after = &line[name_end..];
        let unquoted = after.strip_prefix(['"', '\'']).unwrap_or(after);
        if let Some(value) = unquoted.trim_start_matches([' ', '\t']).strip_prefix(':') {
            // Keep the original spacing: inserting text of our own could complete a secret.
            let value_start = line.len() - value.len();
            let spaces = value.len() - value.trim_start_matches([' ', '\t']).len();
            let cr = if line.ends_with('\r') { "\r" } else { "" };
            return format!("{}{REDACTED}{cr}", &line[..value_start + spaces]);
        }
        from = name_end;
    }
    line.to_owned()
}

/// Replaces the password of every URL with credentials (`scheme://user:password@host`), as
/// git prints in remote errors.
fn redact_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let userinfo_start = at + 3;
        let tail = &rest[userinfo_start..];
        let authority_len = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(tail.len());
        let authority = &tail[..authority_len];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at_sign), Some(colon)) if colon < at_sign && at_sign > colon + 1 => {
                out.push_str(&rest[..userinfo_start + colon + 1]);
                out.push_str(REDACTED);
                rest = &tail[at_sign..];
            }
            _ => {
                out.push_str(&rest[..userinfo_start]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_DASHES: &str = "-----";
const PEM_PRIVATE: &str = "PRIVATE KEY";

/// Replaces every `-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----` block; a
/// block without its end line is redacted to the end of the text.
fn redact_private_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(begin) = rest.find(PEM_BEGIN) {
        let label_start = begin + PEM_BEGIN.len();
        let Some(label_len) = rest[label_start..].find(PEM_DASHES) else {
            break;
        };
        let label = &rest[label_start..label_start + label_len];
        let after_begin = label_start + label_len + PEM_DASHES.len();
        if !label.ends_with(PEM_PRIVATE) || label.contains('\n') {
            out.push_str(&rest[..after_begin]);
            rest = &rest[after_begin..];
            continue;
        }
        out.push_str(&rest[..begin]);
        out.push_str(REDACTED_KEY);
        let end_line = format!("-----END {label}-----");
        match rest[after_begin..].find(&end_line) {
            Some(end) => rest = &rest[after_begin + end + end_line.len()..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn bound_keeps_short_text_verbatim() {
        assert_eq!(bound("hello", 5), "hello");
        assert_eq!(bound("", 0), "");
    }

    #[test]
    fn bound_cuts_on_a_char_boundary_and_says_how_much() {
        assert_eq!(bound("hello world", 5), "hello\n[… truncated 6 bytes]");
        // "ä" is two bytes: a cut inside it moves back to its start.
        assert_eq!(bound("aä", 2), "a\n[… truncated 2 bytes]");
        assert_eq!(bound("äö", 0), "\n[… truncated 4 bytes]");
    }

    #[test]
    fn bound_tail_keeps_the_end() {
        assert_eq!(bound_tail("hello world", 5), "[… truncated 6 bytes]\nworld");
        assert_eq!(bound_tail("äb", 2), "[… truncated 2 bytes]\nb");
        assert_eq!(bound_tail("short", 10), "short");
    }

    #[test]
    fn redact_replaces_given_secrets_and_ignores_short_ones() {
        let text = "token=s3cr3t-value and abc and s3cr3t-value again";
        assert_eq!(
            redact(text, &["s3cr3t-value", "abc"]),
            "token=[redacted] and abc and [redacted] again"
        );
        assert_eq!(redact("xxabcdefyy", &["abcdef"]), "xx[redacted]yy");
        assert_eq!(redact("xxabcdeyy", &["abcde"]), "xxabcdeyy");
    }

    #[test]
    fn redact_merges_overlapping_secrets() {
        assert_eq!(
            redact("--abcdefghij--", &["abcdefgh", "defghij"]),
            "--[redacted]--"
        );
        assert_eq!(redact("aaaaaaa", &["aaaaaa"]), "[redacted]a");
    }

    #[test]
    fn redact_replaces_github_token_shapes() {
        let classic = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K");
        let short = "ghs_tooShort123";
        let pat = format!("github_pat_{}", "11ABCDEFG_0123456789abcdef");
        let text = format!("use {classic}, not {short}; pat {pat}.");
        assert_eq!(
            redact(&text, &[]),
            "use [redacted], not ghs_tooShort123; pat [redacted]."
        );
        for prefix in TOKEN_PREFIXES {
            let token = format!("{prefix}{}", "x".repeat(20));
            assert_eq!(redact(&token, &[]), REDACTED, "{prefix}");
        }
    }

    #[test]
    fn redact_replaces_authorization_values_to_end_of_line() {
        let text = "GET /\r\nAuthorization: Bearer abc.def\r\nauthorization: token xyz\nHost: x";
        assert_eq!(
            redact(text, &[]),
            "GET /\r\nAuthorization: [redacted]\r\nauthorization: [redacted]\nHost: x"
        );
        assert_eq!(
            redact("AUTHORIZATION:basic", &[]),
            "AUTHORIZATION:[redacted]"
        );
    }

    #[test]
    fn redact_replaces_quoted_authorization_values() {
        let text = r#"{"Authorization": "Bearer abc", "x": 1}"#;
        assert_eq!(redact(text, &[]), r#"{"Authorization": [redacted]"#);
        let prose = "authorization is required; authorization: basic xyz";
        assert_eq!(
            redact(prose, &[]),
            "authorization is required; authorization: [redacted]"
        );
        assert_eq!(
            redact("no authorization here", &[]),
            "no authorization here"
        );
    }

    #[test]
    fn redact_replaces_url_passwords() {
        let text = "fatal: unable to access 'https://x-access-token:abc123@github.com/o/r.git/'";
        assert_eq!(
            redact(text, &[]),
            "fatal: unable to access 'https://x-access-token:[redacted]@github.com/o/r.git/'"
        );
        for unchanged in [
            "https://github.com/o/r",
            "ssh://git@github.com/o/r",
            "http://h:8080/x",
            "a://",
        ] {
            assert_eq!(redact(unchanged, &[]), unchanged);
        }
        assert_eq!(
            redact("https://u:p@h https://v:q@i", &[]),
            "https://u:[redacted]@h https://v:[redacted]@i"
        );
    }

    #[test]
    fn redact_replaces_private_key_blocks() {
        let text = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\nNzaC1\n-----END OPENSSH PRIVATE KEY-----\nafter";
        assert_eq!(redact(text, &[]), "before\n[redacted private key]\nafter");
        let rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----";
        assert_eq!(redact(rsa, &[]), REDACTED_KEY);
        let cut = "x -----BEGIN PRIVATE KEY-----\nMIIE and the rest";
        assert_eq!(redact(cut, &[]), "x [redacted private key]");
        let public = "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----";
        assert_eq!(redact(public, &[]), public);
        let public_then_private = format!("{public}\n{rsa}");
        assert_eq!(
            redact(&public_then_private, &[]),
            format!("{public}\n{REDACTED_KEY}")
        );
    }

    #[test]
    fn clean_redacts_before_bounding() {
        // Bounding first would keep the secret's first bytes; redacting first removes it whole.
        let text = "aaaa-secret-token-zzzz";
        assert_eq!(
            clean(text, &["secret-token"], 10),
            "aaaa-[reda\n[… truncated 10 bytes]"
        );
    }

    #[test]
    fn limits_are_the_documented_sizes() {
        assert_eq!(ISSUE_BODY_MAX, 8192);
        assert_eq!(LANE_BODY_MAX, 16384);
        assert_eq!(CHECK_OUTPUT_MAX, 16384);
        assert_eq!(COMMENT_MAX, 8192);
    }

    proptest! {
        #[test]
        fn bound_is_a_marked_prefix(text in "\\PC{0,64}", max in 0usize..80) {
            let out = bound(&text, max);
            if text.len() <= max {
                prop_assert_eq!(&out, &text);
            } else {
                let (kept, marker) = out.split_once("\n[… truncated ").expect("marker");
                prop_assert!(kept.len() <= max);
                prop_assert!(text.starts_with(kept));
                prop_assert_eq!(marker, format!("{} bytes]", text.len() - kept.len()));
                // Bounding the kept prefix again changes nothing.
                prop_assert_eq!(bound(kept, max), kept);
            }
        }

        #[test]
        fn bound_tail_is_a_marked_suffix(text in "\\PC{0,64}", max in 0usize..80) {
            let out = bound_tail(&text, max);
            if text.len() <= max {
                prop_assert_eq!(&out, &text);
            } else {
                let (marker, kept) = out.split_once("]\n").expect("marker");
                prop_assert!(kept.len() <= max);
                prop_assert!(text.ends_with(kept));
                prop_assert_eq!(marker, format!("[… truncated {} bytes", text.len() - kept.len()));
            }
        }

        #[test]
        fn an_embedded_secret_never_survives(
            before in "\\PC{0,40}",
            secret in "[^\\[\\]\\p{C}]{6,30}",
            after in "\\PC{0,40}",
            other in "[A-Za-z0-9]{0,12}",
        ) {
            let text = format!("{before}{secret}{after}{secret}");
            let out = redact(&text, &[other.as_str(), secret.as_str()]);
            prop_assert!(!out.contains(&secret), "{out:?}");
        }

        #[test]
        fn redact_never_panics(text in "\\PC{0,200}", secret in "\\PC{0,10}") {
            let _ = clean(&text, &[secret.as_str()], 50);
        }
    }
}
