//! `include/xehe.h` is generated from `src/capi` by cbindgen (`cbindgen.toml`) and committed;
//! this test regenerates it and fails when the committed header is stale.
//! `XEHE_BLESS=1 cargo test --test capi_header` rewrites it.
//!
//! cbindgen does not expand macros, so the functions and handle types that `src/capi` generates
//! from its family tables are described by `xehe::capi::generated_declarations` (Rust source
//! with the same names, signatures and documentation) and parsed with the module.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    // Only the C API module (and its submodules) is parsed, so constants elsewhere in the
    // crate do not leak into the header.
    let generated = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capi_generated.rs");
    std::fs::write(&generated, xehe::capi::generated_declarations()).expect("write declarations");
    let bindings = cbindgen::Builder::new()
        .with_src(root.join("src/capi/mod.rs"))
        .with_src(&generated)
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("header is UTF-8");
    let path = root.join("include/xehe.h");
    if std::env::var_os("XEHE_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/xehe.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/xehe.h is stale: regenerate with XEHE_BLESS=1 cargo test --test capi_header"
    );
    // Every function documents ownership, thread safety and errors in its own comment.
    let mut functions = 0;
    for decl in fresh.split("*/").skip(1) {
        let Some(name) = decl
            .split('(')
            .next()
            .and_then(|head| head.split_whitespace().last())
        else {
            continue;
        };
        let name = name.trim_start_matches('*');
        if !name.starts_with("xehe_") {
            continue;
        }
        functions += 1;
        let doc_end = fresh.find(decl).unwrap_or(0);
        let doc = &fresh[fresh[..doc_end].rfind("/**").unwrap_or(0)..doc_end];
        let doc = doc
            .split_whitespace()
            .filter(|w| *w != "*")
            .collect::<Vec<_>>()
            .join(" ");
        for key in ["Ownership", "Thread safety", "Errors"] {
            assert!(
                doc.contains(key),
                "{name}: no `{key}` in its comment:\n{doc}"
            );
        }
    }
    assert!(
        functions > 100,
        "only {functions} functions found in the header"
    );
}
