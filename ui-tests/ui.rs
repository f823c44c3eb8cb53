//! Compile-fail and compile-pass cases: every compile error the crates promise
//! is locked here with its exact message (`cases/fail/*.stderr`).
//!
//! Regenerate a `.stderr` with `TRYBUILD=overwrite cargo test -p
//! tinyagents-tools-ui-tests`, then read it before committing.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("cases/fail/*.rs");
    t.pass("cases/pass/*.rs");
}
