//! A task's life on one instance: created, polled, completed, failed,
//! cancelled, asking its client, escalating from input rounds, refused
//! without the extension.

use super::*;

#[tokio::test]
async fn a_task_tool_answers_with_a_stored_task_and_inlines_its_result_once_completed() {
    let server = instance(|b| b).await;
    let created = call(
        server.addr,
        "slow_compute",
        json!({"seconds": 1, "label": "one"}),
    )
    .await;
    // A flat CreateTaskResult: the task, nothing of a result.
    assert_eq!(
        keys(&created),
        [
            "createdAt",
            "lastUpdatedAt",
            "pollIntervalMs",
            "resultType",
            "status",
            "taskId",
            "ttlMs"
        ],
        "{created}"
    );
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    let id = task_id(&created);
    assert!(
        id.len() == 32 && id.bytes().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    let created_at = created["createdAt"].as_str().unwrap();
    assert!(
        created_at.len() == 24 && created_at.ends_with('Z') && created_at.as_bytes()[10] == b'T',
        "ISO 8601: {created_at}"
    );

    // Stored before the answer: asked at once, it is there, working.
    let working = get(server.addr, &id).await;
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["taskId"], id.as_str());
    assert_eq!(working["status"], "working");
    for absent in ["result", "error", "inputRequests", "requestState"] {
        assert!(working.get(absent).is_none(), "{working}");
    }

    let done = until(server.addr, &id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["createdAt"], created["createdAt"]);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(text(&done["result"]), "computed one in 1 s");
    assert!(done.get("error").is_none());
    assert!(done["result"]["_meta"].is_null());
}

