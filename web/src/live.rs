//! The live model: one shared store, refreshed from `/api/dashboard?view=…` whenever the
//! server's event stream reports a new version or the page asks for another view, with a
//! 5-second polling fallback while the stream is down. The server cuts the model down to
//! the page's view (`shared::dashboard::view::slice`), so the browser never downloads the fleet.
//!
//! Every load is a Leptos [`LocalResource`]: the dashboard's own, and [`document`], which
//! pages use for the detail documents they show, kept current with the model's version.

use std::cell::Cell;
use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use agent_coord_shared::dashboard::derive::freshness::SyncView;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::view::slice::View;
use agent_coord_shared::time;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::de::DeserializeOwned;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::EventSource;
use web_sys::MessageEvent;

use crate::api;
use crate::api::ApiError;

/// How often the page polls while the stream is down (and refreshes ages).
const POLL: Duration = Duration::from_secs(5);

/// The store every page reads, provided as context.
#[derive(Clone, Copy)]
pub struct Store {
    /// The newest model, once loaded.
    pub model: RwSignal<Option<Arc<DashboardModel>>>,
    /// The model's version, for detail pages that refetch when it changes.
    pub version: Memo<Option<String>>,
    /// The last dashboard fetch error, cleared by a successful fetch.
    pub error: RwSignal<Option<ApiError>>,
    /// Whether the event stream is open.
    pub live: RwSignal<bool>,
    /// The browser clock (Unix ms), ticking every few seconds for ages.
    pub now_ms: RwSignal<f64>,
    /// The server's own syncing with the remote, once known.
    pub sync: RwSignal<Option<SyncView>>,
    /// The view the current page shows, as `/api/dashboard`'s query (`view=operator&q=…`).
    pub view: RwSignal<String>,
    /// Fired to load the current view again.
    reload: Trigger,
}

/// Reads the store from context.
pub fn use_store() -> Store {
    use_context::<Store>().unwrap_or_else(create)
}

thread_local! {
    static SOURCE: RefCell<Option<EventSource>> = const { RefCell::new(None) };
    static HANDLERS: RefCell<Option<Handlers>> = const { RefCell::new(None) };
    /// The browser clock (ms) when the current model arrived.
    static LOADED_AT: Cell<f64> = const { Cell::new(0.0) };
    /// Take the next model even when its version is the same.
    static FORCE: Cell<bool> = const { Cell::new(false) };
}

/// Reports whether a snooze in the model has ended by the server's clock (estimated as the
/// model's time plus what passed here since it arrived): the queue changed without any ref
/// moving, so no new version will be announced.
fn snooze_ended(store: Store) -> bool {
    store.model.with_untracked(|m| {
        let Some(m) = m else {
            return false;
        };
        let ends = agent_coord_shared::dashboard::model::next_expiry(&m.annotations);
        let generated = agent_coord_shared::time::parse(&m.generated_at);
        match (ends, generated) {
            (Some(ends), Some(generated)) => {
                let elapsed = js_sys::Date::now() - LOADED_AT.with(Cell::get);
                let server_now = generated.timestamp_millis() as f64 + elapsed;
                ends.timestamp_millis() as f64 <= server_now
            }
            _ => false,
        }
    })
}

/// The stream callbacks, made once and attached to every `EventSource` we open.
struct Handlers {
    version: js_sys::Function,
    sync: js_sys::Function,
    open: js_sys::Function,
    error: js_sys::Function,
}

fn create() -> Store {
    let model = RwSignal::new(None::<Arc<DashboardModel>>);
    Store {
        model,
        version: Memo::new(move |_| model.with(|m| m.as_ref().map(|m| m.version.clone()))),
        error: RwSignal::new(None),
        live: RwSignal::new(false),
        now_ms: RwSignal::new(js_sys::Date::now()),
        sync: RwSignal::new(None),
        view: RwSignal::new(View::Summary.query()),
        reload: Trigger::new(),
    }
}

/// Creates the store, provides it, loads the model and starts the stream and the poll.
pub fn start() -> Store {
    let store = create();
    provide_context(store);
    // Loads the model now, and again whenever a page asks for another view or `refresh`
    // fires. The resource runs one load at a time; what asks meanwhile makes one more. It
    // belongs to the app's owner, so it keeps loading for as long as the page lives.
    let _ = LocalResource::new(move || {
        let view = store.view.get();
        store.reload.track();
        async move {
            let result = api::get_json::<DashboardModel>(&format!("/api/dashboard?{view}")).await;
            accept(store, &view, result);
        }
    });
    if crate::past::active() {
        // The past does not move: no stream, no sync status; the poll only retries a
        // failed load, and ages count from the moment shown.
        set_interval(move || past_tick(store), POLL);
        return store;
    }
    load_sync(store);
    connect(store);
    set_interval(move || tick(store), POLL);
    store
}

