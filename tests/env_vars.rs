//! Every `XEHE_*` environment variable the code reads is documented, and every one the
//! documentation names is read by some code: a switch that is renamed or removed must take its
//! documentation with it.
//!
//! Reads are found by plain scanning: a `XEHE_…` name as the argument of `var(`/`var_os(`
//! (Rust, directly or through a `const` holding the name), `getenv(` (C, C++, Python),
//! `environ.get(`/`environ[` (Python) or `$ENV{` (CMake), and `$XEHE_…`/`${XEHE_…` in shell
//! scripts. Names in the documentation that are kernel macros or C-ABI constants (they appear in
//! `native/` or `include/`, e.g. `XEHE_SLM_TILE` of `-DXEHE_SLM_TILE=…`, `XEHE_STATUS_OK`) are
//! not environment variables, unless some code also reads them from the environment.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Read by the code but set only by the tests themselves (for a child process they start), so
/// no user ever sets them.
const INTERNAL: &[&str] = &["XEHE_TEST_NO_ICD_CHILD"];

/// Where code that reads the environment lives.
const CODE: &[&str] = &[
    "src",
    "native",
    "build.rs",
    "python/src",
    "python/xehe",
    "python/scripts",
    "scripts",
    "examples",
    "cmake",
    "tests",
];

/// The documentation.
const DOCS: &[&str] = &["README.md", "BENCHMARKS.md", "docs", "python/README.md"];

/// Source files only: the logs under docs/bench and the like are records, not code or docs.
const CODE_EXTENSIONS: &[&str] = &["rs", "py", "sh", "c", "cc", "cpp", "h", "hpp", "cl", "cu", "cmake", "txt"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files under `rel` (a file or a folder) whose extension is one of `exts`.
fn files(rel: &str, exts: &[&str]) -> Vec<PathBuf> {
    fn walk(p: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        if p.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()).collect();
            entries.sort();
            for e in entries {
                walk(&e, exts, out);
            }
        } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.contains(&e)) {
            out.push(p.to_path_buf());
        }
    }
    let mut out = Vec::new();
    walk(&root().join(rel), exts, &mut out);
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every whole `XEHE_[A-Z0-9_]+` token of `text`, with its byte offset.
fn names(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("XEHE_").map(|i| i + from) {
        let end = text[i..].find(|c: char| !is_name_char(c)).map_or(text.len(), |e| i + e);
        let whole = !text[..i].ends_with(is_ident_char) && end > i + 5;
        if whole {
            out.push((i, &text[i..end]));
        }
        from = end.max(i + 5);
    }
    out
}

/// The argument text of every call `opener…)` in `text` whose opener is not the tail of a longer
/// identifier (`var(` but not `set_var(`), whitespace and quotes trimmed.
fn call_args<'a>(text: &'a str, opener: &str, close: char) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(opener).map(|i| i + from) {
        from = i + opener.len();
        if opener.starts_with(is_ident_char) && text[..i].ends_with(is_ident_char) {
            continue;
        }
        let rest = &text[from..];
        let arg = &rest[..rest.find([close, ',']).unwrap_or(rest.len()).min(200)];
        out.push(arg.trim().trim_matches(|c| c == '"' || c == '\'').trim());
    }
    out
}

/// `const IDENT: &str = "XEHE_…";` in Rust sources, as IDENT → name.
fn name_constants(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
        let Some(rest) = line.strip_prefix("const ") else { continue };
        let Some((ident, value)) = rest.split_once(": &str = \"") else { continue };
        let name = value.strip_suffix("\";").unwrap_or_default();
        if name.starts_with("XEHE_") && name.chars().all(is_name_char) {
            out.insert(ident.trim().to_string(), name.to_string());
        }
    }
    out
}

