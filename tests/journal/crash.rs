//! The proof: processes killed with SIGKILL at random points of journaled
//! calls (before and after the `started` record, during the body, after the
//! body and before the answer), then resumed by a fresh process (for
//! PostgreSQL, by two at once). Every call id is answered exactly once, no
//! ledger line appears twice, a call killed mid-body is answered
//! `interrupted` and never run again, and nothing is lost.
//!
//! `TINYAGENTS_CRASH_RUNS` sets the number of runs per backend (default
//! 32); the figures are printed at the end of each test.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tinyagents_tools::journal::{CallKey, CallState, Journal};

/// Calls per run, and the pause around each step of a call in ms.
const CALLS: u32 = 4;
const PAUSE_MS: u64 = 60;

fn worker() -> Command {
    Command::new(env!("CARGO_BIN_EXE_journal-worker"))
}

/// A small deterministic generator (xorshift), seeded from the clock and
/// printed, so a failing run can be told apart.
struct Rng(u64);

impl Rng {
    fn new() -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1;
        eprintln!("crash test seed {seed}");
        Rng(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// What the test saw.
#[derive(Debug, Default)]
struct Figures {
    runs: u32,
    calls: u32,
    kills: u32,
    /// Calls found at each point when their process was killed (as far as
    /// the journal showed just after): not yet delivered (the process died
    /// before its batch), received, started before or after the side
    /// effect, answered.
    never_received: u32,
    killed_before_started: u32,
    killed_started_before_effect: u32,
    killed_after_effect_before_answer: u32,
    answered_before_kill: u32,
    interrupted: u32,
    duplicates: u32,
    lost: u32,
}

/// The lines of the ledger file at `path` (none before its first line).
pub(crate) fn ledger_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn runs() -> u32 {
    std::env::var("TINYAGENTS_CRASH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(32)
}

/// Runs the crash rounds against `url`; `resumers` fresh processes resume
/// each run at once.
async fn crash_rounds(url: &str, ledger: &Path, resumers: usize, tag: &str) -> Figures {
    let journal = Journal::open(url).await.unwrap();
    let mut rng = Rng::new();
    let mut figures = Figures::default();
    // One batch takes about (calls / 4 in flight) x (pause x 5 / 3).
    let span_ms = PAUSE_MS * 2 + 40;
    for round in 0..runs() {
        let run = format!("{tag}-{round}");
        figures.runs += 1;
        figures.calls += CALLS;
        let mut child = worker()
            .args([url, ledger.to_str().unwrap(), "work", &run])
            .args([CALLS.to_string(), PAUSE_MS.to_string()])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        // Once its batch has reached the journal (so a busy machine's slow
        // process start does not eat the window), kill it at a random point
        // from there to a little past the batch's end.
        let waiting = Instant::now();
        while child.try_wait().unwrap().is_none()
            && waiting.elapsed() < Duration::from_secs(10)
            && journal
                .call(&CallKey::new(run.as_str(), 1, "call-0"))
                .await
                .unwrap()
                .is_none()
        {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let delay = rng.below(span_ms + span_ms / 4);
        tokio::time::sleep(Duration::from_millis(delay)).await;
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            figures.kills += 1;
        }
        child.wait().unwrap();
        // Where each call was when its process died.
        let lines = ledger_lines(ledger);
        for i in 0..CALLS {
            let call = format!("call-{i}");
            let key = CallKey::new(run.as_str(), 1, call.as_str());
            let wrote = lines.iter().any(|l| *l == format!("{run} {call}"));
            match journal.call(&key).await.unwrap().map(|r| r.state) {
                None => figures.never_received += 1,
                Some(CallState::Received) => figures.killed_before_started += 1,
                Some(CallState::Started) if wrote => figures.killed_after_effect_before_answer += 1,
                Some(CallState::Started) => figures.killed_started_before_effect += 1,
                Some(_) => figures.answered_before_kill += 1,
            }
        }
        // Fresh processes resume every run with something to answer.
        let resumers: Vec<_> = (0..resumers)
            .map(|_| {
                worker()
                    .args([url, ledger.to_str().unwrap(), "resume"])
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut r in resumers {
            assert!(r.wait().unwrap().success(), "a resumer failed");
        }
    }
    // The calls the journal has no record of now run on redelivery, once
    // each. Counted now, not when the process was killed: a killed process
    // may have sent its last COMMIT, which PostgreSQL still applies after
    // the test looked (then the resumers answer that call).
    let mut unrecorded = 0;
    for round in 0..runs() {
        let run = format!("{tag}-{round}");
        for i in 0..CALLS {
            let call = format!("call-{i}");
            let key = CallKey::new(run.as_str(), 1, call.as_str());
            unrecorded += usize::from(journal.call(&key).await.unwrap().is_none());
        }
    }
    // The model delivers every run's calls again: answered from the
    // journal, nothing runs.
    let before = ledger_lines(ledger).len();
    for round in 0..runs() {
        let run = format!("{tag}-{round}");
        let out = worker()
            .args([url, ledger.to_str().unwrap(), "redeliver", &run])
            .arg(CALLS.to_string())
            .output()
            .unwrap();
        assert!(out.status.success());
        // A run whose calls were never recorded (killed before any write)
        // runs now, once: that is not a second run of anything.
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), CALLS as usize, "{text}");
    }
    let lines = ledger_lines(ledger);
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for line in &lines {
        *counts.entry(line.as_str()).or_default() += 1;
    }
    figures.duplicates = counts.values().filter(|n| **n > 1).map(|n| n - 1).sum();
    for round in 0..runs() {
        let run = format!("{tag}-{round}");
        for i in 0..CALLS {
            let call = format!("call-{i}");
            let key = CallKey::new(run.as_str(), 1, call.as_str());
            let Some(record) = journal.call(&key).await.unwrap() else {
                figures.lost += 1;
                continue;
            };
            let Some(answer) = record
                .answer
                .filter(|_| record.state == CallState::Answered)
            else {
                figures.lost += 1;
                continue;
            };
            let ran = counts
                .get(format!("{run} {call}").as_str())
                .copied()
                .unwrap_or(0);
            match answer.outcome.as_str() {
                // Answered ok: its body ran exactly once.
                "ok" => assert_eq!(ran, 1, "{run} {call} answered ok"),
                // May have run: at most once, and never again.
                "interrupted" => {
                    figures.interrupted += 1;
                    assert!(ran <= 1, "{run} {call} ran {ran} times");
                }
                other => panic!("{run} {call} answered {other}"),
            }
        }
    }
    // Only calls never recorded before run on redelivery, once each.
    assert_eq!(
        lines.len(),
        before + unrecorded,
        "the redelivery ran nothing twice"
    );
    eprintln!("crash test on {tag}: {figures:#?}");
    figures
}

fn temp_ledger(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tinyagents-crash-{tag}-{}.txt", std::process::id()))
}

fn assert_held(figures: &Figures) {
    assert_eq!(figures.duplicates, 0, "{figures:#?}");
    assert_eq!(figures.lost, 0, "{figures:#?}");
    assert!(figures.kills > 0, "{figures:#?}");
    // The kills landed inside calls, not only around them.
    let inside = figures.killed_started_before_effect + figures.killed_after_effect_before_answer;
    assert!(inside > 0, "no kill landed inside a call: {figures:#?}");
    assert!(figures.interrupted > 0, "{figures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_killed_processes_answer_every_call_once_and_run_no_side_effect_twice() {
    let dir = std::env::temp_dir().join(format!("tinyagents-crash-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("journal.db").display());
    let ledger = temp_ledger("sqlite");
    let started = Instant::now();
    let figures = crash_rounds(&url, &ledger, 1, "sqlite").await;
    eprintln!("in {:?}", started.elapsed());
    let _ = std::fs::remove_file(&ledger);
    let _ = std::fs::remove_dir_all(&dir);
    assert_held(&figures);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_killed_processes_resumed_by_two_at_once_answer_every_call_once() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let ledger = temp_ledger("postgres");
    let started = Instant::now();
    let figures = crash_rounds(pg.url(), &ledger, 2, "postgres").await;
    eprintln!("in {:?}", started.elapsed());
    let _ = std::fs::remove_file(&ledger);
    assert_held(&figures);
}