/// [`tick`] on a page of the past: loads again only after a failed or missing load.
fn past_tick(store: Store) {
    if store.error.with_untracked(Option::is_some) || store.model.with_untracked(Option::is_none) {
        refresh(store);
    }
}

fn tick(store: Store) {
    store.now_ms.set(js_sys::Date::now());
    // Poll while the stream is down, and retry a failed or missing load even while it is up.
    let failed = store.error.with_untracked(Option::is_some);
    let empty = store.model.with_untracked(Option::is_none);
    if snooze_ended(store) {
        FORCE.with(|f| f.set(true));
    }
    if !store.live.get_untracked() || failed || empty || FORCE.with(Cell::get) {
        refresh(store);
        load_sync(store);
    }
    if stream_closed() {
        connect(store);
    }
}

/// Loads the current view of `/api/dashboard` into the store again.
pub fn refresh(store: Store) {
    store.reload.notify();
}

/// Takes a loaded model for `view` into the store, unless the page moved on to another view
/// while it was in flight (that view's own load follows) or it is the model already shown.
fn accept(store: Store, view: &str, result: Result<DashboardModel, ApiError>) {
    if store.view.get_untracked() != view {
        return;
    }
    match result {
        Ok(model) => {
            store.error.set(None);
            let same = store.model.with_untracked(|m| {
                m.as_ref()
                    .is_some_and(|m| m.version == model.version && m.slice == model.slice)
            });
            if !same || FORCE.with(|f| f.replace(false)) {
                LOADED_AT.with(|t| t.set(js_sys::Date::now()));
                // A model of the past is read at its own clock: ages count from then.
                if let Some(then) = model.past.as_ref().and_then(|p| time::parse(&p.at)) {
                    store.now_ms.set(then.timestamp_millis() as f64);
                }
                store.model.set(Some(Arc::new(model)));
            }
        }
        Err(e) => store.error.set(Some(e)),
    }
}

/// The part of `/api/health` the page reads.
#[derive(serde::Deserialize)]
struct Health {
    #[serde(default)]
    sync: Option<SyncView>,
}

/// Fetches the server's sync status (the stream pushes it while it is open).
fn load_sync(store: Store) {
    spawn_local(async move {
        if let Ok(health) = api::get_json::<Health>("/api/health").await {
            store.sync.set(health.sync);
        }
    });
}

fn stream_closed() -> bool {
    SOURCE.with(|s| {
        s.borrow()
            .as_ref()
            .is_none_or(|es| es.ready_state() == EventSource::CLOSED)
    })
}

/// Opens (or reopens) the `/api/stream` event source.
fn connect(store: Store) {
    let Ok(source) = EventSource::new("/api/stream") else {
        store.live.set(false);
        return;
    };
    HANDLERS.with(|h| {
        let mut h = h.borrow_mut();
        let handlers = h.get_or_insert_with(|| handlers(store));
        // Named `version` events do not reach `onmessage`; listen for them by name.
        let _ = source.add_event_listener_with_callback("version", &handlers.version);
        let _ = source.add_event_listener_with_callback("sync", &handlers.sync);
        source.set_onmessage(Some(&handlers.version));
        source.set_onopen(Some(&handlers.open));
        source.set_onerror(Some(&handlers.error));
    });
    SOURCE.with(|s| {
        if let Some(old) = s.borrow_mut().replace(source) {
            old.close();
        }
    });
}

fn handlers(store: Store) -> Handlers {
    let version = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        store.live.set(true);
        let Some(version) = event.data().as_string() else {
            return;
        };
        if store.version.get_untracked().as_deref() != Some(version.trim()) {
            refresh(store);
        }
    });
    let sync = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let view = event
            .data()
            .as_string()
            .and_then(|data| serde_json::from_str::<SyncView>(&data).ok());
        if view.is_some() {
            store.sync.set(view);
        }
    });
    let open = Closure::<dyn FnMut()>::new(move || store.live.set(true));
    let error = Closure::<dyn FnMut()>::new(move || store.live.set(false));
    Handlers {
        version: version.into_js_value().unchecked_into(),
        sync: sync.into_js_value().unchecked_into(),
        open: open.into_js_value().unchecked_into(),
        error: error.into_js_value().unchecked_into(),
    }
}

/// A resource that runs `fetch` again whenever the signals it reads or the model version
/// change. Read inside a `<Transition>`, it keeps showing the previous answer while the next
/// one loads.
pub fn resource<T, Fut>(fetch: impl Fn() -> Fut + 'static) -> LocalResource<T>
where
    T: 'static,
    Fut: Future<Output = T> + 'static,
{
    let store = use_store();
    LocalResource::new(move || {
        store.version.track();
        fetch()
    })
}

/// The JSON document at `url` as a [`resource`]: loaded again when `url` or the model
/// version changes.
pub fn document<T>(url: impl Fn() -> String + 'static) -> LocalResource<Result<T, ApiError>>
where
    T: DeserializeOwned + 'static,
{
    resource(move || {
        let url = url();
        async move { api::get_json::<T>(&url).await }
    })
}
