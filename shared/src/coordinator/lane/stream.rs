//! Reading a vendor's stdout line by line into [`Parsed`]: each JSON event goes to its vendor's
//! parser, anything else is kept raw, and the end of the stream settles what only the end can
//! tell. Kept apart from `events` (the types and field helpers every vendor parser uses), so the
//! parsers and what they fill never import each other.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::claude;
use super::codex;
use super::events::Parsed;
use super::gemini;
use super::grok;
use super::Vendor;

impl Parsed {
    /// Reads one line of the vendor's stdout.
    pub fn feed(&mut self, vendor: Vendor, line: &str, now: DateTime<Utc>) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(event @ Value::Object(_)) => {
                self.events += 1;
                match vendor {
                    Vendor::Claude => claude::apply(self, &event, now),
                    Vendor::Codex => codex::apply(self, &event, now),
                    Vendor::Gemini => gemini::apply(self, &event, now),
                    Vendor::Grok => grok::apply(self, &event, now),
                }
            }
            _ => {
                self.raw.push_str(line);
                self.raw.push('\n');
            }
        }
    }

    /// Ends the stream: settles what only the end can tell (Codex's unfinished turn, Grok's
    /// multi-line object).
    pub fn finish(&mut self, vendor: Vendor, now: DateTime<Utc>) {
        match vendor {
            Vendor::Codex => codex::finish(self, now),
            Vendor::Grok => grok::finish(self, now),
            Vendor::Claude | Vendor::Gemini => {}
        }
        if let Some(message) = self.last_error.take() {
            if self.final_message.is_none() && self.vendor_error.is_none() {
                self.error(message, now);
            }
        }
    }
}

/// Reads a whole captured sample at a fixed time, as the vendors' parser tests do.
#[cfg(test)]
pub(super) fn parse_sample(vendor: Vendor, lines: &str) -> Parsed {
    let now = DateTime::from_timestamp(1_767_225_600, 0).expect("a valid fixed time");
    let mut parsed = Parsed::default();
    for line in lines.lines() {
        parsed.feed(vendor, line, now);
    }
    parsed.finish(vendor, now);
    parsed
}
