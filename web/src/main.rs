//! Entry point: in the browser, mount the app; natively, explain what this binary is.

fn main() {
    #[cfg(target_arch = "wasm32")]
    agent_coord_web::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("agent-coord-web runs in the browser: build it with `make web`.");
}
