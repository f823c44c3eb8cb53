//! Item 4: a call that needs approval pauses the program; with the
//! journal the pause survives a restart, and the program resumes by
//! replay without running a completed side effect again.

use tinyagents_tools::journal::Journal;
use tinyagents_tools_code_mode::{ProgramPause, SandboxLimits};

use crate::model::{program_result, run_code_reply, turn};
use crate::tools::setup_with;

const PROGRAM: &str = r#"
const a = tools.tag({ name: "before" });
const d = tools.delete_item({ id: 7 });
const b = tools.tag({ name: "after" });
return [a, d, b].join(" | ");
"#;

#[tokio::test]
async fn an_approval_pauses_the_program_and_replay_resumes_it_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("journal.db").display());
    let reply = run_code_reply("call_9", PROGRAM);

    // First process: the program runs up to the call that needs approval.
    let journal = Journal::open(&url).await.unwrap();
    let first = setup_with(SandboxLimits::default(), None, Some(&journal));
    let log = turn(&first.outer, &first.run("run-a"), 1, &reply).await;
    let pause = ProgramPause::of(&log.results[0]).expect("the program paused");
    assert_eq!(pause.outcome, "pending_approval");
    assert_eq!(pause.pending.len(), 1);
    assert_eq!(pause.pending[0].call_id, "call_9/2");
    assert_eq!(pause.pending[0].tool, "delete_item");
    assert_eq!(pause.calls, 2);
    assert_eq!(first.ledger.lines(), ["tag before call_9/1"]);
    let approval = pause.pending[0].approval_id.clone();
    drop((first, journal));

    // Delivered again before anyone decides: still paused, nothing re-run.
    let journal = Journal::open(&url).await.unwrap();
    let again = setup_with(SandboxLimits::default(), None, Some(&journal));
    let log = turn(&again.outer, &again.run("run-a"), 1, &reply).await;
    assert_eq!(
        ProgramPause::of(&log.results[0]).unwrap().approval_ids(),
        [approval.as_str()]
    );
    assert!(again.ledger.lines().is_empty());
    drop((again, journal));

    // A person approves, from another process.
    Journal::open(&url)
        .await
        .unwrap()
        .approve(&approval)
        .await
        .unwrap();

    // A fresh process delivers the same run_code call: replay.
    let journal = Journal::open(&url).await.unwrap();
    let second = setup_with(SandboxLimits::default(), None, Some(&journal));
    let log = turn(&second.outer, &second.run("run-a"), 1, &reply).await;
    let value = program_result(&log.results[0]);
    assert_eq!(value, "#before | item 7 deleted | #after");
    // `tag before` came from the journal: its body did not run again.
    assert_eq!(
        second.ledger.lines(),
        ["delete 7 call_9/2", "tag after call_9/3"]
    );

    // Delivered once more: everything answered from the journal.
    let third = setup_with(SandboxLimits::default(), None, Some(&journal));
    let log = turn(&third.outer, &third.run("run-a"), 1, &reply).await;
    assert_eq!(program_result(&log.results[0]), value);
    assert!(third.ledger.lines().is_empty());
}

#[tokio::test]
async fn a_denied_call_reaches_the_program_as_a_typed_error() {
    let journal = Journal::open("memory:").await.unwrap();
    let s = setup_with(SandboxLimits::default(), None, Some(&journal));
    let code =
        r#"try { tools.delete_item({ id: 3 }); return "deleted"; } catch (e) { return e.kind; }"#;
    let reply = run_code_reply("c1", code);
    let log = turn(&s.outer, &s.run("r"), 1, &reply).await;
    let pause = ProgramPause::of(&log.results[0]).unwrap();
    journal
        .deny(&pause.pending[0].approval_id, "not today")
        .await
        .unwrap();
    let log = turn(&s.outer, &s.run("r"), 1, &reply).await;
    assert_eq!(program_result(&log.results[0]), "denied");
    assert!(s.ledger.lines().is_empty());
}
