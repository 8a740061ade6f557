//! Progress on stderr for long work (`import`, `export`, `gc`, `sync`, `init`): a bar of
//! units done of the total with their rate and the time left, or a spinner with the time
//! elapsed when the total is unknown. Drawn only when stderr is a terminal and the command
//! prints no JSON; otherwise every bar is hidden and costs nothing, so piped, scripted and
//! `--json` output stays exactly what it was.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::ProgressBar;
use indicatif::ProgressState;
use indicatif::ProgressStyle;

/// The bar's layout: message, bar, done of total, rate, time left.
const BAR_TEMPLATE: &str = "{msg} [{bar:30}] {pos}/{len} ({rate}, {eta} left)";

/// The spinner's layout: spinner, message, time elapsed.
const SPINNER_TEMPLATE: &str = "{spinner} {msg} ({elapsed})";

/// How often a spinner redraws on its own, so its clock moves while the work blocks.
const TICK: Duration = Duration::from_millis(100);

/// Reports whether progress is drawn: only on a terminal, and never under `--json`.
pub(crate) fn visible(stderr_is_terminal: bool, json: bool) -> bool {
    stderr_is_terminal && !json
}

/// Reports whether progress is drawn for this process's stderr.
fn drawn(json: bool) -> bool {
    visible(std::io::stderr().is_terminal(), json)
}

/// Returns a bar for `len` units of work called `message` (the length may grow with
/// [`ProgressBar::inc_length`]); hidden unless [`visible`].
pub(crate) fn bar(message: &'static str, len: u64, json: bool) -> ProgressBar {
    if !drawn(json) {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(BAR_TEMPLATE)
        .expect("BAR_TEMPLATE is a valid template (unit-tested)")
        .with_key("rate", rate)
        .progress_chars("=> ");
    ProgressBar::new(len)
        .with_style(style)
        .with_message(message)
}

/// Writes the units done per second, whole (indicatif's `{per_sec}` shows four decimals).
fn rate(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    let _ = write!(out, "{:.0}/s", state.per_sec());
}

/// Returns a spinner showing the time elapsed, for work whose size is unknown (a git
/// fetch); hidden unless [`visible`].
pub(crate) fn spinner(message: String, json: bool) -> ProgressBar {
    if !drawn(json) {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(SPINNER_TEMPLATE)
        .expect("SPINNER_TEMPLATE is a valid template (unit-tested)");
    let spinner = ProgressBar::new_spinner()
        .with_style(style)
        .with_message(message);
    spinner.enable_steady_tick(TICK);
    spinner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_only_on_a_terminal_without_json() {
        for (terminal, json, shown) in [
            (true, false, true),
            (true, true, false),
            (false, false, false),
            (false, true, false),
        ] {
            assert_eq!(
                visible(terminal, json),
                shown,
                "terminal={terminal} json={json}"
            );
        }
    }

    #[test]
    fn templates_are_valid() {
        assert!(ProgressStyle::with_template(BAR_TEMPLATE).is_ok());
        assert!(ProgressStyle::with_template(SPINNER_TEMPLATE).is_ok());
    }
}
