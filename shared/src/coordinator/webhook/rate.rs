//! The request rate a webhook listener accepts: a token bucket of `burst` requests,
//! refilled at `per_second`, over a millisecond clock the caller passes in (so the rule is
//! tested without sleeping). Tokens are kept in thousandths, so no float rounds.

/// A token bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBucket {
    /// The most tokens held, in thousandths.
    capacity: u64,
    /// Thousandths of a token added per millisecond (= tokens per second).
    per_ms: u64,
    /// Tokens held, in thousandths.
    held: u64,
    /// When the bucket was last refilled (ms on the caller's clock).
    last_ms: Option<u64>,
}

/// One request's cost, in thousandths of a token.
const COST: u64 = 1000;

impl TokenBucket {
    /// Returns a full bucket of `burst` requests (at least one) refilled at `per_second`
    /// (at least one).
    pub fn new(burst: u32, per_second: u32) -> TokenBucket {
        let capacity = u64::from(burst.max(1)) * COST;
        TokenBucket {
            capacity,
            per_ms: u64::from(per_second.max(1)),
            held: capacity,
            last_ms: None,
        }
    }

    /// Takes a token for a request at `now_ms` (a monotonic clock); `false`: over the rate,
    /// refuse it.
    pub fn admit(&mut self, now_ms: u64) -> bool {
        let elapsed = self.last_ms.map_or(0, |last| now_ms.saturating_sub(last));
        // A clock that went back refills nothing and keeps its mark.
        if self.last_ms.is_none_or(|last| now_ms >= last) {
            self.last_ms = Some(now_ms);
        }
        self.held = self
            .held
            .saturating_add(elapsed.saturating_mul(self.per_ms))
            .min(self.capacity);
        if self.held < COST {
            return false;
        }
        self.held -= COST;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_rate_holds() {
        let mut bucket = TokenBucket::new(3, 2);
        assert!(bucket.admit(0));
        assert!(bucket.admit(0));
        assert!(bucket.admit(0));
        assert!(!bucket.admit(0), "the burst is spent");
        // Two per second: one token after 500 ms, not before.
        assert!(!bucket.admit(499));
        assert!(bucket.admit(500));
        assert!(!bucket.admit(500));
    }

    #[test]
    fn an_idle_bucket_refills_to_its_burst_and_no_further() {
        let mut bucket = TokenBucket::new(2, 10);
        assert!(bucket.admit(0));
        assert!(bucket.admit(0));
        let later = 60_000;
        assert!(bucket.admit(later));
        assert!(bucket.admit(later));
        assert!(!bucket.admit(later));
    }

    #[test]
    fn a_clock_that_goes_back_refills_nothing() {
        let mut bucket = TokenBucket::new(1, 1);
        assert!(bucket.admit(10_000));
        assert!(!bucket.admit(5_000));
        assert!(!bucket.admit(10_500));
        assert!(bucket.admit(11_000));
    }
}
