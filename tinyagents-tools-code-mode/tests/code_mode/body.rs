//! The program is the body of an async function, compiled as exactly that:
//! text that closes the body and goes on outside it is refused before
//! anything runs, and errors name the program's own lines and columns.

use tinyagents_tools_code_mode::{Position, ProgramError};

use crate::model::{answer, assert_repair_error, program_error};
use crate::tools::setup;

/// Programs that close the function body early and go on outside it: the
/// first two as a wrapper pasted around the text would run them (the
/// first sets a global, the second calls a tool), the third as a module
/// or any wrapper ending in `}` would.
const CLOSES_EARLY: [&str; 4] = [
    "return 1; }); globalThis.x = true; (async function () { return 2;",
    r#"return 1; }); tools.tag({ name: "outside" }); (async function () { return 2;"#,
    r#"return 1; } tools.tag({ name: "outside" }); {"#,
    "return 1; }\ntools.tag({ name: \"outside\" });\nexport const x = async function () {",
];

#[tokio::test]
async fn text_that_closes_the_body_early_is_refused_and_nothing_outside_it_runs() {
    let s = setup();
    for code in CLOSES_EARLY {
        let r = answer(&s.outer, &s.run("r"), code).await;
        assert_eq!(r.outcome(), "invalid_arguments", "{code}: {}", r.text());
        assert!(
            matches!(
                program_error(&r),
                ProgramError::ClosesEarly | ProgramError::Syntax { .. }
            ),
            "{code}: {:?}",
            program_error(&r)
        );
        assert!(
            s.ledger.lines().is_empty(),
            "{code}: {:?}",
            s.ledger.lines()
        );
        assert!(s.recorder.events().is_empty(), "{code}");
    }
    // The third and fourth parse as modules with the function's `}` in
    // the middle: only the body's labeled block refuses them.
    let r = answer(&s.outer, &s.run("r"), CLOSES_EARLY[2]).await;
    assert_eq!(program_error(&r), ProgramError::ClosesEarly);
    assert_repair_error(&r, "invalid_arguments", "a `}` closes the body");
}

#[tokio::test]
async fn a_stray_closing_brace_is_named_as_closing_the_body_not_as_an_error_past_the_end() {
    let s = setup();
    // Each parses as a module only up to the line that closes the function:
    // the engine stops past the program's end, at a `}` the program did
    // not write.
    for code in [
        "return 1; }",
        "return 1;\n}\n// done",
        "if (true) { tools.tag({ name: \"x\" }); } }",
    ] {
        let r = answer(&s.outer, &s.run("r"), code).await;
        assert_eq!(r.outcome(), "invalid_arguments", "{code:?}: {}", r.text());
        assert_eq!(program_error(&r), ProgramError::ClosesEarly, "{code:?}");
    }
    assert!(s.ledger.lines().is_empty(), "{:?}", s.ledger.lines());
}

#[tokio::test]
async fn a_program_holding_a_brace_finds_no_other_module_to_import() {
    let s = setup();
    // The program holds a `}`: it is refused or accepted in its own
    // module's parse, and no module of a check exists beside it.
    let code = r#"if (true) {}
const found = [];
for (const name of ["check", "body", "program_check", "std", "os"]) {
  try { await import(name); found.push(name); } catch (e) { found.push(e.name); }
}
return found;"#;
    let r = answer(&s.outer, &s.run("r"), code).await;
    let refused = serde_json::to_value(vec!["ReferenceError"; 5]).unwrap();
    assert_eq!(crate::model::program_result(&r), refused);
}

#[tokio::test]
async fn a_parse_error_is_at_the_programs_own_line_and_column() {
    let s = setup();
    // (program, line, column): the column of the token the parser stopped
    // at, or just past the program's end when the program ends too soon.
    let cases: [(&str, u32, u32); 7] = [
        ("let x = ;", 1, 9),
        // Columns count characters, whatever their UTF-8 length.
        ("const s = \"é🦀\"; let x = ;", 1, 25),
        ("return \"é🦀\" + (1", 1, 17),
        ("return (1", 1, 10),
        ("const a = 1;\nreturn a +", 2, 11),
        ("const a = 1;\nconst b = (a +;\nreturn b;", 2, 15),
        ("return [1,\n  2", 2, 4),
    ];
    for (code, line, column) in cases {
        let r = answer(&s.outer, &s.run("r"), code).await;
        assert_eq!(r.outcome(), "invalid_arguments", "{code:?}: {}", r.text());
        match program_error(&r) {
            ProgramError::Syntax { at, .. } => {
                assert_eq!(at, Position { line, column }, "{code:?}");
            }
            other => panic!("{code:?}: {other:?}"),
        }
        assert!(
            r.text().contains(&format!(
                "the program does not parse: line {line}, column {column}"
            )),
            "{code:?}: {}",
            r.text()
        );
    }
}

#[tokio::test]
async fn an_uncaught_error_names_the_line_and_column_it_was_thrown_at() {
    let s = setup();
    let cases: [(&str, Option<Position>); 5] = [
        (
            "const a = 1; null.x;",
            Some(Position {
                line: 1,
                column: 14,
            }),
        ),
        (
            "const a = 1;\nfunction f() {\n  null.y;\n}\nreturn f();",
            Some(Position { line: 3, column: 3 }),
        ),
        // A refused call's `ToolError`, at the name of the method called.
        (
            "const x = 1;\n  tools.lookup({ id: 0 });",
            Some(Position { line: 2, column: 9 }),
        ),
        (
            "const s = \"é🦀\"; null.x;",
            Some(Position {
                line: 1,
                column: 17,
            }),
        ),
        // A thrown string has no position.
        ("throw 'plain';", None),
    ];
    for (code, at) in cases {
        let r = answer(&s.outer, &s.run("r"), code).await;
        assert_eq!(r.outcome(), "tool", "{code:?}: {}", r.text());
        match program_error(&r) {
            ProgramError::Threw { at: got, .. } => assert_eq!(got, at, "{code:?}"),
            other => panic!("{code:?}: {other:?}"),
        }
        if let Some(at) = at {
            assert!(r.text().ends_with(&format!("({at})")), "{}", r.text());
        }
    }
}

#[tokio::test]
async fn the_programs_own_labels_and_breaks_are_its_own() {
    let s = setup();
    let code = "done: { if (true) break done; return 0; }\nouter: for (const i of [1, 2]) { for (;;) { continue outer; } }\nreturn 1;";
    assert_eq!(
        crate::model::program_result(&answer(&s.outer, &s.run("r"), code).await),
        1
    );
    // A `break` to a label the program does not have is its own syntax
    // error, at its own place, not a `}` closing the body.
    let r = answer(
        &s.outer,
        &s.run("r"),
        "const a = 1;\nbreak nowhere;\nreturn a;",
    )
    .await;
    match program_error(&r) {
        ProgramError::Syntax { at, .. } => assert_eq!(at, Position { line: 2, column: 7 }),
        other => panic!("{other:?}"),
    }
}
