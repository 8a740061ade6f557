//! What `--listen` accepts: `PORT` (bound on 127.0.0.1), or `HOST:PORT` with an IP address
//! (`[::1]:PORT` for IPv6) or `localhost`. Loopback is the default; any other address is
//! bound only because it was named, and the listener says so on stderr.

use std::net::IpAddr;
use std::net::Ipv4Addr;
use std::net::SocketAddr;

/// Returns the address `value` names, or why it names none.
pub(crate) fn parse(value: &str) -> Result<SocketAddr, String> {
    let value = value.trim();
    if let Ok(port) = value.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = value.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = value.strip_prefix("localhost:") {
        if let Ok(port) = port.parse::<u16>() {
            return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
        }
    }
    Err(format!(
        "--listen {value:?} is not PORT or HOST:PORT with an IP address (e.g. 8787, 127.0.0.1:8787, [::1]:8787, 0.0.0.0:8787)"
    ))
}

/// Reports whether `addr` is reachable from this machine only.
pub(crate) fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_binds_loopback() {
        let addr = parse("8787").unwrap();
        assert_eq!(addr.to_string(), "127.0.0.1:8787");
        assert!(is_loopback(&addr));
        assert_eq!(parse("localhost:0").unwrap().to_string(), "127.0.0.1:0");
    }

    #[test]
    fn other_addresses_only_when_named() {
        let all = parse("0.0.0.0:8787").unwrap();
        assert!(!is_loopback(&all));
        let lan = parse("192.168.1.5:9000").unwrap();
        assert!(!is_loopback(&lan));
        assert!(is_loopback(&parse("[::1]:8787").unwrap()));
        assert!(is_loopback(&parse("127.0.0.2:8787").unwrap()));
    }

    #[test]
    fn names_and_junk_are_refused() {
        for bad in ["example.com:80", "8787x", "", "70000", ":8787", "127.0.0.1"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
