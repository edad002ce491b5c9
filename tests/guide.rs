//! Every fenced code block of `README.md` and `docs/guide/*.md` is checked here (the
//! guide's code blocks run in CI), by its info string:
//!
//! - `rust`: a doc test — `src/cli/mod.rs` includes the page with `#[doc = include_str!(…)]`
//!   under `cfg(doctest)`; this test checks that the page is listed there.
//! - `sh` and `python` with tags of what they need beyond the build — `seal` (python SEAL and
//!   numpy), `numpy`, `fashion-mnist` (the data set), `torch` (PyTorch and onnx), e.g.
//!   `sh,fashion-mnist,numpy`; a `python` block needs at least one: a page's blocks run in order
//!   in one `bash -euo pipefail` (Python blocks through `python3`), in a scratch folder whose
//!   entries link to the repository's top level (so `data/`, `tests/seal/oracle.py` resolve and
//!   outputs land in the scratch folder), with `xehe` the binary under test. A block whose needs
//!   are missing is skipped with the reason and the command that installs them. The blocks run
//!   twice: with what is installed, and with every optional part hidden (python modules
//!   shadowed, the data set's variable pointing at an empty folder), so an untagged block that
//!   needs one fails even where CI has it installed.
//! - `sh,gpu`, `sh,cargo`, `sh,install`: skipped with a printed reason (a GPU; building or
//!   testing the whole project, which this suite is; installing system packages).
//! - `python,xehe`: skipped here; the Python module's suite (`python/scripts/test.sh`,
//!   `python/tests/test_readme.py`) runs it.
//! - `cpp,excerpt`, `c,excerpt`, `cmake,excerpt`: the first line names a file (as a comment);
//!   the other lines must appear in it in order, contiguous except at `// …` / `# …` (the files
//!   are built and run by `tests/capi_examples.rs`).
//! - `text,usage`: every `xehe` subcommand and `--option` named exists in its `--help`.
//! - `text,grammar`: equal to the grammar in `src/cli/expr.rs`.
//! - `text,paths`: the path that starts each unindented line exists.
//! - `text,output`: what a command printed (a measured run, quoted); not checked.
//!
//! Any other info string (or none) fails, so no block goes unchecked.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

/// A fenced block: info string, first line number (of the fence), body.
struct Block {
    info: Vec<String>,
    line: usize,
    body: String,
}

impl Block {
    fn lang(&self) -> &str {
        self.info.first().map_or("", String::as_str)
    }
    fn tag(&self) -> &str {
        self.info.get(1).map_or("", String::as_str)
    }
    fn first_line(&self) -> &str {
        self.body.lines().next().unwrap_or("")
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every page of `docs/guide/`, as paths relative to the repository.
fn pages() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("docs/guide"))
        .expect("docs/guide")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/guide/{n}"))
        .collect();
    v.sort();
    v.insert(0, "README.md".into());
    v
}

fn blocks(page: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(root().join(page)).expect("read page");
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect(),
                    line: i + 1,
                    body: String::new(),
                })
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => out.extend(open.take()),
            (Some(b), _) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{page}: a fenced block is not closed");
    out
}

