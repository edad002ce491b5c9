//! The layer rule of `docs/guide/README.md`: math → device → ckks → serialize → circuits → apps →
//! doors (cli, capi; the Python module wraps the public API from its own crate). A module may
//! name modules of its own layer and the layers below it, never one above. Checked on the
//! source text: every `crate::<module>` path, and every name that `src/lib.rs` re-exports from a
//! module (`crate::Context` is `ckks`), outside comments.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Layers from the bottom; the doors share the top rank but may not name each other.
const LAYERS: &[(&str, usize)] =
    &[("math", 0), ("device", 1), ("ckks", 2), ("serialize", 3), ("circuits", 4), ("apps", 5), ("cli", 6), ("capi", 6)];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, r)| r)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Names `src/lib.rs` re-exports, with the module each comes from (`pub use ckks::context::{Context,
/// ContextData};` gives `Context → ckks`, `ContextData → ckks`).
fn reexports(lib: &str) -> HashMap<String, String> {
    let mut names = HashMap::new();
    for line in lib.lines().map(str::trim).filter(|l| l.starts_with("pub use ")) {
        let path = line.trim_start_matches("pub use ").trim_end_matches(';');
        let module = path.split("::").next().unwrap_or_default().to_string();
        if rank(&module).is_none() {
            continue;
        }
        let tail = path.rsplit("::").next().unwrap_or_default();
        let items = if let Some(group) = path.find('{') {
            path[group + 1..].trim_end_matches('}').to_string()
        } else {
            tail.to_string()
        };
        for item in items.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            names.insert(name.to_string(), module.clone());
        }
    }
    names
}

/// The code of `text` with `//` comments (line, doc and module docs) removed.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Modules (and re-exported names' modules) that `code` names through `crate::`.
fn named_modules(code: &str, names: &HashMap<String, String>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let mut items = Vec::new();
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::b, Name, ...}`: the first segment of each item.
            let end = group.find('}').unwrap_or(group.len());
            items.extend(group[..end].split(',').map(|s| ident(s.trim())));
        } else {
            items.push(ident(rest));
        }
        for item in items.into_iter().filter(|s| !s.is_empty()) {
            if rank(&item).is_some() {
                found.push((item.clone(), format!("crate::{item}")));
            } else if let Some(m) = names.get(&item) {
                found.push((m.clone(), format!("crate::{item}")));
            }
        }
    }
    found
}

#[test]
fn imports_only_look_down() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names = reexports(&std::fs::read_to_string(root.join("lib.rs")).expect("src/lib.rs"));
    assert_eq!(names.get("Context").map(String::as_str), Some("ckks"), "lib.rs re-exports parsed");
    let mut violations = Vec::new();
    for &(layer, own) in LAYERS {
        let mut files = Vec::new();
        rust_files(&root.join(layer), &mut files);
        assert!(!files.is_empty(), "src/{layer} has Rust files");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("source file");
            for (module, path) in named_modules(&code(&text), &names) {
                let other = rank(&module).expect("known layer");
                if other > own || (other == own && module != layer) {
                    violations.push(format!("{}: {path} ({module} is not below {layer})", file.strip_prefix(&root).unwrap_or(&file).display()));
                }
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(violations.is_empty(), "imports that look up:\n{}", violations.join("\n"));
}

#[test]
fn the_checker_sees_what_it_must() {
    let names = reexports("pub use ckks::context::{Context, ContextData};\npub use math::modulus::Modulus;");
    let found = named_modules(&code("use crate::{Context, Error};\nuse crate::cli::bench; // crate::apps\n"), &names);
    assert_eq!(found, vec![("ckks".to_string(), "crate::Context".to_string()), ("cli".to_string(), "crate::cli".to_string())]);
}
