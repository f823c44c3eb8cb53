//! The official Python MCP SDK's client (mcp 2.3, default mode, stdio)
//! against `examples/mcp_server --journal URL`, whose `write_note` waits
//! for a person's approval, decided from another process with the
//! `durable_approval` example (`tests/python/drive_durable_approvals.py`
//! drives both): on SQLite in one session and across a restart, on
//! PostgreSQL across two instances; and the same as tasks (protocol
//! 2026-07-28, the tasks extension declared through the SDK's client
//! extensions): the task waits naming its approval, a restarted server
//! completes it, a denial fails it, and two instances asked at once run it
//! once. The journal then says how many notes were written.
//!
//! The SDK is installed from PyPI into a virtual environment under
//! `~/.cache/tinyagents-tools/` (once), or taken from
//! `TINYAGENTS_TEST_PYTHON`, a Python that has `mcp` 2.3.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use tinyagents_tools::journal::{CallQuery, Journal};

/// The SDK version the driver is written against.
const SDK: &str = "2.3.0";

/// One installation at a time, within this test binary.
static INSTALL: Mutex<()> = Mutex::new(());

/// A Python with the SDK: `TINYAGENTS_TEST_PYTHON`, or a venv made here.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("TINYAGENTS_TEST_PYTHON") {
        return python.into();
    }
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let home = std::env::var_os("HOME").expect("HOME is set");
    let cache = Path::new(&home).join(".cache/tinyagents-tools");
    let venv = cache.join(format!("python-mcp-{SDK}"));
    let python = venv.join("bin/python");
    if python.exists() {
        return python;
    }
    std::fs::create_dir_all(&cache).unwrap();
    // Made beside, then moved in place: a half-made venv is never used.
    let making = cache.join(format!("python-mcp-{SDK}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&making);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&making)
        .status()
        .expect("python3 runs (the Python SDK tests need it)");
    assert!(made.success(), "python3 -m venv failed");
    let installed = Command::new(making.join("bin/pip"))
        .args(["install", "--quiet", &format!("mcp=={SDK}")])
        .status()
        .unwrap();
    assert!(installed.success(), "pip install mcp=={SDK} failed");
    std::fs::rename(&making, &venv).unwrap();
    python
}

/// Runs the driver's `scenario` against `journal`; panics with its output
/// when a check failed.
fn drive(scenario: &str, journal: &str) {
    let workspace = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/drive_durable_approvals.py");
    let out = Command::new(python())
        .arg(script)
        .arg(scenario)
        .arg(env!("CARGO_BIN_EXE_mcp-server"))
        .arg(env!("CARGO_BIN_EXE_durable-approval"))
        .arg(journal)
        .arg(workspace.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.ends_with("ok\n"),
        "the Python SDK driver failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// How many times `write_note` ran and was answered, as the journal says.
async fn notes_written(journal: &str) -> usize {
    let journal = Journal::open(journal).await.unwrap();
    journal
        .calls(&CallQuery::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.tool == "write_note")
        .filter(|r| r.answer.as_ref().is_some_and(|a| a.outcome == "ok"))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_waits_approves_and_repeats_its_call_across_a_restart_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let journal = format!("sqlite://{}", dir.path().join("notes.db").display());
    let url = journal.clone();
    tokio::task::spawn_blocking(move || drive("session", &url))
        .await
        .unwrap();
    // Once in the session, once after the restart; the denied one never.
    assert_eq!(notes_written(&journal).await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_asks_another_instance_which_runs_the_approved_call_once_on_postgres() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let url = pg.url().to_owned();
    tokio::task::spawn_blocking(move || drive("instances", &url))
        .await
        .unwrap();
    assert_eq!(notes_written(pg.url()).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_follows_a_task_that_waits_for_approval_across_a_restart_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let journal = format!("sqlite://{}", dir.path().join("notes.db").display());
    let url = journal.clone();
    tokio::task::spawn_blocking(move || drive("tasks", &url))
        .await
        .unwrap();
    // The approved task ran once, on the restarted server; the denied one never.
    assert_eq!(notes_written(&journal).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_asks_two_instances_at_once_about_a_task_which_runs_once_on_postgres() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let url = pg.url().to_owned();
    tokio::task::spawn_blocking(move || drive("task_instances", &url))
        .await
        .unwrap();
    assert_eq!(notes_written(pg.url()).await, 1);
}
