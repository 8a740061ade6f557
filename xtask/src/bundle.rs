//! The dashboard front end's bundle: content-hashed file names and the page that loads them.

use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;

use base64::Engine as _;
use sha2::Digest as _;
use sha2::Sha256;
use sha2::Sha384;

/// The web crate's binary name: wasm-bindgen names its output after it.
const APP: &str = "agent-coord-web";
/// The line of `index.html` that the tags replace.
const MARKER: &str = "<!-- bundle -->";

#[derive(Debug, thiserror::Error)]
pub(crate) enum BundleError {
    #[error("cannot read {path}: {source} (run `make web`, which builds it first)")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("{path} must hold the line `{MARKER}` exactly once (it holds it {count} times)")]
    Marker { path: PathBuf, count: usize },
}

/// One file of the bundle.
#[derive(Debug, PartialEq)]
pub(crate) struct Asset {
    pub(crate) name: String,
    pub(crate) bytes: Vec<u8>,
}

impl Asset {
    /// The `integrity` attribute's value: `sha384-` and the digest in base64.
    fn integrity(&self) -> String {
        let digest = Sha384::digest(&self.bytes);
        format!(
            "sha384-{}",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    }
}

/// The bundle's files, the page last.
#[derive(Debug)]
pub(crate) struct Bundle {
    pub(crate) js: Asset,
    pub(crate) wasm: Asset,
    pub(crate) css: Asset,
    pub(crate) index: Asset,
}

/// The first 16 hex digits of the SHA-256 of `parts`, in order.
fn content_hash(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Names the files after their content and fills the page's marker line with the tags that
/// load them. `Err(count)` when the template does not hold the marker line exactly once.
pub(crate) fn assemble(
    js: Vec<u8>,
    wasm: Vec<u8>,
    css: Vec<u8>,
    template: &str,
) -> Result<Bundle, usize> {
    // The module and its WebAssembly change together: one hash names both.
    let app = content_hash(&[&js, &wasm]);
    let js = Asset {
        name: format!("{APP}-{app}.js"),
        bytes: js,
    };
    let wasm = Asset {
        name: format!("{APP}-{app}_bg.wasm"),
        bytes: wasm,
    };
    let css = Asset {
        name: format!("style-{}.css", content_hash(&[&css])),
        bytes: css,
    };
    let count = template.lines().filter(|l| l.trim() == MARKER).count();
    if count != 1 {
        return Err(count);
    }
    let tags = tags(&js, &wasm, &css);
    let mut page = String::with_capacity(template.len() + tags.len());
    for line in template.split_inclusive('\n') {
        if line.trim() == MARKER {
            let indent = &line[..line.len() - line.trim_start().len()];
            for tag in tags.lines() {
                page.push_str(indent);
                page.push_str(tag);
                page.push('\n');
            }
        } else {
            page.push_str(line);
        }
    }
    let index = Asset {
        name: "index.html".to_owned(),
        bytes: page.into_bytes(),
    };
    Ok(Bundle {
        js,
        wasm,
        css,
        index,
    })
}

/// The stylesheet, preloads of the module and its WebAssembly, and the module that starts
/// the app (wasm-bindgen's `--target web` glue exports `init` as its default).
fn tags(js: &Asset, wasm: &Asset, css: &Asset) -> String {
    let (js_name, wasm_name, css_name) = (&js.name, &wasm.name, &css.name);
    format!(
        r#"<link rel="stylesheet" href="/{css_name}" integrity="{}" />
<link rel="modulepreload" href="/{js_name}" crossorigin="anonymous" integrity="{}" />
<link rel="preload" href="/{wasm_name}" crossorigin="anonymous" integrity="{}" as="fetch" type="application/wasm" />
<script type="module">
  import init from '/{js_name}';
  await init({{ module_or_path: '/{wasm_name}' }});
</script>
"#,
        css.integrity(),
        js.integrity(),
        wasm.integrity(),
    )
}

fn read(path: PathBuf) -> Result<Vec<u8>, BundleError> {
    fs::read(&path).map_err(|source| BundleError::Read { path, source })
}

/// Assembles the bundle from `web` (index.html, style.css) and `bindgen` (wasm-bindgen's
/// output) into `out`, replaced whole; returns the files' names.
pub(crate) fn write(web: &Path, bindgen: &Path, out: &Path) -> Result<Vec<String>, BundleError> {
    let js = read(bindgen.join(format!("{APP}.js")))?;
    let wasm = read(bindgen.join(format!("{APP}_bg.wasm")))?;
    let css = read(web.join("style.css"))?;
    let template_path = web.join("index.html");
    let template = String::from_utf8_lossy(&read(template_path.clone())?).into_owned();
    let bundle = assemble(js, wasm, css, &template).map_err(|count| BundleError::Marker {
        path: template_path,
        count,
    })?;
    // Build beside `out`, then swap it in: a failed write leaves the old bundle.
    let mut staging = out.as_os_str().to_owned();
    staging.push(".new");
    let staging = PathBuf::from(staging);
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BundleError::Write { path, source }
    };
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(write_err(&staging))?;
    }
    fs::create_dir_all(&staging).map_err(write_err(&staging))?;
    let assets = [&bundle.js, &bundle.wasm, &bundle.css, &bundle.index];
    for asset in assets {
        let path = staging.join(&asset.name);
        fs::write(&path, &asset.bytes).map_err(write_err(&path))?;
    }
    if out.exists() {
        fs::remove_dir_all(out).map_err(write_err(out))?;
    }
    fs::rename(&staging, out).map_err(write_err(out))?;
    Ok(assets.iter().map(|a| a.name.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str =
        "<html>\n  <head>\n    <title>t</title>\n    <!-- bundle -->\n  </head>\n</html>\n";

    fn bundle(js: &[u8], wasm: &[u8], css: &[u8]) -> Bundle {
        assemble(js.to_vec(), wasm.to_vec(), css.to_vec(), TEMPLATE).unwrap()
    }

    #[test]
    fn names_follow_the_content() {
        let a = bundle(b"js", b"wasm", b"css");
        assert!(a.js.name.starts_with("agent-coord-web-") && a.js.name.ends_with(".js"));
        assert_eq!(
            a.wasm.name,
            a.js.name.replace(".js", "_bg.wasm"),
            "the module and its WebAssembly share one hash"
        );
        let wasm_changed = bundle(b"js", b"wasm2", b"css");
        assert_ne!(a.js.name, wasm_changed.js.name);
        assert_eq!(a.css.name, wasm_changed.css.name);
        let css_changed = bundle(b"js", b"wasm", b"css2");
        assert_ne!(a.css.name, css_changed.css.name);
        assert_eq!(a.js.name, css_changed.js.name);
    }

    #[test]
    fn the_marker_line_becomes_the_tags_at_its_indent() {
        let b = bundle(b"js", b"wasm", b"body{}");
        let page = String::from_utf8(b.index.bytes).unwrap();
        assert!(!page.contains(MARKER));
        assert!(page
            .starts_with("<html>\n  <head>\n    <title>t</title>\n    <link rel=\"stylesheet\""));
        assert!(page.ends_with("    </script>\n  </head>\n</html>\n"));
        assert!(page.contains(&format!("href=\"/{}\"", b.css.name)));
        assert!(page.contains(&format!("import init from '/{}';", b.js.name)));
        assert!(page.contains(&format!("module_or_path: '/{}'", b.wasm.name)));
        // SHA-384 of "body{}", base64.
        let digest = Sha384::digest(b"body{}");
        let expected = base64::engine::general_purpose::STANDARD.encode(digest);
        assert!(page.contains(&format!("integrity=\"sha384-{expected}\"")));
    }

    #[test]
    fn a_template_without_one_marker_is_refused() {
        let none = assemble(vec![], vec![], vec![], "<html></html>\n");
        assert_eq!(none.err(), Some(0));
        let two = assemble(vec![], vec![], vec![], "<!-- bundle -->\n<!-- bundle -->\n");
        assert_eq!(two.err(), Some(2));
    }

    #[test]
    fn write_replaces_the_output_folder_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (web, bindgen, out) = (
            dir.path().join("web"),
            dir.path().join("bg"),
            dir.path().join("dist"),
        );
        fs::create_dir_all(&web).unwrap();
        fs::create_dir_all(&bindgen).unwrap();
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("stale-0000.js"), "old").unwrap();
        fs::write(web.join("index.html"), TEMPLATE).unwrap();
        fs::write(web.join("style.css"), "a{}").unwrap();
        fs::write(bindgen.join("agent-coord-web.js"), "export default 1").unwrap();
        fs::write(bindgen.join("agent-coord-web_bg.wasm"), b"\0asm").unwrap();
        let names = write(&web, &bindgen, &out).unwrap();
        let mut on_disk: Vec<String> = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let mut expected = names.clone();
        expected.sort();
        assert_eq!(on_disk, expected);
        assert_eq!(names.len(), 4);
        assert!(!dir.path().join("dist.new").exists());
    }

    #[test]
    fn a_missing_input_names_the_file_and_leaves_the_old_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("dist");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("index.html"), "old").unwrap();
        let error = write(dir.path(), dir.path(), &out).unwrap_err();
        assert!(error.to_string().contains("agent-coord-web.js"), "{error}");
        assert_eq!(fs::read_to_string(out.join("index.html")).unwrap(), "old");
    }
}
