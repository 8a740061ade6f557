//! The agent-coord dashboard's browser front end: a client-side-rendered Leptos app.
//!
//! The model types and rules come from `agent-coord-shared`; this crate only fetches and
//! renders them. [`format`] is pure and builds on every target; the rest exists only when
//! compiling for `wasm32`.

pub mod format;

#[cfg(target_arch = "wasm32")]
mod api;
#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod clipboard;
#[cfg(target_arch = "wasm32")]
mod components;
#[cfg(target_arch = "wasm32")]
mod live;
#[cfg(target_arch = "wasm32")]
mod pages;
#[cfg(target_arch = "wasm32")]
mod past;

/// Mounts the app on `<body>`.
#[cfg(target_arch = "wasm32")]
pub fn start() {
    past::install();
    leptos::mount::mount_to_body(app::App);
}
