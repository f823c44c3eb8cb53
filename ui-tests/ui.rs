//! Compile-fail cases: every compile error the crates promise is locked here
//! with its exact message (`cases/fail/*.stderr`). The compile-pass cases
//! (`cases/pass/`) are test targets of their own, built with the workspace.
//!
//! Regenerate a `.stderr` with `TRYBUILD=overwrite cargo test -p
//! tinyagents-tools-ui-tests --test ui`, then read it before committing.
//! The cases of a build without the core's `isolated` feature run with
//! `--no-default-features` (CI runs both).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

#[test]
fn ui() {
    let cases = fail_cases();
    // Written past the test harness's capture: trybuild's first build in a
    // target directory compiles every dependency again (its cases are
    // built with `--cfg trybuild`), which takes minutes.
    let _ = writeln!(
        std::io::stderr(),
        "ui-tests: checking {} compile-fail cases with trybuild, in a project of its own; \
         its first build checks every dependency again (a few minutes on 2 cores)",
        cases.len()
    );
    let t = trybuild::TestCases::new();
    for case in &cases {
        t.compile_fail(case);
    }
}

/// The compile-fail cases this build checks (paths relative to the crate),
/// sorted.
fn fail_cases() -> Vec<PathBuf> {
    files(&root().join("cases/fail"), "rs")
        .into_iter()
        .filter(|case| built_for(case))
        .map(|case| Path::new("cases/fail").join(case.file_name().unwrap()))
        .collect()
}

/// Whether `case` runs in this build: the `isolated_*` cases need the
/// core's `isolated` feature (this crate's default), and
/// `isolated_without_feature` needs it off (`--no-default-features`).
fn built_for(case: &Path) -> bool {
    let stem = case.file_stem().unwrap().to_str().unwrap();
    match stem {
        "isolated_without_feature" => !cfg!(feature = "isolated"),
        _ if stem.starts_with("isolated_") => cfg!(feature = "isolated"),
        _ => true,
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The files of `dir` whose extension is `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

/// The identifiers of `text`, in order (an identifier: ASCII letters,
/// digits and `_`, not starting with a digit).
fn identifiers(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut start = None;
    let mut out = Vec::new();
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (start, is_ident(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                if !text[s..i].starts_with(|c: char| c.is_ascii_digit()) {
                    out.push((s, &text[s..i]));
                }
                start = None;
            }
            _ => {}
        }
    }
    out.into_iter()
}

/// The names the generated code gives its own bindings and hidden items
/// (`__state`, `__tinyagents_run`, the `__tinyagents_arg0` of a
/// destructured parameter, ...): every `__` identifier the macro crate's
/// source writes, but for paths into the runtime (`#krate::__collect_tool`)
/// and the runtime's items it names in comments ([`RUNTIME_ONLY`]). (The type parameters of its impls, `AnyState`
/// and `AnyContext`, are named to be read: `Inject<AnyState, AnyContext>`.)
fn generated_names() -> BTreeSet<String> {
    fn walk(dir: &Path, names: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, names);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (at, ident) in identifiers(&text) {
                    if ident.starts_with("__")
                        && !text[..at].ends_with("::")
                        && !RUNTIME_ONLY.contains(&ident)
                    {
                        names.insert(ident.to_owned());
                    }
                }
            }
        }
    }
    let mut names = BTreeSet::new();
    walk(&root().join("../tinyagents-tools-macros/src"), &mut names);
    names
}

/// The runtime's items for generated code (`tinyagents_tools::tool_macro`,
/// the macros `__collect_tool` and `__isolated_tool`): a message may name them only where
/// rustc says which item a bound or an expansion comes from, or where a
/// file is.
const RUNTIME_ONLY: &[&str] = &["tool_macro", "__collect_tool", "__isolated_tool"];

/// The lines where rustc names the trait of a bound not met, the item a
/// requirement or an expansion comes from, or a file: the only lines that
/// may name a [`RUNTIME_ONLY`] item.
fn names_an_origin(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("-->")
        || line.starts_with("= help: the trait `")
        || line.starts_with("note: required by a bound in `")
        || line.starts_with("= note: required for `")
        || line.starts_with("note: required for `")
        || line.starts_with("= note: this error originates in the macro `")
}

