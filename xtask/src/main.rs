//! Build steps of this repository that cargo does not do itself (`cargo run -p xtask -- …`).
//!
//! `web-bundle WEB_DIR BINDGEN_DIR OUT_DIR` assembles the dashboard front end: the app's
//! JavaScript module and WebAssembly (wasm-bindgen's `--target web` output in BINDGEN_DIR),
//! the stylesheet (`WEB_DIR/style.css`) and the page (`WEB_DIR/index.html`, whose
//! `<!-- bundle -->` line becomes the tags that load the rest). Files get content-hashed names,
//! so the server can let browsers keep them for a year, and the tags carry subresource
//! integrity digests. OUT_DIR is replaced whole: a stale file would otherwise be embedded into
//! the binary beside the new ones (`cli/build.rs` embeds every file it finds there).

mod bundle;

use std::env;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: xtask web-bundle WEB_DIR BINDGEN_DIR OUT_DIR

Assembles the dashboard front end into OUT_DIR (replaced whole) from wasm-bindgen's
`--target web` output in BINDGEN_DIR and WEB_DIR's index.html and style.css.
`make web` runs the wasm32 build, wasm-bindgen and this step.";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match args.as_slice() {
        [command, web, bindgen, out] if command == "web-bundle" => {
            match bundle::write(Path::new(web), Path::new(bindgen), Path::new(out)) {
                Ok(names) => {
                    println!("{}: {}", out, names.join(", "));
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("xtask web-bundle: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        [flag] if flag == "--help" || flag == "-h" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