/// Every name the code reads from the environment, with the first file that reads it.
fn read_by_code() -> BTreeMap<String, String> {
    let this_test = root().join("tests/env_vars.rs");
    let sources: Vec<(PathBuf, String)> = CODE
        .iter()
        .flat_map(|d| files(d, CODE_EXTENSIONS))
        .filter(|p| *p != this_test)
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            (p, text)
        })
        .collect();
    let constants: BTreeMap<String, String> = sources.iter().flat_map(|(_, t)| name_constants(t)).collect();
    let mut read = BTreeMap::new();
    for (path, text) in &sources {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        let mut found = Vec::new();
        let calls = [
            ("var(", ')'),
            ("var_os(", ')'),
            ("getenv(", ')'),
            ("environ.get(", ')'),
            ("environ[", ']'),
            ("$ENV{", '}'),
        ];
        for (opener, close) in calls {
            for arg in call_args(text, opener, close) {
                if arg.starts_with("XEHE_") && arg.chars().all(is_name_char) {
                    found.push(arg.to_string());
                } else if let Some(name) = constants.get(arg.rsplit("::").next().unwrap_or(arg)) {
                    found.push(name.clone());
                }
            }
        }
        if rel.ends_with(".sh") {
            for (i, name) in names(text) {
                if text[..i].ends_with('$') || text[..i].ends_with("${") {
                    found.push(name.to_string());
                }
            }
        }
        for name in found {
            read.entry(name).or_insert_with(|| rel.clone());
        }
    }
    read
}

/// Kernel macros and C-ABI constants: every name in `native/` and `include/`.
fn macros_and_constants() -> BTreeSet<String> {
    ["native", "include"]
        .iter()
        .flat_map(|d| files(d, CODE_EXTENSIONS))
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            names(&text).into_iter().map(|(_, n)| n.to_string()).collect::<Vec<_>>()
        })
        .collect()
}

/// Every name the documentation mentions, with the first file that does.
fn named_by_docs() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for p in DOCS.iter().flat_map(|d| files(d, &["md"])) {
        let text = std::fs::read_to_string(&p).unwrap();
        let rel = p.strip_prefix(root()).unwrap().display().to_string();
        for (_, name) in names(&text) {
            out.entry(name.to_string()).or_insert_with(|| rel.clone());
        }
    }
    out
}

#[test]
fn scanner_finds_reads_and_skips_writes() {
    let rust = "let a = std::env::var(\"XEHE_A\");\nstd::env::set_var(\"XEHE_B\", \"1\");\n\
                let c = env::var_os(\n    \"XEHE_C\",\n);\npub const D: &str = \"XEHE_D\";\n";
    assert_eq!(call_args(rust, "var(", ')'), ["XEHE_A"]);
    assert_eq!(call_args(rust, "var_os(", ')'), ["XEHE_C"]);
    assert_eq!(name_constants(rust).get("D").map(String::as_str), Some("XEHE_D"));
    let found: Vec<&str> = names("x XEHE_A_1 yXEHE_B XEHE_ `XEHE_C`").iter().map(|(_, n)| *n).collect();
    assert_eq!(found, ["XEHE_A_1", "XEHE_C"]);
}

#[test]
fn every_environment_variable_is_documented_and_every_documented_one_is_read() {
    let read = read_by_code();
    let docs = named_by_docs();
    let not_env = macros_and_constants();
    // Sanity: the scan sees the variables everyone knows are there.
    for known in ["XEHE_DEVICE", "XEHE_KERNEL_CACHE", "XEHE_SYNC", "XEHE_NO_ASM", "XEHE_FASHION_MNIST"] {
        assert!(read.contains_key(known), "the scan no longer finds the read of {known}");
    }
    let undocumented: Vec<String> = read
        .iter()
        .filter(|(name, _)| !docs.contains_key(*name) && !INTERNAL.contains(&name.as_str()))
        .map(|(name, file)| format!("{name} (read in {file})"))
        .collect();
    let unread: Vec<String> = docs
        .iter()
        .filter(|(name, _)| !read.contains_key(*name) && !not_env.contains(*name))
        .map(|(name, file)| format!("{name} (named in {file})"))
        .collect();
    assert!(
        undocumented.is_empty() && unread.is_empty(),
        "environment variables read but not documented: {undocumented:?}; \
         documented but read by no code: {unread:?}"
    );
}
