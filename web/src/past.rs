//! The past: a page opened with `?at=<commit|RFC 3339 time>` shows the fleet as it stood then,
//! read-only. The moment is read from the address once; every API read carries it
//! ([`with_at`] in `api::get_json`), every link inside the dashboard keeps it ([`install`]), and
//! nothing writes (the action controls ask [`active`] and stay away). "Back to now" loads the
//! page again without it.

use std::cell::OnceCell;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::Element;
use web_sys::Event;
use web_sys::UrlSearchParams;

use crate::format;

thread_local! {
    static AT: OnceCell<Option<String>> = const { OnceCell::new() };
}

/// The moment the page shows, when it shows the past.
pub fn at() -> Option<String> {
    AT.with(|at| at.get_or_init(read).clone())
}

/// Whether the page shows the past (and so writes nothing).
pub fn active() -> bool {
    at().is_some()
}

fn read() -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    UrlSearchParams::new_with_str(&search)
        .ok()?
        .get("at")
        .filter(|at| !at.trim().is_empty())
}

/// `url` as the page asks for it: with the moment, when it shows the past.
pub fn with_at(url: &str) -> String {
    match at() {
        Some(at) => format::with_query_param(url, "at", &at),
        None => url.to_owned(),
    }
}

/// The page's own address without the moment ("Back to now").
pub fn now_href() -> String {
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return "/".to_owned();
    };
    let path = location.pathname().unwrap_or_else(|_| "/".to_owned());
    let search = location.search().unwrap_or_default();
    format::without_query_param(&format!("{path}{search}"), "at")
}

/// In the past, makes every link inside the dashboard keep the moment: a click on one gets
/// `at=` added to its address before the router (or the browser) follows it. Links marked
/// `rel="external"` (back to now, downloads) and the API's own pages are left alone.
pub fn install() {
    let Some(at) = at() else { return };
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let on_click = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
        let anchor = event
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|e| e.closest("a[href]").ok().flatten());
        let Some(anchor) = anchor else { return };
        if anchor.get_attribute("rel").as_deref() == Some("external") {
            return;
        }
        let Some(href) = anchor.get_attribute("href") else {
            return;
        };
        if format::is_dashboard_link(&href) {
            let _ = anchor.set_attribute("href", &format::with_query_param(&href, "at", &at));
        }
    });
    // Capturing: the rewrite happens before the router's own click handler reads the link.
    let _ = document.add_event_listener_with_callback_and_bool(
        "click",
        on_click.as_ref().unchecked_ref(),
        true,
    );
    on_click.forget();
}
