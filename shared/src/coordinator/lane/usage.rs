//! The `USAGE: {json}` document a lane adapter prints last, and the default price table that
//! computes a cost when the vendor reports none.
//!
//! Token figures are the vendor's own. `input_tokens` counts input that was not read from the
//! prompt cache (Claude's `input_tokens`, Codex's `input_tokens - cached_input_tokens`, Gemini's
//! `input`), so that the four token fields never count a token twice.

use serde::Deserialize;
use serde::Serialize;

use super::Vendor;

/// The date the default prices were taken from the vendors' public price lists.
pub const PRICES_DATE: &str = "2025-11-01";

/// Where `cost_usd` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostSource {
    /// The vendor reported the cost itself (Claude Code's `total_cost_usd`).
    Vendor,
    /// Computed from the tokens and the default price table ([`PRICES_DATE`]).
    Computed,
    /// Neither: the model is not in the table or no usage was reported; `cost_usd` is null.
    Unknown,
}

/// The wire name (`vendor`, `computed`, `unknown`).
impl crate::serde_name::WireName for CostSource {}

/// The `USAGE:` line's document: one lane run's vendor, session, time, tokens and cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneUsage {
    /// The vendor CLI that ran.
    pub vendor: Vendor,
    /// The model the vendor reported (else the one asked for), if any.
    pub model: Option<String>,
    /// The vendor's session (thread) id, if it reported one.
    pub session_id: Option<String>,
    /// Wall time of the vendor process, measured by the adapter.
    pub duration_ms: u64,
    /// Input tokens not read from the prompt cache.
    pub input_tokens: u64,
    /// Output tokens (reasoning included where the vendor counts it so).
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// The run's cost in US dollars; null when unknown.
    pub cost_usd: Option<f64>,
    /// Where `cost_usd` comes from.
    pub cost_source: CostSource,
    /// Model turns, if the vendor reports or shows them.
    pub turns: Option<u64>,
}

/// Token counts as the event parsers collect them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens not read from the cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Input tokens written to the cache.
    pub cache_write: u64,
}

/// US dollars per million tokens, by kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
}

impl Rates {
    /// Returns the cost of `tokens` at these rates.
    pub fn cost(&self, tokens: Tokens) -> f64 {
        let per_million = |count: u64, usd: f64| count as f64 * usd / 1_000_000.0;
        per_million(tokens.input, self.input)
            + per_million(tokens.output, self.output)
            + per_million(tokens.cache_read, self.cache_read)
            + per_million(tokens.cache_write, self.cache_write)
    }
}

/// The price of one model family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// The model-name prefix this price applies to (the longest matching prefix wins).
    pub prefix: String,
    /// Its rates.
    pub rates: Rates,
}

const fn price(prefix: &'static str, io: (f64, f64), cache: (f64, f64)) -> (&'static str, Rates) {
    (
        prefix,
        Rates {
            input: io.0,
            output: io.1,
            cache_read: cache.0,
            cache_write: cache.1,
        },
    )
}

/// The default price table (list prices as of [`PRICES_DATE`], standard tier, short context);
/// docs/lanes.md repeats it.
pub const DEFAULT_PRICES: [(&str, Rates); 16] = [
    price("claude-opus-4-5", (5.0, 25.0), (0.5, 6.25)),
    price("claude-opus-4", (15.0, 75.0), (1.5, 18.75)),
    price("claude-sonnet-4", (3.0, 15.0), (0.3, 3.75)),
    price("claude-haiku-4-5", (1.0, 5.0), (0.1, 1.25)),
    price("gpt-5-mini", (0.25, 2.0), (0.025, 0.0)),
    price("gpt-5-nano", (0.05, 0.4), (0.005, 0.0)),
    price("gpt-5", (1.25, 10.0), (0.125, 0.0)),
    price("codex-mini", (1.5, 6.0), (0.375, 0.0)),
    price("o3", (2.0, 8.0), (0.5, 0.0)),
    price("gemini-2.5-pro", (1.25, 10.0), (0.31, 0.0)),
    price("gemini-2.5-flash-lite", (0.1, 0.4), (0.025, 0.0)),
    price("gemini-2.5-flash", (0.3, 2.5), (0.075, 0.0)),
    price("grok-code-fast", (0.2, 1.5), (0.02, 0.0)),
    price("grok-4-fast", (0.2, 0.5), (0.05, 0.0)),
    price("grok-4", (3.0, 15.0), (0.75, 0.0)),
    price("grok-3", (3.0, 15.0), (0.75, 0.0)),
];

/// A price table: the defaults, with the configuration's `prices` entries in place of (or
/// beside) the default of the same prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    prices: Vec<Price>,
}

impl Default for PriceTable {
    fn default() -> Self {
        Self::with(Vec::new())
    }
}

impl PriceTable {
    /// Returns the defaults with `overrides` applied.
    pub fn with(overrides: Vec<Price>) -> Self {
        let mut prices: Vec<Price> = DEFAULT_PRICES
            .iter()
            .filter(|(prefix, _)| !overrides.iter().any(|o| o.prefix == *prefix))
            .map(|(prefix, rates)| Price {
                prefix: (*prefix).to_owned(),
                rates: *rates,
            })
            .collect();
        prices.extend(overrides);
        Self { prices }
    }

