//! Which host and port a request is addressed to, judged as RFC 9112 §3.2 says: exactly one
//! `Host` line with a valid value (else 400), and for an absolute-form request
//! (`GET http://host/path`) the target's authority instead of the Host header. Also the
//! `Origin` rule for writes: the request's own origin (scheme, host and port), nothing else.
//!
//! Pure functions; the middleware in `guard.rs` applies them.

/// A request's authority: the host (lowercased, IPv6 brackets removed) and the port, if one
/// was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority {
    /// The host name or address.
    pub(crate) host: String,
    /// The port, when the authority names one.
    pub(crate) port: Option<u16>,
}

/// Why a request's authority cannot be judged (each answered 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadAuthority {
    /// No Host header.
    Missing,
    /// More than one Host header line.
    Duplicate,
    /// A Host (or request target authority) that is not `host[:port]`.
    Invalid,
}

impl BadAuthority {
    /// The sentence the client sees.
    pub(crate) fn message(self) -> &'static str {
        match self {
            BadAuthority::Missing => "Bad request: the Host header is missing.",
            BadAuthority::Duplicate => "Bad request: more than one Host header.",
            BadAuthority::Invalid => "Bad request: the Host header is not host[:port].",
        }
    }
}

/// Reports whether `c` may appear in a host name or IPv4 address (a strict subset of
/// RFC 3986's reg-name: no percent-encoding and no sub-delimiters such as `,`).
fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

