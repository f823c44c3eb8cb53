//! Compile-fail and compile-pass cases: every compile error the crates promise
//! is locked here with its exact message (`cases/fail/*.stderr`).
//!
//! Regenerate a `.stderr` with `TRYBUILD=overwrite cargo test -p
//! tinyagents-tools-ui-tests`, then read it before committing. The cases
//! of a build without the core's `isolated` feature run with
//! `--no-default-features` (CI runs both).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for (dir, fail) in [("cases/fail", true), ("cases/pass", false)] {
        for case in cases(dir) {
            match (fail, built_for(&case)) {
                (_, false) => {}
                (true, true) => t.compile_fail(&case),
                (false, true) => t.pass(&case),
            }
        }
    }
}

/// The `.rs` cases of `dir` (relative to the crate), sorted.
fn cases(dir: &str) -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<_> = std::fs::read_dir(root.join(dir))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| std::path::Path::new(dir).join(path.file_name().unwrap()))
        .collect();
    cases.sort();
    cases
}

/// Whether `case` runs in this build: the `isolated_*` cases need the
/// core's `isolated` feature (this crate's default), and
/// `isolated_without_feature` needs it off (`--no-default-features`).
fn built_for(case: &std::path::Path) -> bool {
    let stem = case.file_stem().unwrap().to_str().unwrap();
    match stem {
        "isolated_without_feature" => !cfg!(feature = "isolated"),
        _ if stem.starts_with("isolated_") => cfg!(feature = "isolated"),
        _ => true,
    }
}

/// Names only the macro's generated code uses; a message a user reads must
/// never show them (as whole identifiers: serde's own `__private229` is
/// serde's, not ours).
const GENERATED_NAMES: &[&str] = &["__private", "__S", "__C", "__tinyagents_arg0"];

/// True when `name` occurs in `text` as a whole identifier.
fn shows_identifier(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

#[test]
fn the_identifier_scan_finds_whole_names_only() {
    assert!(shows_identifier("the trait `Inject<__S, __C>`", "__S"));
    assert!(shows_identifier(
        "tinyagents_tools::__private::input_schema",
        "__private"
    ));
    assert!(!shows_identifier("_serde::__private229::de", "__private"));
    assert!(!shows_identifier("__Something", "__S"));
}

#[test]
fn no_compile_error_shows_the_macros_generated_names() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/fail");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            let text = std::fs::read_to_string(&path).unwrap();
            for name in GENERATED_NAMES {
                assert!(
                    !shows_identifier(&text, name),
                    "{} shows `{name}`:\n{text}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 30,
        "only {checked} .stderr files found in {}",
        dir.display()
    );
}

#[test]
fn the_guide_table_lists_every_compile_fail_case() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The page's introduction names the cases about every fn, its table
    // one row per rule.
    let table =
        std::fs::read_to_string(root.join("../tinyagents-tools/docs/compile-errors.md")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("cases/fail")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let listed = table.contains(&format!("`{stem}`"))
                || (stem.starts_with("secret_") && table.contains("`secret_*`"));
            if !listed {
                missing.push(stem);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in the compile-error table of tinyagents-tools/docs/compile-errors.md: {missing:?}"
    );
}
