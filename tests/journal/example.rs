//! The `durable_approval` example as a person runs it, one process per
//! command, on SQLite and on PostgreSQL: start, exit, approve from another
//! process, resume; resume again runs nothing; bad journals and bad ids.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::crash::ledger_lines;

/// Runs one command; its exit code and its stdout, a JSON value a line.
fn example(journal: &str, ledger: &Path, args: &[&str]) -> (i32, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_durable-approval"))
        .args(["--journal", journal, "--ledger", ledger.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

/// Runs one command that cannot open its journal: it exits 1; the error it
/// printed.
fn open_error(journal: &str, ledger: &Path, args: &[&str]) -> String {
    let (code, lines) = example(journal, ledger, args);
    assert_eq!(code, 1, "{lines:?}");
    lines[0]["error"].as_str().unwrap().to_owned()
}

/// Runs `sql` on the SQLite database at `path`, as another program would.
fn execute_sql(path: &Path, sql: &str) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute(sql, []).unwrap();
}

/// The line that answers the call `call_id`.
fn line_of<'a>(lines: &'a [Value], call_id: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no {call_id} in {lines:?}"))
}

/// Runs `start` again: the id of the approval its deletion waits for.
fn start_another(journal: &str, ledger: &Path) -> String {
    let (_, lines) = example(journal, ledger, &["start"]);
    let delete = line_of(&lines, "call_delete");
    delete["approval_id"].as_str().unwrap().to_owned()
}

fn walkthrough(journal: &str, dir: &Path) {
    let ledger = dir.join("ledger.txt");
    // start: the read-only call runs, the deletion waits.
    let (code, lines) = example(journal, &ledger, &["start"]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(line_of(&lines, "call_list")["outcome"], "ok");
    let delete = line_of(&lines, "call_delete");
    assert_eq!(delete["outcome"], "pending_approval");
    let approval = delete["approval_id"].as_str().unwrap().to_owned();
    assert!(ledger_lines(&ledger).is_empty());
    // Nothing to resume before a decision.
    let (code, lines) = example(journal, &ledger, &["resume"]);
    assert_eq!((code, lines.len()), (0, 0), "{lines:?}");
    // approve, from another process.
    let (code, lines) = example(journal, &ledger, &["approve", &approval]);
    assert_eq!(code, 0);
    assert_eq!(lines[0]["approval_id"], approval.as_str());
    assert_eq!(lines[0]["decision"], "approve");
    // An already decided or unknown id: {"error"}, exit 2.
    let (code, lines) = example(journal, &ledger, &["deny", &approval, "changed my mind"]);
    assert_eq!(code, 2);
    assert!(
        lines[0]["error"]
            .as_str()
            .unwrap()
            .contains("already decided")
    );
    let (code, lines) = example(journal, &ledger, &["approve", "apr_nope"]);
    assert_eq!(code, 2);
    assert!(lines[0]["error"].is_string());
    // resume runs exactly the approved call, once.
    let (code, lines) = example(journal, &ledger, &["resume"]);
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["call_id"], "call_delete");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["text"], "note 7 deleted");
    assert_eq!(ledger_lines(&ledger), ["call_delete"]);
    // resume again runs nothing.
    let (code, lines) = example(journal, &ledger, &["resume"]);
    assert_eq!((code, lines.len()), (0, 0), "{lines:?}");
    assert_eq!(ledger_lines(&ledger).len(), 1);
    // A second run, denied: answered with the reason, never run.
    let second_id = start_another(journal, &ledger);
    let (code, lines) = example(journal, &ledger, &["deny", &second_id, "keep", "it"]);
    assert_eq!((code, lines[0]["decision"].as_str()), (0, Some("deny")));
    let (_, lines) = example(journal, &ledger, &["resume"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "denied");
    assert!(lines[0]["text"].as_str().unwrap().contains("keep it"));
    assert_eq!(ledger_lines(&ledger).len(), 1);
    // A third, approved, killed mid-body: answered interrupted, never run
    // again.
    let third_id = start_another(journal, &ledger);
    example(journal, &ledger, &["approve", &third_id]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_durable-approval"))
        .args(["--journal", journal, "--ledger", ledger.to_str().unwrap()])
        .args(["resume", "--body-ms", "60000"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while ledger_lines(&ledger).len() < 2 {
        assert!(Instant::now() < deadline, "the body never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let (_, lines) = example(journal, &ledger, &["resume"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "interrupted");
    assert_eq!(ledger_lines(&ledger).len(), 2, "never run again");
    // answers: every journaled call, each answered once.
    let (code, lines) = example(journal, &ledger, &["answers"]);
    assert_eq!(code, 0);
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert!(lines.iter().all(|l| l["state"] == "answered"), "{lines:?}");
    let mut outcomes: Vec<&str> = lines
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    outcomes.sort();
    assert_eq!(outcomes, ["denied", "interrupted", "ok", "ok", "ok", "ok"]);
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tinyagents-example-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_example_walks_through_on_sqlite() {
    let dir = temp_dir("sqlite");
    let journal = format!("sqlite://{}", dir.join("notes.db").display());
    walkthrough(&journal, &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_example_walks_through_on_postgres() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let dir = temp_dir("postgres");
    walkthrough(pg.url(), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_journal_that_cannot_be_opened_exits_1_naming_the_file() {
    let dir = temp_dir("bad");
    let ledger = dir.join("ledger.txt");
    // Not a database: a clear error naming the file, no panic.
    let garbage = dir.join("notes.db");
    std::fs::write(
        &garbage,
        b"these are my notes, not a database, ".repeat(200),
    )
    .unwrap();
    let url = format!("sqlite://{}", garbage.display());
    let error = open_error(&url, &ledger, &["answers"]);
    assert!(error.contains(garbage.to_str().unwrap()), "{error}");
    // A directory that does not exist.
    let missing = format!("sqlite://{}", dir.join("no/such/dir/j.db").display());
    let error = open_error(&missing, &ledger, &["start"]);
    assert!(error.contains("no/such/dir"), "{error}");
    // Another application's database.
    let foreign = dir.join("shop.db");
    let conn_url = format!("sqlite://{}", foreign.display());
    execute_sql(
        &foreign,
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)",
    );
    let error = open_error(&conn_url, &ledger, &["answers"]);
    assert!(error.contains("not a tinyagents journal"), "{error}");
    assert!(error.contains(foreign.to_str().unwrap()), "{error}");
    // A journal written by a newer schema: refused, naming both versions.
    let newer = dir.join("newer.db");
    let url = format!("sqlite://{}", newer.display());
    let (code, _) = example(&url, &ledger, &["answers"]);
    assert_eq!(code, 0);
    execute_sql(
        &newer,
        "UPDATE journal_meta SET value = '99' WHERE key = 'schema_version'",
    );
    let error = open_error(&url, &ledger, &["answers"]);
    assert!(error.contains("99") && error.contains(" 1"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}