/// Parses `host[:port]` (`[v6]:port` for IPv6). An empty value parses to an empty host
/// (a valid field value naming no host, so never allowed); anything else that is not
/// exactly a host and an optional decimal port is invalid.
pub(crate) fn parse(value: &str) -> Result<Authority, BadAuthority> {
    let (host, rest) = if let Some(inner) = value.strip_prefix('[') {
        let (v6, rest) = inner.split_once(']').ok_or(BadAuthority::Invalid)?;
        if v6.is_empty()
            || !v6
                .bytes()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, b':' | b'.'))
        {
            return Err(BadAuthority::Invalid);
        }
        (v6, rest)
    } else {
        let end = value.find(':').unwrap_or(value.len());
        let (host, rest) = value.split_at(end);
        if !host.bytes().all(is_name_char) {
            return Err(BadAuthority::Invalid);
        }
        (host, rest)
    };
    let port = match rest {
        "" => None,
        _ => {
            let digits = rest.strip_prefix(':').ok_or(BadAuthority::Invalid)?;
            if !digits.bytes().all(|c| c.is_ascii_digit()) || digits.len() > 5 {
                return Err(BadAuthority::Invalid);
            }
            // `host:` (an empty port) means the scheme's default, as RFC 3986 allows.
            if digits.is_empty() {
                None
            } else {
                Some(digits.parse().map_err(|_| BadAuthority::Invalid)?)
            }
        }
    };
    if host.is_empty() && port.is_some() {
        return Err(BadAuthority::Invalid);
    }
    Ok(Authority {
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// Returns the authority a request is addressed to: the request target's when it is in
/// absolute form (`target`), else the one Host header's. `hosts` are the raw Host header
/// lines (`None` for a value that is not visible ASCII). Either way there must be exactly
/// one valid Host line.
pub(crate) fn of_request(
    hosts: &[Option<&str>],
    target: Option<&str>,
) -> Result<Authority, BadAuthority> {
    let header = match hosts {
        [] => return Err(BadAuthority::Missing),
        [one] => parse(one.ok_or(BadAuthority::Invalid)?.trim())?,
        _ => return Err(BadAuthority::Duplicate),
    };
    match target {
        // User information (`http://user@host/`) is deprecated for http URIs; refuse it
        // rather than judge the wrong part.
        Some(t) if t.contains('@') => Err(BadAuthority::Invalid),
        Some(t) => parse(t),
        None => Ok(header),
    }
}

/// Reports whether `authority` may talk to a server that listens on `bound` (when known)
/// with the Host allow-list `allowed`: the host is on the list and a port, when given, is
/// the one the server listens on (no port means the scheme's default, as a proxy on port
/// 80 sends it).
pub(crate) fn is_allowed(authority: &Authority, allowed: &[String], bound: Option<u16>) -> bool {
    allowed.contains(&authority.host)
        && match (authority.port, bound) {
            (Some(port), Some(bound)) => port == bound,
            _ => true,
        }
}

/// Reports whether `origin` (an `Origin` header value) is the request's own origin:
/// scheme `http`, the same host and the same port (80 when absent on either side).
pub(crate) fn is_same_origin(origin: &str, request: &Authority) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return false;
    }
    let Ok(o) = parse(rest) else {
        return false;
    };
    !o.host.is_empty()
        && o.host == request.host
        && o.port.unwrap_or(80) == request.port.unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(host: &str, port: Option<u16>) -> Authority {
        Authority {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn parses_host_and_port() {
        assert_eq!(parse("LOCALHOST:4319"), Ok(auth("localhost", Some(4319))));
        assert_eq!(parse("[::1]:4319"), Ok(auth("::1", Some(4319))));
        assert_eq!(parse("[::1]"), Ok(auth("::1", None)));
        assert_eq!(parse("box.lan"), Ok(auth("box.lan", None)));
        assert_eq!(parse("box.lan:"), Ok(auth("box.lan", None)));
        assert_eq!(parse(""), Ok(auth("", None)));
    }

    #[test]
    fn regression_host_guard_accepts_suffixes_lists_and_bad_ports() {
        for bad in [
            "127.0.0.1:4319.evil.com",
            "127.0.0.1:4319, evil.com",
            "127.0.0.1, evil.com",
            "127.0.0.1,evil.com",
            "127.0.0.1:4319:1",
            "127.0.0.1:99999",
            "127.0.0.1:-1",
            "127.0.0.1 :4319",
            "[::1]x",
            "[::1",
            "[evil.com]:4319",
            "[]:1",
            ":4319",
            "user@127.0.0.1",
            "127.0.0.1/evil",
        ] {
            assert_eq!(parse(bad), Err(BadAuthority::Invalid), "{bad:?}");
        }
    }

    #[test]
    fn one_valid_host_line_and_the_absolute_target_wins() {
        let ok = Some("127.0.0.1:4319");
        assert_eq!(of_request(&[ok], None), Ok(auth("127.0.0.1", Some(4319))));
        assert_eq!(of_request(&[], None), Err(BadAuthority::Missing));
        assert_eq!(
            of_request(&[ok, Some("evil.com")], None),
            Err(BadAuthority::Duplicate)
        );
        assert_eq!(of_request(&[ok, ok], None), Err(BadAuthority::Duplicate));
        assert_eq!(of_request(&[None], None), Err(BadAuthority::Invalid));
        assert_eq!(
            of_request(&[ok], Some("evil.com")),
            Ok(auth("evil.com", None))
        );
        assert_eq!(
            of_request(&[ok], Some("127.0.0.1@evil.com")),
            Err(BadAuthority::Invalid)
        );
        assert_eq!(
            of_request(&[Some("evil.com")], Some("127.0.0.1:4319")),
            Ok(auth("127.0.0.1", Some(4319)))
        );
    }

    #[test]
    fn allowed_hosts_on_the_bound_port() {
        let list = ["127.0.0.1".to_owned(), "localhost".to_owned()];
        assert!(is_allowed(
            &auth("127.0.0.1", Some(4319)),
            &list,
            Some(4319)
        ));
        assert!(is_allowed(&auth("localhost", None), &list, Some(4319)));
        assert!(is_allowed(&auth("localhost", Some(1)), &list, None));
        assert!(!is_allowed(
            &auth("127.0.0.1", Some(9999)),
            &list,
            Some(4319)
        ));
        assert!(!is_allowed(
            &auth("evil.com", Some(4319)),
            &list,
            Some(4319)
        ));
        assert!(!is_allowed(&auth("", None), &list, Some(4319)));
    }

    #[test]
    fn regression_origin_check_ignores_scheme_and_port() {
        let req = auth("localhost", Some(4319));
        assert!(is_same_origin("http://localhost:4319", &req));
        assert!(is_same_origin("HTTP://LOCALHOST:4319", &req));
        for bad in [
            "http://localhost:9999",
            "http://localhost",
            "https://localhost:4319",
            "http://127.0.0.1:4319",
            "http://evil.com:4319",
            "http://localhost:4319.evil.com",
            "null",
            "",
        ] {
            assert!(!is_same_origin(bad, &req), "{bad:?}");
        }
        assert!(is_same_origin("http://box.lan", &auth("box.lan", None)));
        assert!(is_same_origin("http://box.lan:80", &auth("box.lan", None)));
    }
}