    /// Returns the price of `model`: the entry with the longest prefix of the model name.
    pub fn price_of(&self, model: &str) -> Option<&Price> {
        self.prices
            .iter()
            .filter(|p| model.starts_with(p.prefix.as_str()))
            .max_by_key(|p| p.prefix.len())
    }

    /// Returns the cost of `tokens` on `model`, if the model is in the table.
    pub fn computed_cost(&self, model: &str, tokens: Tokens) -> Option<f64> {
        self.price_of(model).map(|p| p.rates.cost(tokens))
    }

    /// Returns the cost and its source: the vendor's own figure when there is one, else
    /// computed from the table, else unknown.
    pub fn cost(
        &self,
        vendor_cost: Option<f64>,
        model: Option<&str>,
        tokens: Tokens,
    ) -> (Option<f64>, CostSource) {
        if let Some(usd) = vendor_cost.filter(|c| c.is_finite() && *c >= 0.0) {
            return (Some(usd), CostSource::Vendor);
        }
        match model.and_then(|m| self.computed_cost(m, tokens)) {
            Some(usd) => (Some(usd), CostSource::Computed),
            None => (None, CostSource::Unknown),
        }
    }
}

impl Tokens {
    /// The tokens of a usage document.
    pub fn of(usage: &LaneUsage) -> Tokens {
        Tokens {
            input: usage.input_tokens,
            output: usage.output_tokens,
            cache_read: usage.cache_read_tokens,
            cache_write: usage.cache_write_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        let table = PriceTable::default();
        let prefix = |m: &str| table.price_of(m).map(|p| p.prefix.clone());
        assert_eq!(prefix("gpt-5-mini-2025").as_deref(), Some("gpt-5-mini"));
        assert_eq!(prefix("gpt-5-codex").as_deref(), Some("gpt-5"));
        assert_eq!(
            prefix("gemini-2.5-flash-lite").as_deref(),
            Some("gemini-2.5-flash-lite")
        );
        assert!(prefix("llama-3").is_none());
    }

    #[test]
    fn configured_prices_replace_the_default_of_their_prefix_and_add_new_ones() {
        let rates = |input: f64| Rates {
            input,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
        };
        let table = PriceTable::with(vec![
            Price {
                prefix: "gpt-5".into(),
                rates: rates(2.0),
            },
            Price {
                prefix: "llama-3".into(),
                rates: rates(0.5),
            },
        ]);
        let million = Tokens {
            input: 1_000_000,
            ..Tokens::default()
        };
        assert_eq!(table.computed_cost("gpt-5", million), Some(2.0));
        assert_eq!(table.computed_cost("llama-3-70b", million), Some(0.5));
        assert_eq!(
            table.computed_cost("gpt-5-mini", million),
            Some(0.25),
            "an untouched default stays"
        );
        let cache_only = Tokens {
            cache_read: 1_000_000,
            cache_write: 1_000_000,
            ..Tokens::default()
        };
        let claude = PriceTable::default()
            .computed_cost("claude-sonnet-4-5", cache_only)
            .expect("priced");
        assert!(
            (claude - (0.3 + 3.75)).abs() < 1e-9,
            "cache reads and writes are priced separately: {claude}"
        );
    }

    #[test]
    fn cost_prefers_vendor_then_computes_then_unknown() {
        let tokens = Tokens {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 0,
        };
        let table = PriceTable::default();
        let cost = |v, m, t| table.cost(v, m, t);
        assert_eq!(
            cost(Some(0.42), Some("gpt-5"), tokens),
            (Some(0.42), CostSource::Vendor)
        );
        let (usd, source) = cost(None, Some("gpt-5"), tokens);
        assert_eq!(source, CostSource::Computed);
        let usd = usd.expect("gpt-5 is priced");
        assert!((usd - (1.25 + 1.0 + 0.25)).abs() < 1e-9, "{usd}");
        assert_eq!(
            cost(None, Some("mystery"), tokens),
            (None, CostSource::Unknown)
        );
        assert_eq!(
            cost(Some(f64::NAN), None, tokens),
            (None, CostSource::Unknown)
        );
    }

    #[test]
    fn usage_document_round_trips_with_its_field_names() {
        let usage = LaneUsage {
            vendor: Vendor::Codex,
            model: Some("gpt-5".into()),
            session_id: Some("t1".into()),
            duration_ms: 5,
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            cost_usd: None,
            cost_source: CostSource::Unknown,
            turns: Some(1),
        };
        let text = serde_json::to_string(&usage).expect("serializes");
        assert_eq!(
            text,
            r#"{"vendor":"codex","model":"gpt-5","session_id":"t1","duration_ms":5,"input_tokens":1,"output_tokens":2,"cache_read_tokens":3,"cache_write_tokens":4,"cost_usd":null,"cost_source":"unknown","turns":1}"#
        );
        let back: LaneUsage = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, usage);
    }
}
