//! How much of the machine the dashboard server may be made to hold: the connection cap
//! (derived from the file-descriptor limit), per-peer caps for peers on other machines, the
//! caps on open event streams, and the timeouts. Pure decisions; `conn.rs` and the stream
//! route apply them.
//!
//! A connection that is not in a request (idle between requests, or still sending its
//! headers) holds nothing but a socket, so when the cap is reached the oldest such
//! connection is closed for the newcomer: slow or idle clients can never keep a health
//! probe out. Requests in progress (event streams among them) are never cut; event
//! streams have their own, lower cap so that they can fill at most half the slots.

use std::net::IpAddr;
use std::time::Duration;

/// The server's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Open connections at most.
    pub(crate) connections: usize,
    /// Open connections from one peer on another machine at most.
    pub(crate) connections_per_remote: usize,
    /// Open event streams (`/api/stream`) at most.
    pub(crate) streams: usize,
    /// Open event streams from one peer on another machine at most.
    pub(crate) streams_per_remote: usize,
    /// How long a client may take to send a request's headers, and how long a connection
    /// may sit idle between requests.
    pub(crate) header_timeout: Duration,
    /// How long a client may take to send a request body.
    pub(crate) body_timeout: Duration,
}

/// File descriptors kept for everything but connections (the repository's pack files,
/// lock files, the listener, the runtime).
const RESERVED_FDS: u64 = 64;
/// The connection cap however many descriptors there are.
const MAX_CONNECTIONS: usize = 4096;

impl Limits {
    /// The limits for a process that may open `nofile` file descriptors.
    pub(crate) fn for_fd_limit(nofile: u64) -> Limits {
        let spare = usize::try_from(nofile.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
        let connections = spare.clamp(8, MAX_CONNECTIONS);
        Limits {
            connections,
            connections_per_remote: (connections / 8).max(2),
            streams: connections / 2,
            streams_per_remote: 16.min(connections / 8).max(1),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::for_fd_limit(1024)
    }
}

/// An open connection, as the admission rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Open {
    /// Its id (ids grow with accept order, so a smaller id is older).
    pub(crate) id: u64,
    /// The peer's address.
    pub(crate) peer: IpAddr,
    /// Whether a request is in progress on it (its response not yet sent in full).
    pub(crate) busy: bool,
}

/// What to do with a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Serve it.
    Admit,
    /// Serve it, after closing this idle connection.
    Evict(u64),
    /// Close it at once: every slot it could take is busy with a request.
    Refuse,
}

/// Reports whether `peer` is on this machine by address alone (loopback).
fn is_local(peer: IpAddr) -> bool {
    super::guard::canonical(peer).is_loopback()
}

/// Decides about a new connection from `peer` given the `open` ones: admit it while under
/// the caps, else make room by closing the oldest idle connection (the peer's own when its
/// per-peer cap is what is full), else refuse it.
pub(crate) fn admit(open: &[Open], peer: IpAddr, limits: &Limits) -> Admission {
    let oldest_idle = |of_peer: bool| {
        open.iter()
            .filter(|o| !o.busy && (!of_peer || o.peer == peer))
            .min_by_key(|o| o.id)
            .map(|o| Admission::Evict(o.id))
    };
    if !is_local(peer)
        && open.iter().filter(|o| o.peer == peer).count() >= limits.connections_per_remote
    {
        return oldest_idle(true).unwrap_or(Admission::Refuse);
    }
    if open.len() >= limits.connections {
        return oldest_idle(false).unwrap_or(Admission::Refuse);
    }
    Admission::Admit
}

/// Reports whether another event stream may open for `peer`, with `total` streams open and
/// `from_peer` of them from that peer.
pub(crate) fn admit_stream(total: usize, from_peer: usize, peer: IpAddr, limits: &Limits) -> bool {
    total < limits.streams && (is_local(peer) || from_peer < limits.streams_per_remote)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn open(id: u64, peer: &str, busy: bool) -> Open {
        Open {
            id,
            peer: ip(peer),
            busy,
        }
    }

    #[test]
    fn caps_follow_the_descriptor_limit() {
        let small = Limits::for_fd_limit(256);
        assert_eq!(
            (
                small.connections,
                small.streams,
                small.connections_per_remote
            ),
            (192, 96, 24)
        );
        assert_eq!(Limits::for_fd_limit(1_000_000).connections, MAX_CONNECTIONS);
        assert_eq!(Limits::for_fd_limit(10).connections, 8);
        assert!(
            Limits::for_fd_limit(20_000).streams >= 500,
            "the load test's 500 streams fit"
        );
    }

    #[test]
    fn a_full_server_closes_its_oldest_idle_connection() {
        let limits = Limits {
            connections: 3,
            ..Limits::default()
        };
        let local = "127.0.0.1";
        let two = [open(1, local, true), open(2, local, false)];
        assert_eq!(admit(&two, ip(local), &limits), Admission::Admit);
        let full = [
            open(1, local, true),
            open(5, local, false),
            open(3, local, false),
        ];
        assert_eq!(admit(&full, ip(local), &limits), Admission::Evict(3));
        let busy = [
            open(1, local, true),
            open(2, local, true),
            open(3, local, true),
        ];
        assert_eq!(admit(&busy, ip(local), &limits), Admission::Refuse);
    }

    #[test]
    fn a_remote_peer_is_capped_on_its_own_connections() {
        let limits = Limits {
            connections: 100,
            connections_per_remote: 2,
            ..Limits::default()
        };
        let open = [
            open(1, "127.0.0.1", false),
            open(2, "10.0.0.9", true),
            open(3, "10.0.0.9", false),
        ];
        assert_eq!(admit(&open, ip("10.0.0.9"), &limits), Admission::Evict(3));
        assert_eq!(admit(&open, ip("10.0.0.8"), &limits), Admission::Admit);
        assert_eq!(admit(&open, ip("127.0.0.1"), &limits), Admission::Admit);
        let busy = [
            open[0],
            open[1],
            Open {
                busy: true,
                ..open[2]
            },
        ];
        assert_eq!(admit(&busy, ip("10.0.0.9"), &limits), Admission::Refuse);
    }

    #[test]
    fn streams_are_capped_in_all_and_per_remote_peer() {
        let limits = Limits {
            streams: 10,
            streams_per_remote: 2,
            ..Limits::default()
        };
        assert!(admit_stream(9, 9, ip("127.0.0.1"), &limits));
        assert!(admit_stream(9, 9, ip("::ffff:127.0.0.1"), &limits));
        assert!(!admit_stream(10, 0, ip("127.0.0.1"), &limits));
        assert!(admit_stream(5, 1, ip("10.0.0.9"), &limits));
        assert!(!admit_stream(5, 2, ip("10.0.0.9"), &limits));
    }
}
