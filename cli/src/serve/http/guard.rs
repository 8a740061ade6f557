//! Who may talk to the dashboard: the Host allow-list (DNS-rebinding defence) for every
//! request ([`host_guard`], judged by `authority.rs`), cross-origin writes refused, and the
//! same-machine peer rule for the writes ([`Access`] holds what they are judged by).

use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::OnceLock;

use axum::extract::ConnectInfo;
use axum::extract::Request;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;

use super::authority;
use crate::serve::error::ApiError;

/// What requests are judged by: the Host allow-list, the port the server listens on, and
/// this machine's interface addresses. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Access {
    allowed_hosts: Arc<[String]>,
    /// The port the server listens on, once bound (a Host naming another port is refused).
    bound_port: Arc<OnceLock<u16>>,
    /// The machine's interface addresses (a function so tests can pretend).
    local_addrs: fn() -> Vec<IpAddr>,
}

impl Access {
    /// Returns the access rules of a server allowing `allowed_hosts` (see [`allowed_hosts`]).
    pub(crate) fn new(allowed_hosts: Vec<String>) -> Access {
        Access {
            allowed_hosts: allowed_hosts.into(),
            bound_port: Arc::new(OnceLock::new()),
            local_addrs: local_addresses,
        }
    }

    /// Records the port the server is bound to (only the first call counts).
    pub(crate) fn bound(&self, port: u16) {
        let _ = self.bound_port.set(port);
    }

    /// Reports whether `peer` is on this machine (see [`is_machine_local`]), by the
    /// interface addresses it has now.
    pub(crate) fn is_machine_local(&self, peer: IpAddr) -> bool {
        is_machine_local(peer, &(self.local_addrs)())
    }
}

/// Reports whether `host` is a loopback name.
pub(crate) fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

/// Why no allow-list could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HostsError {
    /// The server binds every interface and no host is named.
    #[error("--allowed-hosts is required when --host binds all interfaces (name the hosts browsers will use)")]
    WildcardWithoutHosts,
}

/// The default allow-list plus the bind host (when it is not a wildcard) plus extras.
pub(crate) fn allowed_hosts(bind: &str, extra: &[String]) -> Result<Vec<String>, HostsError> {
    let wildcard = matches!(bind, "0.0.0.0" | "::" | "[::]");
    if wildcard && extra.is_empty() {
        return Err(HostsError::WildcardWithoutHosts);
    }
    let mut out: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    if !wildcard {
        out.push(bind.trim_matches(['[', ']']).to_lowercase());
    }
    for e in extra {
        for h in e.split(',') {
            let h = h.trim().to_lowercase();
            if !h.is_empty() {
                out.push(h);
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Canonicalises IPv4-mapped IPv6 (`::ffff:a.b.c.d`) to IPv4.
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn is_link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

/// Reports whether a peer is on this machine: loopback, or exactly an address assigned
/// to a local interface (link-local addresses never count).
fn is_machine_local(peer: IpAddr, local_addrs: &[IpAddr]) -> bool {
    let peer = canonical(peer);
    if peer.is_loopback() {
        return true;
    }
    !is_link_local(peer) && local_addrs.iter().any(|a| canonical(*a) == peer)
}

/// The addresses currently assigned to this machine's interfaces (re-read per request).
fn local_addresses() -> Vec<IpAddr> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    addrs
        .filter_map(|a| {
            let addr = a.address?;
            if let Some(v4) = addr.as_sockaddr_in() {
                Some(IpAddr::V4(v4.ip()))
            } else {
                addr.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
            }
        })
        .collect()
}

/// Reports whether a `Content-Type` is JSON (`application/json`, parameters allowed).
pub(crate) fn is_json_content_type(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// Rejects requests whose authority is malformed (400: a missing, duplicate or invalid Host
/// header, see [`authority::of_request`]) or not allowed (403, DNS-rebinding defence), and
/// writes whose `Origin` is not the request's own.
pub(crate) async fn host_guard(State(s): State<Access>, req: Request, next: Next) -> Response {
    let hosts: Vec<Option<&str>> = req
        .headers()
        .get_all(header::HOST)
        .iter()
        .map(|v| v.to_str().ok())
        .collect();
    let target = req.uri().authority().map(|a| a.as_str());
    let judged = match authority::of_request(&hosts, target) {
        Ok(judged) => judged,
        Err(bad) => return ApiError::new(StatusCode::BAD_REQUEST, bad.message()).into_response(),
    };
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let allowed = authority::is_allowed(&judged, &s.allowed_hosts, s.bound_port.get().copied())
        // A lifecycle probe over loopback still works when the list names only LAN hosts.
        || (matches!(req.uri().path(), "/api/health" | "/api/doctor")
            && is_loopback_name(&judged.host)
            && peer.is_some_and(|p| canonical(p).is_loopback()));
    if !allowed {
        return ApiError::new(StatusCode::FORBIDDEN, "Forbidden host").into_response();
    }
    if req.method() != axum::http::Method::GET && req.method() != axum::http::Method::HEAD {
        let origins = req.headers().get_all(header::ORIGIN);
        let foreign = origins.iter().count() > 1
            || origins.iter().any(|o| {
                !o.to_str()
                    .is_ok_and(|o| authority::is_same_origin(o.trim(), &judged))
            });
        if foreign {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "Cross-origin writes are not accepted.",
            )
            .into_response();
        }
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_defaults_and_wildcards() {
        let list = allowed_hosts("127.0.0.1", &[]).expect("ok");
        assert_eq!(list, ["127.0.0.1", "::1", "localhost"]);
        let list = allowed_hosts("box.lan", &["a.lan, b.lan".into()]).expect("ok");
        assert!(list.contains(&"box.lan".to_owned()) && list.contains(&"b.lan".to_owned()));
        assert_eq!(
            allowed_hosts("0.0.0.0", &[]),
            Err(HostsError::WildcardWithoutHosts)
        );
        let list = allowed_hosts("0.0.0.0", &["box.lan".into()]).expect("ok");
        assert!(!list.contains(&"0.0.0.0".to_owned()));
    }

    #[test]
    fn machine_local_peers() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        let local = [ip("192.168.7.26"), ip("169.254.1.1"), ip("fe80::1")];
        for ok in [
            "127.0.0.1",
            "127.9.9.9",
            "::1",
            "::ffff:127.0.0.1",
            "192.168.7.26",
            "::ffff:192.168.7.26",
        ] {
            assert!(is_machine_local(ip(ok), &local), "{ok}");
        }
        for bad in ["192.168.7.27", "169.254.1.1", "fe80::1", "10.0.0.1"] {
            assert!(!is_machine_local(ip(bad), &local), "{bad}");
        }
    }

    #[test]
    fn json_content_types() {
        assert!(is_json_content_type(Some("application/json")));
        assert!(is_json_content_type(Some(
            "Application/JSON; charset=utf-8"
        )));
        assert!(!is_json_content_type(Some("text/plain")));
        assert!(!is_json_content_type(Some(
            "application/x-www-form-urlencoded"
        )));
        assert!(!is_json_content_type(None));
    }
}
