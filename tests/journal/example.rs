//! The `durable_approval` example as a person runs it, one process per
//! command, on SQLite and on PostgreSQL: start, exit, approve from another
//! process, resume; resume again runs nothing; bad journals and bad ids.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

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

fn ledger_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn walkthrough(journal: &str, dir: &Path) {
    let ledger = dir.join("ledger.txt");
    // start: the read-only call runs, the deletion waits.
    let (code, lines) = example(journal, &ledger, &["start"]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    let list = lines.iter().find(|l| l["call_id"] == "call_list").unwrap();
    assert_eq!(list["outcome"], "ok");
    let delete = lines
        .iter()
        .find(|l| l["call_id"] == "call_delete")
        .unwrap();
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
    let (_, lines) = example(journal, &ledger, &["start"]);
    let second = lines
        .iter()
        .find(|l| l["call_id"] == "call_delete")
        .unwrap();
    let second_id = second["approval_id"].as_str().unwrap().to_owned();
    let (code, lines) = example(journal, &ledger, &["deny", &second_id, "keep", "it"]);
    assert_eq!((code, lines[0]["decision"].as_str()), (0, Some("deny")));
    let (_, lines) = example(journal, &ledger, &["resume"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "denied");
    assert!(lines[0]["text"].as_str().unwrap().contains("keep it"));
    assert_eq!(ledger_lines(&ledger).len(), 1);
    // A third, approved, killed mid-body: answered interrupted, never run
    // again.
    let (_, lines) = example(journal, &ledger, &["start"]);
    let third = lines
        .iter()
        .find(|l| l["call_id"] == "call_delete")
        .unwrap();
    let third_id = third["approval_id"].as_str().unwrap().to_owned();
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
    let (code, lines) = example(&url, &ledger, &["answers"]);
    assert_eq!(code, 1);
    let error = lines[0]["error"].as_str().unwrap();
    assert!(error.contains(garbage.to_str().unwrap()), "{error}");
    // A directory that does not exist.
    let missing = format!("sqlite://{}", dir.join("no/such/dir/j.db").display());
    let (code, lines) = example(&missing, &ledger, &["start"]);
    assert_eq!(code, 1);
    assert!(lines[0]["error"].as_str().unwrap().contains("no/such/dir"));
    // Another application's database.
    let foreign = dir.join("shop.db");
    let conn_url = format!("sqlite://{}", foreign.display());
    let shop = rusqlite::Connection::open(&foreign).unwrap();
    shop.execute(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)",
        [],
    )
    .unwrap();
    drop(shop);
    let (code, lines) = example(&conn_url, &ledger, &["answers"]);
    assert_eq!(code, 1);
    let error = lines[0]["error"].as_str().unwrap();
    assert!(error.contains("not a tinyagents journal"), "{error}");
    assert!(error.contains(foreign.to_str().unwrap()), "{error}");
    // A journal written by a newer schema: refused, naming both versions.
    let newer = dir.join("newer.db");
    let url = format!("sqlite://{}", newer.display());
    let (code, _) = example(&url, &ledger, &["answers"]);
    assert_eq!(code, 0);
    let db = rusqlite::Connection::open(&newer).unwrap();
    db.execute(
        "UPDATE journal_meta SET value = '99' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    drop(db);
    let (code, lines) = example(&url, &ledger, &["answers"]);
    assert_eq!(code, 1);
    let error = lines[0]["error"].as_str().unwrap();
    assert!(error.contains("99") && error.contains(" 1"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}