/// A file's lines without comments (`marker` to the end of the line), trimmed, empty ones dropped.
fn code_lines(text: &str, marker: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_once(marker).map_or(l, |(code, _)| code).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

fn check_excerpt(page: &str, b: &Block) -> Result<(), String> {
    let marker = if b.lang() == "cmake" { "#" } else { "//" };
    let file = b
        .first_line()
        .trim()
        .strip_prefix(marker)
        .map(str::trim)
        .ok_or_else(|| format!("the first line must be `{marker} FILE`"))?;
    let text = std::fs::read_to_string(root().join(file)).map_err(|e| format!("{file}: {e}"))?;
    let lines = code_lines(&text, marker);
    // Chunks of the excerpt between elision lines (`// …`).
    let mut chunks: Vec<Vec<String>> = vec![Vec::new()];
    for l in b.body.lines().skip(1) {
        let t = l.trim();
        if t.strip_prefix(marker).is_some_and(|r| matches!(r.trim(), "…" | "...")) {
            chunks.push(Vec::new());
            continue;
        }
        let code = t.split_once(marker).map_or(t, |(c, _)| c).trim();
        if !code.is_empty() {
            chunks.last_mut().expect("a chunk").push(code.to_string());
        }
    }
    let mut from = 0;
    for chunk in chunks.iter().filter(|c| !c.is_empty()) {
        let at = (from..=lines.len().saturating_sub(chunk.len()))
            .find(|&i| lines[i..i + chunk.len()] == chunk[..])
            .ok_or_else(|| format!("not found in {file} (in this order, after line {from}): {chunk:#?}"))?;
        from = at + chunk.len();
    }
    let _ = page;
    Ok(())
}

fn xehe_help(path: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_xehe"))
        .args(path)
        .arg("--help")
        .output()
        .expect("run xehe --help");
    assert!(out.status.success(), "xehe {path:?} --help failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check_usage(b: &Block) -> Result<(), String> {
    // One command per line starting with `xehe`; indented lines continue it.
    let mut commands: Vec<String> = Vec::new();
    for l in b.body.lines() {
        if l.starts_with("xehe ") {
            commands.push(l.to_string());
        } else if let Some(c) = commands.last_mut() {
            c.push(' ');
            c.push_str(l);
        }
    }
    if commands.is_empty() {
        return Err("no `xehe …` line".into());
    }
    for c in &commands {
        let tokens: Vec<&str> = c.split_whitespace().skip(1).collect();
        let words: Vec<&str> = tokens
            .iter()
            .take_while(|t| **t == "|" || t.chars().all(|ch| ch.is_ascii_lowercase()))
            .copied()
            .collect();
        // `bench routines | ntt | matmul`: the first words, then each alternative of the last.
        let groups: Vec<&[&str]> = words.split(|w| *w == "|").collect();
        let first = groups[0];
        if first.is_empty() {
            return Err(format!("`{c}`: no subcommand"));
        }
        let head = &first[..first.len() - 1];
        let paths: Vec<Vec<&str>> = std::iter::once(first.to_vec())
            .chain(groups[1..].iter().map(|alt| [head, alt].concat()))
            .collect();
        let options: Vec<&str> = c
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-'))
            .filter(|t| t.starts_with("--") && t.len() > 2)
            .collect();
        for p in &paths {
            let help = xehe_help(p);
            for o in &options {
                if !help.contains(&format!("{o} ")) && !help.contains(&format!("{o}\n")) {
                    return Err(format!("`xehe {}` has no option {o}", p.join(" ")));
                }
            }
        }
    }
    Ok(())
}

fn check_grammar(b: &Block) -> Result<(), String> {
    let src = std::fs::read_to_string(root().join("src/cli/expr.rs")).expect("expr.rs");
    let doc: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = doc.iter().position(|l| *l == "```text").ok_or("no grammar in expr.rs")?;
    let len = doc[start + 1..].iter().position(|l| *l == "```").ok_or("unclosed grammar")?;
    let want: Vec<&str> = doc[start + 1..start + 1 + len].iter().map(|l| l.trim_end()).collect();
    let got: Vec<&str> = b.body.lines().map(str::trim_end).collect();
    if got == want {
        Ok(())
    } else {
        Err(format!("differs from src/cli/expr.rs:\n{}", want.join("\n")))
    }
}

fn check_paths(b: &Block) -> Result<(), String> {
    for l in b.body.lines().filter(|l| !l.is_empty() && !l.starts_with(char::is_whitespace)) {
        let path = l.split_whitespace().next().unwrap_or("");
        if !root().join(path).exists() {
            return Err(format!("`{path}` does not exist"));
        }
    }
    Ok(())
}

/// Every block is of a known kind, and the ones checked without running pass.
#[test]
fn every_block_is_checked() {
    let mod_rs = std::fs::read_to_string(root().join("src/cli/mod.rs")).expect("src/cli/mod.rs");
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for page in pages() {
        for b in blocks(&page) {
            let kind = b.info.join(",");
            *counts.entry(kind.clone()).or_default() += 1;
            let r = match (b.lang(), b.tag()) {
                ("rust", "") => {
                    let include = format!("include_str!(\"../../{page}\")");
                    if mod_rs.contains(&include) {
                        Ok(())
                    } else {
                        Err(format!("src/cli/mod.rs does not include the page ({include}): its Rust blocks would not run"))
                    }
                }
                ("sh" | "python", _) if runs(&b) => Ok(()),
                ("cpp" | "c" | "cmake", "excerpt") => check_excerpt(&page, &b),
                ("text", "usage") => check_usage(&b),
                ("text", "grammar") => check_grammar(&b),
                ("text", "paths") => check_paths(&b),
                ("text", "output") => Ok(()),
                _ => Err(format!("unknown info string `{kind}`: see tests/guide.rs for the kinds")),
            };
            if let Err(e) = r {
                failures.push(format!("{page}:{}: ```{kind}: {e}", b.line));
            }
        }
    }
    println!("blocks: {counts:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A scratch folder whose entries link to the repository's top-level entries.
fn mirror(tag: &str) -> common::ScratchDir {
    let dir = common::scratch_dir(&format!("guide-{tag}"));
    for e in std::fs::read_dir(root()).expect("repository") {
        let e = e.unwrap();
        if e.file_name() == ".git" {
            continue;
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(e.path(), dir.join(e.file_name())).expect("symlink");
    }
    dir
}

/// What a block may need beyond the build, by its tag: how to tell whether it is here, and the
/// command that installs it (printed with the SKIP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    /// `seal`: python SEAL (and numpy), the oracle.
    Seal,
    /// `numpy`: python's numpy.
    Numpy,
    /// `fashion-mnist`: the data set (Debian's directory or `XEHE_FASHION_MNIST`).
    FashionMnist,
    /// `torch`: PyTorch and onnx, to export a model.
    Torch,
}

impl Need {
    fn from_tag(tag: &str) -> Option<Need> {
        match tag {
            "seal" => Some(Need::Seal),
            "numpy" => Some(Need::Numpy),
            "fashion-mnist" => Some(Need::FashionMnist),
            "torch" => Some(Need::Torch),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Need::Seal => "python SEAL",
            Need::Numpy => "numpy",
            Need::FashionMnist => "the Fashion-MNIST data set",
            Need::Torch => "PyTorch and onnx",
        }
    }

    fn install(self) -> &'static str {
        match self {
            Need::Seal => "pip install seal-python==4.4.0 numpy",
            Need::Numpy => "pip install numpy",
            Need::FashionMnist => "apt install dataset-fashion-mnist",
            Need::Torch => "pip install torch onnx",
        }
    }

    /// The python modules it needs (hidden by [`Hidden`]).
    fn modules(self) -> &'static [&'static str] {
        match self {
            Need::Seal => &["seal", "numpy"],
            Need::Numpy => &["numpy"],
            Need::FashionMnist => &[],
            Need::Torch => &["torch", "onnx"],
        }
    }

    fn present(self) -> bool {
        match self {
            Need::FashionMnist => xehe::apps::fashion_mnist::locate(None).is_ok(),
            n => common::python_has_quietly(&n.modules().join(", ")),
        }
    }
}

const NEEDS: [Need; 4] = [Need::Seal, Need::Numpy, Need::FashionMnist, Need::Torch];

/// How a block runs: never here (why), or when its needs are met.
fn block_needs(b: &Block) -> Result<Vec<Need>, &'static str> {
    match (b.lang(), b.tag()) {
        ("sh", "gpu") => Err("needs a GPU"),
        ("sh", "cargo") => Err("builds or tests the whole project, which this suite is"),
        ("sh", "install") => Err("installs system packages"),
        ("python", "xehe") => Err("needs the xehe Python module: python/scripts/test.sh runs it"),
        _ => Ok(b.info[1..].iter().filter_map(|t| Need::from_tag(t)).collect()),
    }
}

/// Whether a block of this language and these tags runs in [`run_blocks`] (the others are
/// checked by [`every_block_is_checked`]).
fn runs(b: &Block) -> bool {
    match b.lang() {
        "sh" => b.info[1..].iter().all(|t| Need::from_tag(t).is_some() || matches!(t.as_str(), "gpu" | "cargo" | "install")),
        "python" => b.tag() == "xehe" || (!b.info[1..].is_empty() && b.info[1..].iter().all(|t| Need::from_tag(t).is_some())),
        _ => false,
    }
}

/// An environment in which the optional parts are absent whether installed or not: python
/// modules shadowed by packages that raise `ModuleNotFoundError`, the data set's variable
/// pointing at an empty folder. A block that needs one of them without its tag fails there.
struct Hidden {
    dir: common::ScratchDir,
}

impl Hidden {
    fn new() -> Hidden {
        let dir = common::scratch_dir("guide-hidden");
        for m in NEEDS.iter().flat_map(|n| n.modules()) {
            let pkg = dir.join("python").join(m);
            std::fs::create_dir_all(&pkg).expect("hidden module");
            std::fs::write(pkg.join("__init__.py"), format!("raise ModuleNotFoundError(\"No module named '{m}' (hidden by tests/guide.rs)\", name='{m}')\n")).expect("hidden module");
        }
        std::fs::create_dir_all(dir.join("no-fashion-mnist")).expect("empty folder");
        Hidden { dir }
    }

    fn apply(&self, cmd: &mut Command) {
        let mut path = self.dir.join("python").into_os_string();
        if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(old);
        }
        cmd.env("PYTHONPATH", path).env(xehe::apps::fashion_mnist::DIR_VARIABLE, self.dir.join("no-fashion-mnist"));
    }
}

