//! Embeds the compiled dashboard front end (`web/dist`, built by `make web`) in the binary, so
//! an installed `agent-coord` serves it with nothing else on disk. Without a bundle the
//! list is empty and `serve` answers with a page saying how to build it.

use std::env;
use std::error::Error;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-env-changed=AGENT_COORD_WEB_DIST");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let dist = env::var_os("AGENT_COORD_WEB_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../web/dist"));
    let mut files = Vec::new();
    if let Ok(entries) = fs::read_dir(&dist) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() {
                if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                    files.push((name.to_owned(), fs::canonicalize(&path)?));
                }
            }
        }
        println!("cargo:rerun-if-changed={}", dist.display());
    } else if manifest.join("../web").is_dir() {
        // Rebuild when `web/dist` appears.
        println!(
            "cargo:rerun-if-changed={}",
            manifest.join("../web").display()
        );
    } else {
        // Rebuild when `web/` appears.
        println!("cargo:rerun-if-changed={}", manifest.join("..").display());
    }
    files.sort();
    let mut out = String::from("/// The embedded front-end files: (file name, contents).\npub(crate) static ASSETS: &[(&str, &[u8])] = &[\n");
    for (name, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            out,
            "    ({name:?}, include_bytes!({:?})),",
            path.display().to_string()
        )?;
    }
    out.push_str("];\n");
    fs::write(
        PathBuf::from(env::var("OUT_DIR")?).join("web_assets.rs"),
        out,
    )?;
    Ok(())
}