#[tokio::test]
async fn a_tool_error_completes_the_task_and_a_panic_fails_it() {
    let server = instance(|b| b).await;
    let failing = task_id(&call(server.addr, "failing_job", json!({})).await);
    let done = until(server.addr, &failing, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(text(&done["result"]).contains("the job failed"), "{done}");

    let panicking = task_id(&call(server.addr, "protocol_error_job", json!({})).await);
    let failed = until(server.addr, &panicking, &["completed", "failed"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed["error"]["message"].is_string());
    assert!(failed.get("result").is_none(), "{failed}");
}

#[tokio::test]
async fn cancelling_a_task_fires_its_body_s_token_and_settles_it_cancelled() {
    let server = instance(|b| b).await;
    let id = task_id(&call(server.addr, "wait_for_cancel", json!({})).await);
    reaches(&server.probe.started, 1).await;

    let ack = rpc(server.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    reaches(&server.probe.cancelled, 1).await;
    let cancelled = get(server.addr, &id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    for absent in ["result", "error", "inputRequests"] {
        assert!(cancelled.get(absent).is_none(), "{cancelled}");
    }

    // Cancelling an ended task changes nothing, with the same answer.
    let again = rpc(server.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(
        again["result"],
        json!({"resultType": "complete"}),
        "{again}"
    );
    let done = task_id(&call(server.addr, "slow_compute", json!({"seconds": 0})).await);
    until(server.addr, &done, &["completed"]).await;
    let late = rpc(server.addr, "tasks/cancel", json!({"taskId": done}), true).await;
    assert_eq!(late["result"], json!({"resultType": "complete"}), "{late}");
    assert_eq!(get(server.addr, &done).await["status"], "completed");
    assert_eq!(server.probe.started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_task_id_is_invalid_params_and_the_removed_methods_do_not_exist() {
    let server = instance(|b| b).await;
    let unknown = "0123456789abcdef0123456789abcdef";
    for (method, params) in [
        ("tasks/get", json!({"taskId": unknown})),
        (
            "tasks/update",
            json!({"taskId": unknown, "inputResponses": {}}),
        ),
        ("tasks/cancel", json!({"taskId": unknown})),
    ] {
        let answer = rpc(server.addr, method, params, true).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    for method in ["tasks/result", "tasks/list"] {
        let answer = rpc(server.addr, method, json!({"taskId": unknown}), true).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}

#[tokio::test]
async fn a_client_without_the_extension_is_answered_in_its_request_or_refused() {
    let server = instance(|b| b).await;
    // An optional task tool: a plain result.
    let call_params = json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "sync"}});
    let plain = rpc(server.addr, "tools/call", call_params, false).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    assert_eq!(text(&plain["result"]), "computed sync in 0 s");

    // A required one: -32021, naming the extension.
    for tool in ["failing_job", "test_tool_with_task"] {
        let refused = rpc(
            server.addr,
            "tools/call",
            json!({"name": tool, "arguments": {}}),
            false,
        )
        .await;
        assert_eq!(refused["error"]["code"], -32021, "{refused}");
        assert_eq!(
            refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
            json!({}),
            "{refused}"
        );
    }

    // The tasks methods: -32021 too.
    let id = task_id(&call(server.addr, "slow_compute", json!({"seconds": 0})).await);
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let answer = rpc(server.addr, method, params, false).await;
        assert_eq!(answer["error"]["code"], -32021, "{method}: {answer}");
    }

    // A plain tool stays plain, whatever the client asks for (a v1 `task`
    // param included).
    let legacy = json!({"name": "greet", "arguments": {"name": "Ada"}, "task": {"ttl": 60000}});
    let greeted = rpc(server.addr, "tools/call", legacy, true).await;
    assert_eq!(greeted["result"]["resultType"], "complete", "{greeted}");
    assert_eq!(text(&greeted["result"]), "Hello, Ada!");
}

#[tokio::test]
async fn only_a_server_with_a_task_tool_declares_the_extension() {
    let with_tasks = instance(|b| b).await;
    let discovered = rpc(with_tasks.addr, "server/discover", json!({}), false).await;
    let capabilities = &discovered["result"]["capabilities"];
    assert_eq!(capabilities["extensions"][TASKS], json!({}), "{discovered}");
    assert!(capabilities.get("tasks").is_none(), "{discovered}");

    let mut plain = ToolRegistry::new();
    plain.register(GreetTool).unwrap();
    let server = McpServer::builder(ToolExecutor::builder(plain, ()))
        .build(RunContext::empty)
        .unwrap();
    let without = serve(server, Arc::default()).await;
    let discovered = rpc(without.addr, "server/discover", json!({}), false).await;
    let capabilities = &discovered["result"]["capabilities"];
    assert!(capabilities["tools"].is_object(), "{discovered}");
    assert!(
        capabilities["extensions"].get(TASKS).is_none(),
        "{discovered}"
    );
    // Without the extension, the tasks methods do not exist.
    let answer = rpc(without.addr, "tasks/get", json!({"taskId": "x"}), true).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

#[tokio::test]
async fn a_task_that_asks_its_client_waits_in_input_required_and_takes_answers_one_at_a_time() {
    let server = instance(|b| b).await;
    let id = task_id(&call(server.addr, "multi_input", json!({})).await);
    let waiting = until(server.addr, &id, &["input_required", "completed", "failed"]).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(
        keys(&waiting["inputRequests"]),
        ["confirm", "name"],
        "{waiting}"
    );
    let asked = &waiting["inputRequests"]["name"];
    assert_eq!(asked["method"], "elicitation/create", "{waiting}");
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert!(waiting.get("requestState").is_none());

    // One answer (and one to a key never asked, ignored): the other still
    // waits.
    let partial = json!({"taskId": id, "inputResponses": {
        "name": accept(json!({"name": "Ada"})),
        "unasked": accept(json!({})),
    }});
    let ack = rpc(server.addr, "tasks/update", partial, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let still = get(server.addr, &id).await;
    assert_eq!(still["status"], "input_required", "{still}");
    assert_eq!(keys(&still["inputRequests"]), ["confirm"], "{still}");

    // An answer that is no result object is refused, and changes nothing.
    let bad = json!({"taskId": id, "inputResponses": {"confirm": true}});
    let refused = rpc(server.addr, "tasks/update", bad, true).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(get(server.addr, &id).await["status"], "input_required");

    // The last answer: the body runs again with both, and completes.
    let last =
        json!({"taskId": id, "inputResponses": {"confirm": accept(json!({"confirm": true}))}});
    let ack = rpc(server.addr, "tasks/update", last, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until(server.addr, &id, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "name: Ada, confirmed: true");
    // An update to an ended task is ignored.
    let late =
        json!({"taskId": id, "inputResponses": {"confirm": accept(json!({"confirm": false}))}});
    let ack = rpc(server.addr, "tasks/update", late, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(
        text(&get(server.addr, &id).await["result"]),
        "name: Ada, confirmed: true"
    );
}

#[tokio::test]
async fn a_task_needing_a_capability_its_client_lacks_fails_naming_it() {
    let server = instance(|b| b).await;
    // Declares the extension, not elicitation.
    let capabilities = json!({"extensions": {TASKS: {}}});
    let call_params = json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}});
    let answer = rpc_declaring(server.addr, "tools/call", call_params, capabilities).await;
    let id = task_id(&answer["result"]);
    let failed = until(server.addr, &id, &["failed", "completed", "input_required"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32021, "{failed}");
    assert_eq!(
        failed["error"]["data"]["requiredCapabilities"]["elicitation"],
        json!({}),
        "{failed}"
    );
}

#[tokio::test]
async fn a_tool_that_escalates_asks_in_rounds_then_becomes_a_task() {
    let server = instance(|b| b).await;
    let (round1, round2) = alice_in_two_rounds(server.addr).await;
    // Round 1: input rounds, no task.
    assert!(round1.get("taskId").is_none(), "{round1}");
    assert_eq!(keys(&round1["inputRequests"]), ["user_name"], "{round1}");
    assert!(round1["requestState"].is_string(), "{round1}");
    // Round 2, with the answer and the state: the task.
    let round2 = &round2["result"];
    assert_eq!(round2["resultType"], "task", "{round2}");
    for absent in ["requestState", "inputRequests", "content"] {
        assert!(round2.get(absent).is_none(), "{round2}");
    }
    let id = task_id(round2);
    let done = until(server.addr, &id, &["completed", "failed", "input_required"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "Hello, Alice!");
}

/// A `tools/call` of `two_phases` with `responses` and the state `state`
/// (none when null), from a client that declares the tasks extension when
/// `tasks`: its result.
async fn two_phases_round(addr: SocketAddr, responses: Value, state: &Value, tasks: bool) -> Value {
    let mut params = json!({"name": "two_phases", "arguments": {}, "inputResponses": responses});
    if let Some(state) = state.as_str() {
        params["requestState"] = json!(state);
    }
    result_of(rpc(addr, "tools/call", params, tasks).await)
}

#[tokio::test]
async fn a_tool_that_escalates_carries_its_round_answers_into_the_task() {
    let server = instance(|b| b).await;
    let a = json!({"a": accept(json!({"v": "x"}))});

    // Without the extension, escalating changes nothing: every question is
    // a round.
    let round1 = two_phases_round(server.addr, json!({}), &Value::Null, false).await;
    assert_eq!(keys(&round1["inputRequests"]), ["a"], "{round1}");
    let round2 = two_phases_round(server.addr, a.clone(), &round1["requestState"], false).await;
    assert_eq!(keys(&round2["inputRequests"]), ["b"], "{round2}");
    let b = json!({"b": accept(json!({"v": "y"}))});
    let round3 = two_phases_round(server.addr, b.clone(), &round2["requestState"], false).await;
    assert_eq!(text(&round3), "\"x\" then \"y\"", "{round3}");

    // With it: the answer of the round becomes the task's, and the later
    // question parks the task.
    let round1 = two_phases_round(server.addr, json!({}), &Value::Null, true).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    let round2 = two_phases_round(server.addr, a, &round1["requestState"], true).await;
    let id = task_id(&round2);
    let waiting = until(server.addr, &id, &["input_required", "completed", "failed"]).await;
    assert_eq!(keys(&waiting["inputRequests"]), ["b"], "{waiting}");
    let ack = rpc(
        server.addr,
        "tasks/update",
        json!({"taskId": id, "inputResponses": b}),
        true,
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = until(server.addr, &id, &["completed", "failed"]).await;
    assert_eq!(text(&done["result"]), "\"x\" then \"y\"", "{done}");
}

#[tokio::test]
async fn a_task_needing_approval_asks_it_in_its_input_requests() {
    let approver = McpApprover::new();
    let mut registry = ToolRegistry::new();
    registry.register(LaunchTool).unwrap();
    let executor =
        ToolExecutor::builder(registry, ()).middleware(ConfirmationPolicy::new(approver.clone()));
    let server = McpServer::builder(executor)
        .approver(approver)
        .build(RunContext::empty)
        .unwrap();
    let server = serve(server, Arc::default()).await;
    for (action, status, expected) in [("accept", false, "launched"), ("decline", true, "declined")]
    {
        let id = task_id(&call(server.addr, "launch", json!({})).await);
        let waiting = until(server.addr, &id, &["input_required", "completed"]).await;
        let asked = keys(&waiting["inputRequests"]);
        assert!(
            asked.len() == 1 && asked[0].starts_with("approve-"),
            "{waiting}"
        );
        let key = asked[0].to_owned();
        assert_eq!(
            waiting["inputRequests"][&key]["method"],
            "elicitation/create"
        );
        let answer = json!({"taskId": id, "inputResponses": {key: {"action": action}}});
        rpc(server.addr, "tasks/update", answer, true).await;
        let done = until(server.addr, &id, &["completed", "failed"]).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["isError"], status, "{done}");
        assert!(text(&done["result"]).contains(expected), "{done}");
    }
}