/// The compile errors that are rustc's own text naming a runtime item:
/// the case, the error's first words. Two `#[tools]` blocks of one type
/// with the same `block = N` are expanded apart, so only rustc sees the
/// conflict, between two impls of the runtime's traits.
const RUSTC_TEXT: &[(&str, &str)] = &[(
    "tools_block_number_twice",
    "error[E0119]: conflicting implementations of trait `tinyagents_tools::tool_macro::",
)];

/// What `stderr` (the file `case`'s) shows that it must not: each problem
/// with its line.
fn leaks(case: &str, stderr: &str, generated: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in stderr.lines().enumerate() {
        for (_, ident) in identifiers(line) {
            if generated.contains(ident) || ident.starts_with("__tinyagents") {
                found.push(format!(
                    "line {}: the generated name `{ident}`: {line}",
                    n + 1
                ));
            }
            let exempt = RUSTC_TEXT
                .iter()
                .any(|(c, start)| *c == case && line.starts_with(start));
            if RUNTIME_ONLY.contains(&ident) && !names_an_origin(line) && !exempt {
                found.push(format!(
                    "line {}: the runtime item `{ident}`: {line}",
                    n + 1
                ));
            }
        }
    }
    found
}

#[test]
fn the_generated_names_are_read_from_the_macro() {
    let names = generated_names();
    for known in [
        "__state",
        "__runtime",
        "__arguments",
        "__tinyagents_run",
        "__tinyagents_module_item",
    ] {
        assert!(names.contains(known), "`{known}` not found in {names:?}");
    }
    assert!(!names.contains("__collect_tool"), "{names:?}");
    assert!(!names.contains("__isolated_tool"), "{names:?}");
}

#[test]
fn a_leaked_name_is_found_and_an_origin_note_is_not() {
    let generated = generated_names();
    let leaked = "error[E0277]: the trait bound `__state: Inject<S, C>` is not satisfied\n\
                  help: consider `tinyagents_tools::tool_macro::input_schema`\n\
                  note: `__tinyagents_arg0` is moved here\n";
    let found = leaks("some_case", leaked, &generated);
    assert_eq!(found.len(), 3, "{found:#?}");
    let fine = "error: `Query` cannot be a tool's argument struct\n\
                \x20  = note: required for `Query` to implement `tinyagents_tools::tool_macro::ToolArgument`\n\
                note: required by a bound in `tinyagents_tools::tool_macro::input_schema`\n\
                \x20 --> $WORKSPACE/tinyagents-tools/src/tool_macro/mod.rs\n\
                \x20  | _serde::__private229::de\n";
    assert_eq!(leaks("some_case", fine, &generated), Vec::<String>::new());
}

#[test]
fn no_compile_error_shows_the_macros_generated_names() {
    let generated = generated_names();
    let stderrs = files(&root().join("cases/fail"), "stderr");
    assert!(stderrs.len() >= 30, "only {} .stderr files", stderrs.len());
    let mut found = Vec::new();
    for path in &stderrs {
        let case = path.file_stem().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        for leak in leaks(case, &text, &generated) {
            found.push(format!("{case}.stderr {leak}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_guide_table_lists_every_compile_fail_case() {
    // The page's introduction names the cases about every fn, its table
    // one row per rule.
    let page = root().join("../tinyagents-tools/docs/compile-errors.md");
    let table = std::fs::read_to_string(&page).unwrap();
    let mut missing = Vec::new();
    for path in files(&root().join("cases/fail"), "rs") {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let listed = table.contains(&format!("`{stem}`"))
            || (stem.starts_with("secret_") && table.contains("`secret_*`"));
        if !listed {
            missing.push(stem);
        }
    }
    assert!(
        missing.is_empty(),
        "not in the compile-error table of {}: {missing:?}",
        page.display()
    );
}