/// Run the `sh` and `python` blocks of every page, in order per page, in one `bash` each; a
/// block whose needs are not `present` is skipped with the reason and the command that installs
/// what it needs. Returns the failures.
fn run_blocks(present: &dyn Fn(Need) -> bool, hidden: Option<&Hidden>) -> Vec<String> {
    let mut failures = Vec::new();
    for page in pages() {
        let mut script = String::from("set -euo pipefail\nexec 2>&1\nxehe() { \"$XEHE_BIN\" \"$@\"; }\n");
        let mut ran = 0;
        for b in blocks(&page).into_iter().filter(runs) {
            let at = format!("{page}:{}", b.line);
            let skip = match block_needs(&b) {
                Err(why) => Some(why.to_string()),
                Ok(needs) => {
                    let missing: Vec<Need> = needs.into_iter().filter(|n| !present(*n)).collect();
                    (!missing.is_empty()).then(|| {
                        let what: Vec<&str> = missing.iter().map(|n| n.name()).collect();
                        let how: Vec<&str> = missing.iter().map(|n| n.install()).collect();
                        let here = if hidden.is_some() { "hidden" } else { "not installed" };
                        format!("needs {} ({here}): {}", what.join(", "), how.join("; "))
                    })
                }
            };
            if let Some(why) = skip {
                let _ = writeln!(std::io::stderr().lock(), "SKIP {at} ({why}): {}", b.first_line().trim());
                continue;
            }
            script += &format!("echo '>>> {at}'\n");
            if b.lang() == "python" {
                script += &format!("python3 - <<'XEHE_GUIDE_PY'\n{}XEHE_GUIDE_PY\n", b.body);
            } else {
                script += &b.body;
            }
            ran += 1;
        }
        if ran == 0 {
            continue;
        }
        let dir = mirror(&page.replace('/', "-"));
        let start = std::time::Instant::now();
        let mut cmd = Command::new("bash");
        cmd.arg("-c").arg(&script).current_dir(&dir).env("XEHE_BIN", env!("CARGO_BIN_EXE_xehe")).env_remove("XEHE_DEVICE");
        if let Some(h) = hidden {
            h.apply(&mut cmd);
        }
        let out = cmd.output().expect("run bash");
        let text = String::from_utf8_lossy(&out.stdout);
        println!("{page}: {ran} block(s) in {:.1} s", start.elapsed().as_secs_f64());
        if !out.status.success() {
            let last = text.lines().rev().find(|l| l.starts_with(">>> ")).unwrap_or("(before the first block)");
            failures.push(format!("{page}: failed ({}) in block {}:\n{text}", out.status, &last[4.min(last.len())..]));
        }
        drop(dir); // the scratch guard removes the links (not what they point to)
    }
    failures
}

