//! The delivery ids (`X-GitHub-Delivery`, a GUID per delivery; a redelivery repeats it) a
//! listener has already acted on, so a replayed or redelivered delivery wakes nothing a
//! second time. Bounded: past its capacity the oldest id is forgotten first.

use std::collections::BTreeSet;
use std::collections::VecDeque;

/// The longest delivery id taken (GitHub's are 36-character GUIDs).
pub const MAX_ID_LEN: usize = 100;

/// Why a delivery id is refused before it is looked up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryIdError {
    /// The header is missing or empty.
    #[error("no X-GitHub-Delivery header")]
    Missing,
    /// The id is longer than [`MAX_ID_LEN`] or holds characters a GUID does not.
    #[error(
        "X-GitHub-Delivery is not a delivery id (at most {MAX_ID_LEN} letters, digits and dashes)"
    )]
    Malformed,
}

/// Checks an `X-GitHub-Delivery` value: present, short, letters, digits and dashes.
pub fn check_id(value: Option<&str>) -> Result<&str, DeliveryIdError> {
    let id = value.map(str::trim).unwrap_or_default();
    if id.is_empty() {
        return Err(DeliveryIdError::Missing);
    }
    let plain = id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if id.len() > MAX_ID_LEN || !plain {
        return Err(DeliveryIdError::Malformed);
    }
    Ok(id)
}

/// The delivery ids seen, at most `capacity` of them.
#[derive(Debug, Clone)]
pub struct Deliveries {
    capacity: usize,
    seen: BTreeSet<String>,
    order: VecDeque<String>,
}

impl Deliveries {
    /// Returns an empty set that remembers at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Deliveries {
        Deliveries {
            capacity: capacity.max(1),
            seen: BTreeSet::new(),
            order: VecDeque::new(),
        }
    }

    /// Records `id` and reports whether it is new (`false`: seen before, a duplicate).
    pub fn first_time(&mut self, id: &str) -> bool {
        if self.seen.contains(id) {
            return false;
        }
        if self.order.len() >= self.capacity {
            if let Some(oldest) = self.order.pop_front() {
                self.seen.remove(&oldest);
            }
        }
        self.seen.insert(id.to_owned());
        self.order.push_back(id.to_owned());
        true
    }

    /// Forgets `id` (a delivery taken but not acted on, so that its redelivery is not a
    /// duplicate).
    pub fn forget(&mut self, id: &str) {
        if self.seen.remove(id) {
            self.order.retain(|kept| kept != id);
        }
    }

    /// Returns how many ids are remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Reports whether no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUID: &str = "72d3162e-cc78-11e3-81ab-4c9367dc0958";

    #[test]
    fn a_repeated_id_is_a_duplicate() {
        let mut d = Deliveries::new(8);
        assert!(d.first_time(GUID));
        assert!(!d.first_time(GUID));
        assert!(d.first_time("72d3162e-cc78-11e3-81ab-4c9367dc0959"));
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn past_capacity_the_oldest_id_is_forgotten_first() {
        let mut d = Deliveries::new(3);
        for id in ["a", "b", "c", "d"] {
            assert!(d.first_time(id));
        }
        assert_eq!(d.len(), 3);
        // "a" was forgotten; "b".."d" are still duplicates.
        assert!(!d.first_time("d"));
        assert!(!d.first_time("b"));
        assert!(d.first_time("a"));
        assert!(!d.first_time("a"));
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn a_forgotten_id_is_new_again() {
        let mut d = Deliveries::new(2);
        assert!(d.first_time("a"));
        assert!(d.first_time("b"));
        d.forget("a");
        d.forget("never-seen");
        assert_eq!(d.len(), 1);
        assert!(d.first_time("a"));
        assert!(!d.first_time("b"));
    }

    #[test]
    fn delivery_ids_are_checked_before_they_are_kept() {
        assert_eq!(check_id(Some(GUID)), Ok(GUID));
        assert_eq!(check_id(None), Err(DeliveryIdError::Missing));
        assert_eq!(check_id(Some("  ")), Err(DeliveryIdError::Missing));
        assert_eq!(
            check_id(Some("../../etc/passwd")),
            Err(DeliveryIdError::Malformed)
        );
        let long = "a".repeat(MAX_ID_LEN + 1);
        assert_eq!(check_id(Some(&long)), Err(DeliveryIdError::Malformed));
    }
}
