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

/// US dollars per million tokens of one model family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// The model-name prefix this price applies to (the longest matching prefix wins).
    pub prefix: &'static str,
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
}

const fn price(prefix: &'static str, io: (f64, f64), cache: (f64, f64)) -> Price {
    Price {
        prefix,
        input: io.0,
        output: io.1,
        cache_read: cache.0,
        cache_write: cache.1,
    }
}

/// The default price table (list prices as of [`PRICES_DATE`], standard tier, short context);
/// docs/lanes.md repeats it.
pub const DEFAULT_PRICES: [Price; 16] = [
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

/// Returns the price of `model` in `table`: the entry with the longest prefix of the model name.
pub fn price_of<'a>(table: &'a [Price], model: &str) -> Option<&'a Price> {
    table
        .iter()
        .filter(|p| model.starts_with(p.prefix))
        .max_by_key(|p| p.prefix.len())
}

/// Returns the cost of `tokens` on `model` from `table`, if the model is in it.
pub fn computed_cost(table: &[Price], model: &str, tokens: Tokens) -> Option<f64> {
    let p = price_of(table, model)?;
    let per_million = |count: u64, usd: f64| count as f64 * usd / 1_000_000.0;
    Some(
        per_million(tokens.input, p.input)
            + per_million(tokens.output, p.output)
            + per_million(tokens.cache_read, p.cache_read)
            + per_million(tokens.cache_write, p.cache_write),
    )
}

/// Returns the cost and its source: the vendor's own figure when there is one, else computed
/// from the table, else unknown.
pub fn cost(
    vendor_cost: Option<f64>,
    model: Option<&str>,
    tokens: Tokens,
) -> (Option<f64>, CostSource) {
    if let Some(usd) = vendor_cost.filter(|c| c.is_finite() && *c >= 0.0) {
        return (Some(usd), CostSource::Vendor);
    }
    match model.and_then(|m| computed_cost(&DEFAULT_PRICES, m, tokens)) {
        Some(usd) => (Some(usd), CostSource::Computed),
        None => (None, CostSource::Unknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(
            price_of(&DEFAULT_PRICES, "gpt-5-mini-2025").map(|p| p.prefix),
            Some("gpt-5-mini")
        );
        assert_eq!(
            price_of(&DEFAULT_PRICES, "gpt-5-codex").map(|p| p.prefix),
            Some("gpt-5")
        );
        assert_eq!(
            price_of(&DEFAULT_PRICES, "gemini-2.5-flash-lite").map(|p| p.prefix),
            Some("gemini-2.5-flash-lite")
        );
        assert!(price_of(&DEFAULT_PRICES, "llama-3").is_none());
    }

    #[test]
    fn cost_prefers_vendor_then_computes_then_unknown() {
        let tokens = Tokens {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 0,
        };
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
