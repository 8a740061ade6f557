//! The application shell: top bar, error banner, the setup notice of an empty state, and
//! routes.

use leptos::prelude::*;
use leptos_router::components::Route;
use leptos_router::components::Router;
use leptos_router::components::Routes;
use leptos_router::path;

use crate::components::past::PastBanner;
use crate::components::prompt;
use crate::components::topbar::TopBar;
use crate::components::widgets;
use crate::live;
use crate::pages::batch::BatchPage;
use crate::pages::batches::BatchesPage;
use crate::pages::health::HealthPage;
use crate::pages::import::ImportPage;
use crate::pages::item::ItemPage;
use crate::pages::lanes::LanesPage;
use crate::pages::machines::MachinesPage;
use crate::pages::operator::OperatorPage;
use crate::pages::overview::OverviewPage;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let store = live::start();
    prompt::provide_selection();
    view! {
        <Router>
            <TopBar/>
            <PastBanner/>
            {move || {
                store
                    .error
                    .get()
                    .map(|e| widgets::error_banner(format!("Could not load the dashboard: {e}")))
            }}
            {move || {
                store
                    .model
                    .get()
                    .and_then(|m| m.source_status.iter().find_map(|s| s.banner()))
                    .map(widgets::source_banner)
            }}
            {move || {
                store
                    .model
                    .with(|m| m.as_ref().and_then(|m| m.restored.clone()))
                    .map(|text| view! { <div class="restored-banner" role="status" data-testid="restored-banner">{text}</div> })
            }}
            <main>
                // An empty state: one notice on every page saying how to start.
                <div class="setup-slot">
                    {move || store.model.with(|m| m.as_ref().and_then(|m| m.setup.clone())).map(widgets::setup_notice)}
                </div>
                <Routes fallback=|| view! { <h1>"Page not found"</h1> <p><a href="/">"Back to the overview"</a></p> }>
                    <Route path=path!("/") view=OverviewPage/>
                    <Route path=path!("/operator") view=OperatorPage/>
                    <Route path=path!("/batches") view=BatchesPage/>
                    <Route path=path!("/batches/:id") view=BatchPage/>
                    <Route path=path!("/machines") view=MachinesPage/>
                    <Route path=path!("/lanes") view=LanesPage/>
                    <Route path=path!("/health") view=HealthPage/>
                    <Route path=path!("/import") view=ImportPage/>
                    <Route path=path!("/items/:owner/:repo/:target") view=ItemPage/>
                </Routes>
            </main>
        </Router>
    }
}
