//! Tasks that outlive their request: a failing store, leases, a session
//! client, the TTL, two instances on one PostgreSQL journal, a restart,
//! an instance that is gone, and the stores' own rules.

use super::*;

#[tokio::test]
async fn a_task_store_that_fails_is_an_internal_error_and_nothing_runs() {
    let server = instance(|b| b.task_store(Broken)).await;
    let refused = rpc(
        server.addr,
        "tools/call",
        json!({"name": "wait_for_cancel", "arguments": {}}),
        true,
    )
    .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        error_message(&refused).contains("the disk is full"),
        "{refused}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.probe.started.load(Ordering::SeqCst), 0);

    // A tool that escalates: its rounds work, its escalation is refused.
    let (_, round2) = alice_in_two_rounds(server.addr).await;
    assert_eq!(round2["error"]["code"], -32603, "{round2}");
}

#[tokio::test]
async fn a_running_task_renews_its_lease_and_stays_working_past_it() {
    // Two instances sharing one journal, each claiming for 300 ms at a time.
    let journal = Journal::new(MemoryJournal::new());
    let lease = Duration::from_millis(300);
    let a = {
        let journal = journal.clone();
        instance(move |b| b.journal_tasks(journal).task_lease(lease)).await
    };
    let b = instance(move |b| b.journal_tasks(journal).task_lease(lease)).await;
    let id = task_id(&call(a.addr, "wait_for_cancel", json!({})).await);
    reaches(&a.probe.started, 1).await;
    tokio::time::sleep(lease * 4).await;
    assert_eq!(get(b.addr, &id).await["status"], "working");
    rpc(b.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    reaches(&a.probe.cancelled, 1).await;
    assert_eq!(get(a.addr, &id).await["status"], "cancelled");
}

/// A client declaring the tasks extension at `initialize` (no per-request
/// `_meta`), on 2025-11-25.
#[derive(Clone)]
struct SessionClient;

impl ClientHandler for SessionClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("session-tasks", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

#[tokio::test]
async fn a_client_that_declared_the_extension_at_initialize_gets_tasks_over_stdio() {
    let server = McpServer::builder(ToolExecutor::builder(registry(), ()))
        .build(|| RunContext::builder(()).store(Probe::default()).build())
        .unwrap();
    let client = connect_to(server, SessionClient).await;
    let answer = client
        .call_tool_once(params(
            "slow_compute",
            json!({"seconds": 0, "label": "stdio"}),
        ))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = answer else {
        panic!("not a task: {answer:?}");
    };
    let id = created.task.task_id;
    let deadline = tokio::time::Instant::now() + HANG;
    let done = loop {
        let got = client
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .unwrap();
        if got.task.status() == TaskStatus::Completed {
            break got;
        }
        assert!(tokio::time::Instant::now() < deadline, "{got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let done = serde_json::to_value(done).unwrap();
    assert_eq!(text(&done["result"]), "computed stdio in 0 s");
}

#[tokio::test]
async fn a_task_is_kept_for_its_ttl_and_then_the_memory_store_may_forget_it() {
    let server = instance(|b| b.task_ttl(Duration::from_millis(400))).await;
    let created = call(server.addr, "slow_compute", json!({"seconds": 0})).await;
    assert_eq!(created["ttlMs"], 400);
    let id = task_id(&created);
    until(server.addr, &id, &["completed"]).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    // Past its time to live and ended: forgotten (the store sweeps when a
    // task is created).
    call(server.addr, "slow_compute", json!({"seconds": 0})).await;
    let gone = rpc(server.addr, "tasks/get", json!({"taskId": id}), true).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[tokio::test]
async fn two_stateless_instances_sharing_a_postgres_journal_share_their_tasks() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let a = {
        let journal = Journal::open(pg.url()).await.unwrap();
        instance(move |b| b.journal_tasks(journal)).await
    };
    let b = {
        let journal = Journal::open(pg.url()).await.unwrap();
        instance(move |b| b.journal_tasks(journal)).await
    };

    // Created on A, read and cancelled on B: A's body sees its token fire.
    let id = task_id(&call(a.addr, "wait_for_cancel", json!({})).await);
    reaches(&a.probe.started, 1).await;
    assert_eq!(get(b.addr, &id).await["status"], "working");
    let ack = rpc(b.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    reaches(&a.probe.cancelled, 1).await;
    assert_eq!(get(a.addr, &id).await["status"], "cancelled");
    assert_eq!(b.probe.started.load(Ordering::SeqCst), 0);

    // Created on A, answered on B: B runs the body again, A sees the end.
    let id = task_id(&call(a.addr, "confirm_delete", json!({"filename": "notes.txt"})).await);
    let waiting = until(b.addr, &id, &["input_required"]).await;
    assert_eq!(keys(&waiting["inputRequests"]), ["confirm"]);
    let answer =
        json!({"taskId": id, "inputResponses": {"confirm": accept(json!({"confirm": true}))}});
    let ack = rpc(b.addr, "tasks/update", answer, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until(a.addr, &id, &["completed", "failed"]).await;
    assert_eq!(text(&done["result"]), "Deleted notes.txt", "{done}");
    assert_eq!(get(b.addr, &id).await, done);

    // Created on B, ended there: A answers it too.
    let id = task_id(&call(b.addr, "slow_compute", json!({"seconds": 0, "label": "b"})).await);
    let done = until(a.addr, &id, &["completed"]).await;
    assert_eq!(text(&done["result"]), "computed b in 0 s");

    // The journal keeps them as records of the tasks' space, each ended,
    // never a run to resume.
    let journal = Journal::open(pg.url()).await.unwrap();
    let records = journal.records(TASKS_SPACE).all().await.unwrap();
    let statuses: Vec<&str> = records
        .iter()
        .map(|r| r.value["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.len(), 3, "{statuses:?}");
    assert!(
        statuses
            .iter()
            .all(|s| ["cancelled", "completed"].contains(s)),
        "{statuses:?}"
    );
    assert!(journal.runs_to_resume().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_restarted_server_still_answers_for_its_finished_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let first = {
        let journal = Journal::open(&url).await.unwrap();
        instance(move |b| b.journal_tasks(journal)).await
    };
    let id = task_id(
        &call(
            first.addr,
            "slow_compute",
            json!({"seconds": 0, "label": "kept"}),
        )
        .await,
    );
    let done = until(first.addr, &id, &["completed"]).await;
    drop(first);

    let journal = Journal::open(&url).await.unwrap();
    let second = instance(move |b| b.journal_tasks(journal)).await;
    let again = get(second.addr, &id).await;
    assert_eq!(again, done);
    assert_eq!(text(&again["result"]), "computed kept in 0 s");
}

/// A task record as an instance writes it when it starts a body, created
/// now.
fn working_task(task_id: &str, owner: &str, lease_until: i64) -> TaskRecord {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    serde_json::from_value(json!({
        "task_id": task_id,
        "tool": "slow_compute",
        "arguments": {"seconds": 1},
        "fingerprint": "f",
        "status": "working",
        "attempt": 1,
        "owner": owner,
        "lease_until": lease_until,
        "created_at": now,
        "updated_at": now,
        "ttl_ms": 60_000,
        "poll_interval_ms": 500,
    }))
    .unwrap()
}

#[tokio::test]
async fn a_task_whose_instance_is_gone_is_answered_failed_and_never_run_again() {
    let journal = Journal::new(MemoryJournal::new());
    let store = JournalTaskStore::new(journal.clone());
    // Its owner's lease ran out long ago.
    let id = "00000000000000000000000000000001";
    store
        .create(&working_task(id, "another-boot/1/x", 2_000))
        .await
        .unwrap();
    let server = instance(move |b| b.journal_tasks(journal)).await;
    let failed = get(server.addr, id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(
        error_message(&failed).contains("stopped before it ended"),
        "{failed}"
    );
    // Recorded so: the next read says the same.
    assert_eq!(get(server.addr, id).await, failed);
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!(stored.task.status, TaskStatus::Failed);
    assert_eq!(stored.task.owner, None);
}

/// Every store: a task is created once, and replaced only at the revision
/// its writer read.
async fn store_rules(store: &dyn TaskStore) {
    let id = "0000000000000000000000000000000a";
    let task = working_task(id, "me", i64::MAX);
    store.create(&task).await.unwrap();
    assert!(matches!(
        store.create(&task).await,
        Err(TaskStoreError::Duplicate { .. })
    ));
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!((stored.revision, &stored.task), (1, &task));
    let mut asked = task.clone();
    asked.status = TaskStatus::InputRequired;
    assert!(store.replace(&asked, 1).await.unwrap());
    assert!(!store.replace(&task, 1).await.unwrap(), "a stale revision");
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!(
        (stored.revision, stored.task.status),
        (2, TaskStatus::InputRequired)
    );
    assert!(store.get("nothing").await.unwrap().is_none());
    let mut other = task.clone();
    other.task_id = "nothing".into();
    assert!(!store.replace(&other, 1).await.unwrap(), "no such task");
}

#[tokio::test]
async fn every_task_store_creates_once_and_replaces_only_at_the_revision_read() {
    store_rules(&MemoryTaskStore::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("j.db").display());
    for journal in [
        Journal::new(MemoryJournal::new()),
        Journal::open(&url).await.unwrap(),
    ] {
        store_rules(&JournalTaskStore::new(journal.clone())).await;
        // One record of the tasks' space, under the task id, the task as
        // its value at the revision of its one replacement; never a call.
        let records = journal.records(TASKS_SPACE).all().await.unwrap();
        assert_eq!(records.len(), 1);
        let record = &records[0];
        assert_eq!(record.key, "0000000000000000000000000000000a");
        assert_eq!(record.revision, 2);
        assert_eq!(record.value["status"], "input_required");
        assert_eq!(record.value["arguments"], json!({"seconds": 1}));
        assert!(journal.runs_to_resume().await.unwrap().is_empty());
        let resumable = CallQuery::all().in_states([
            CallState::Received,
            CallState::Approved,
            CallState::Denied,
            CallState::Started,
        ]);
        assert!(journal.calls(&resumable).await.unwrap().is_empty());
    }
}

#[test]
fn the_tool_declarations_carry_their_task_support() {
    assert_eq!(GreetTool::spec().task_support, TaskSupport::Forbidden);
    assert_eq!(SlowComputeTool::spec().task_support, TaskSupport::Optional);
    assert_eq!(FailingJobTool::spec().task_support, TaskSupport::Required);
    let escalating = TestToolWithTaskTool::spec();
    assert_eq!(
        (escalating.task_support, escalating.task_start),
        (TaskSupport::Required, TaskStart::OnEscalate)
    );
    assert_eq!(SlowComputeTool::spec().task_start, TaskStart::Immediately);
    let spec = serde_json::to_value(SlowComputeTool::spec()).unwrap();
    assert_eq!(spec["task_support"], "optional");
    assert!(spec.get("task_start").is_none());
    let plain = serde_json::to_value(GreetTool::spec()).unwrap();
    assert!(plain.get("task_support").is_none());
    assert_eq!(TaskSupport::Required.as_str(), "required");

    let refused = ToolSpec::builder("crunch", "Crunches.")
        .task_start(TaskStart::OnEscalate)
        .build();
    assert_eq!(
        refused,
        Err(SpecError::EscalatesWithoutTasks("crunch".into()))
    );
}