/// The `sh` and `python` blocks of every page with what is installed here: those whose needs are
/// missing print SKIP with the install command.
#[test]
fn shell_and_python_blocks_run() {
    let present: Vec<Need> = NEEDS.into_iter().filter(|n| n.present()).collect();
    let failures = run_blocks(&|n| present.contains(&n), None);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The same blocks as on a machine with nothing but the build ([`Hidden`]): the blocks that need
/// something are skipped, and every other block must pass without it, so that a block needing
/// the data set, numpy, SEAL or PyTorch cannot go untagged while CI has them installed.
#[test]
fn shell_and_python_blocks_run_with_nothing_installed() {
    let hidden = Hidden::new();
    let failures = run_blocks(&|_| false, Some(&hidden));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// GitHub's anchor of a heading: lower case, spaces to `-`, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every relative link of the README and the guide names a file that exists, and an anchor
/// one of its headings.
#[test]
fn links_resolve() {
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root().join(&page)).unwrap();
        let dir = root().join(&page).parent().unwrap().to_path_buf();
        let mut in_block = false;
        for (i, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                in_block = !in_block;
            }
            if in_block {
                continue;
            }
            for (at, _) in line.match_indices("](") {
                let Some(target) = line[at + 2..].split(')').next() else { continue };
                if target.starts_with("http") || target.is_empty() {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let path = if file.is_empty() { root().join(&page) } else { dir.join(file) };
                if !path.exists() {
                    failures.push(format!("{page}:{}: {target}: no such file", i + 1));
                    continue;
                }
                if !anchor.is_empty() {
                    let body = std::fs::read_to_string(&path).unwrap_or_default();
                    let found = body
                        .lines()
                        .filter_map(|l| l.trim_start_matches('#').strip_prefix(' ').filter(|_| l.starts_with('#')))
                        .any(|h| slug(h) == anchor);
                    if !found {
                        failures.push(format!("{page}:{}: {target}: no heading with that anchor", i + 1));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
