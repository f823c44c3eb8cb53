//! Approvals over MCP: a call that needs confirmation is put to the client
//! as an elicitation naming the tool and the argument fingerprint, and runs
//! only on an explicit accept. Driven by rmcp's client answering accept,
//! decline and nothing, on a protocol with server requests (2025-06-18) and
//! on one with input-required results (2026-07-28).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};
use tinyagents_tools::ToolExecutor;
use tinyagents_tools::approval::approval_fingerprint;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tinyagents_tools_mcp::{APPROVAL_META_KEY, McpApprover, McpServer};

use crate::common::{call_on, client_config, connect_to, params, text};

/// What the client answers an elicitation with.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Answer {
    Accept,
    Decline,
    Nothing,
}

/// A client that answers every elicitation the same way and keeps them.
#[derive(Clone)]
pub(crate) struct Asked {
    pub(crate) version: ProtocolVersion,
    pub(crate) elicits: bool,
    pub(crate) answer: Answer,
    pub(crate) seen: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Asked {
    fn get_info(&self) -> ClientConfig {
        client_config("approvals-test", &self.version, self.elicits, false)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        // rmcp hands a request's `_meta` to the handler in its context.
        let mut seen = serde_json::to_value(&request).unwrap();
        if seen["_meta"].is_null() {
            seen["_meta"] = serde_json::to_value(&context.meta).unwrap();
        }
        self.seen.lock().unwrap().push(seen);
        match self.answer {
            Answer::Accept => {
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({})))
            }
            Answer::Decline => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Answer::Nothing => std::future::pending().await,
        }
    }
}

struct Session {
    client: RunningService<RoleClient, Asked>,
    seen: Arc<Mutex<Vec<Value>>>,
    notebook: Arc<NoteBook>,
    _workspace: tempfile::TempDir,
}

/// Serves the quickstart tools (`write_note` requires confirmation), with
/// an [`McpApprover`] deciding, to a client answering `answer`.
async fn session(version: ProtocolVersion, elicits: bool, answer: Answer) -> Session {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().to_owned();
    let notebook = Arc::new(NoteBook::default());
    let notes = Arc::clone(&notebook);
    let approver = McpApprover::new();
    let policy = ConfirmationPolicy::new(approver.clone()).timeout(Duration::from_millis(700));
    let executor = ToolExecutor::builder(quickstart_registry().unwrap(), ()).middleware(policy);
    let server = McpServer::builder(executor)
        .approver(approver)
        .build(move || quickstart_run(&root, Arc::clone(&notes)))
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler = Asked {
        version,
        elicits,
        answer,
        seen: Arc::clone(&seen),
    };
    let client = connect_to(server, handler).await;
    Session {
        client,
        seen,
        notebook,
        _workspace: workspace,
    }
}

pub(crate) fn note() -> Value {
    json!({"title": "milk", "body": "remember the milk"})
}

async fn write_note(session: &Session) -> Value {
    call_on(&session.client, "write_note", note()).await
}

/// Calls `write_note`, which must be refused with `reason` in its text and
/// leave the notebook empty.
async fn write_note_refused(session: &Session, reason: &str) {
    let answer = write_note(session).await;
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(text(&answer).contains(reason), "{}", text(&answer));
    assert!(session.notebook.notes().is_empty());
}

const VERSIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2026_07_28];

#[tokio::test]
async fn an_accepting_mcp_client_is_asked_with_the_tool_and_fingerprint_and_the_call_runs() {
    let fingerprint = approval_fingerprint("write_note", &note());
    for version in VERSIONS {
        let s = session(version.clone(), true, Answer::Accept).await;
        let answer = write_note(&s).await;
        assert_eq!(answer["isError"], false, "on {version}: {answer}");
        assert_eq!(s.notebook.notes().len(), 1, "on {version}");

        let seen = s.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "asked once on {version}: {seen:?}");
        let message = seen[0]["message"].as_str().unwrap();
        assert!(message.contains("`write_note`"), "{message}");
        assert!(message.contains(&fingerprint), "{message}");
        // The person sees what they approve: the tool and its arguments.
        let shown = note().to_string();
        assert!(message.contains(&shown), "{message}");
        assert_eq!(
            seen[0]["_meta"][APPROVAL_META_KEY],
            json!({"tool": "write_note", "fingerprint": fingerprint, "arguments": shown})
        );
    }
}

#[tokio::test]
async fn a_declining_mcp_client_keeps_the_call_from_running() {
    for version in VERSIONS {
        let s = session(version.clone(), true, Answer::Decline).await;
        write_note_refused(&s, "declined").await;
        assert_eq!(s.seen.lock().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn an_mcp_client_that_never_answers_is_refused_at_the_policy_timeout() {
    let s = session(ProtocolVersion::V_2025_06_18, true, Answer::Nothing).await;
    let started = std::time::Instant::now();
    write_note_refused(&s, "no approval arrived in time").await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_mcp_client_without_elicitation_is_refused_without_being_asked() {
    for version in VERSIONS {
        let s = session(version.clone(), false, Answer::Accept).await;
        write_note_refused(&s, "did not declare elicitation").await;
        assert!(s.seen.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn an_approval_sent_for_other_arguments_does_not_let_the_call_run() {
    // A 2026-07-28 client retries with answers of its own: an accept under
    // another fingerprint's key is no approval of this call: it is asked.
    let s = session(ProtocolVersion::V_2026_07_28, true, Answer::Decline).await;
    let other = approval_fingerprint("write_note", &json!({"title": "x", "body": "y"}));
    let mut responses = std::collections::BTreeMap::new();
    responses.insert(
        format!("approve-{other}"),
        json!({"action": "accept", "content": {}}),
    );
    let call = params("write_note", note()).with_input_responses(responses);
    let answer = s.client.call_tool(call).await;
    let refused = match answer {
        Ok(result) => serde_json::to_value(result).unwrap()["isError"] == true,
        Err(_) => true,
    };
    assert!(refused);
    assert!(s.notebook.notes().is_empty());
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}
