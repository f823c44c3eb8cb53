//! What a tool declares is enforced without extra wiring: the executor adds
//! the workspace policy itself, refuses to build without a confirmation
//! policy, and only an explicit `unenforced(..)` turns either off.
//! Registration refuses a `workspace` tool with no path argument and a tool
//! that turns secret redaction off without opting in.

use std::path::Path;
use std::sync::Arc;

use crate::policies::{Scripted, workspace_reader};
use serde_json::json;
use tinyagents_tools::approval::*;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::middleware::{BeforeOutcome, BeforeToolCtx};
use tinyagents_tools::policy::*;
use tinyagents_tools::spec::{RedactionPolicy, SafetyItem};
use tinyagents_tools::*;
use tinyagents_tools_tests::{FakeTool, Recorder, call, execute_in, kind, spec};

/// Reads `path` joined to the run's root without checking it: the tool
/// trusts the workspace policy it declared, as a tool author would.
fn trusting_reader() -> Arc<Scripted> {
    let spec = spec(
        "read_text",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "format": WORKSPACE_PATH_FORMAT}},
            "required": ["path"],
            "additionalProperties": false
        }),
    )
    .safety(workspace_reader())
    .build()
    .unwrap();
    Scripted::new(spec, |args, rt| {
        let root = rt.run().workspace_root().unwrap_or(Path::new("."));
        let path = root.join(args["path"].as_str().unwrap_or_default());
        let text = std::fs::read_to_string(path)?;
        Ok(ToolOutput::text(text))
    })
}

/// Asks `read_text` for `path` in call `id` of `run`.
async fn read_text(exec: &ToolExecutor, run: &RunContext, id: &str, path: &str) -> ToolResult {
    execute_in(exec, run, call(id, "read_text", json!({"path": path}))).await
}

fn registry_of(tool: Arc<dyn Tool>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    registry
}

/// A workspace root beside a file outside it.
struct Layout {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn layout() -> Layout {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("inside.txt"), "inside").unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "OUTSIDE-TEXT").unwrap();
    Layout {
        _dir: dir,
        root,
        outside,
    }
}

#[tokio::test]
async fn a_workspace_tool_cannot_escape_its_root_even_when_the_executor_was_built_without_the_policy()
 {
    let l = layout();
    let tool = trusting_reader();
    let recorder = Recorder::new();
    let exec = ToolExecutor::builder(registry_of(tool.clone()), ())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let run = RunContext::builder(()).workspace_root(&l.root).build();
    let escapes = [
        "../outside.txt".to_owned(),
        l.outside.display().to_string(),
        "../../../../../../../etc/hostname".to_owned(),
        "/etc/hostname".to_owned(),
    ];
    for (i, path) in escapes.iter().enumerate() {
        let id = format!("esc-{i}");
        let r = read_text(&exec, &run, &id, path).await;
        assert!(r.is_error, "{path}: {r:?}");
        assert_eq!(r.tool_call_id.as_str(), id);
        assert_eq!(kind(&r), "denied", "{path}: {}", r.text());
        assert!(!r.text().contains("OUTSIDE-TEXT"), "{}", r.text());
        let last = recorder.events().pop().unwrap();
        assert_eq!(last.kind, EventKind::Rejected);
        assert_eq!(last.policy.as_deref(), Some("workspace_root"));
    }
    assert_eq!(tool.runs(), 0);

    // A path inside still works, and a run without a root is refused.
    let ok = read_text(&exec, &run, "in", "inside.txt").await;
    assert_eq!(ok.text(), "inside");
    let no_root = read_text(&exec, &RunContext::empty(), "no-root", "inside.txt").await;
    assert_eq!(kind(&no_root), "denied");
    assert_eq!(tool.runs(), 1);
}

#[tokio::test]
async fn leaving_the_workspace_unenforced_is_an_explicit_choice_that_runs_the_tool_as_written() {
    let l = layout();
    let tool = trusting_reader();
    let exec = ToolExecutor::builder(registry_of(tool.clone()), ())
        .unenforced(SafetyItem::Workspace)
        .build()
        .unwrap();
    let run = RunContext::builder(()).workspace_root(&l.root).build();
    let r = read_text(&exec, &run, "c", "../outside.txt").await;
    assert_eq!(r.text(), "OUTSIDE-TEXT");
    assert_eq!(tool.runs(), 1);
}

/// A tool declaring `flag` (`requires_confirmation`, `spend` or `shell`).
fn needs_confirmation(name: &str, safety: ToolSafety) -> Arc<dyn Tool> {
    FakeTool::new(
        spec(name, json!({"type": "object", "properties": {}}))
            .safety(safety)
            .build()
            .unwrap(),
    )
    .answering(ToolOutput::text("ran"))
    .shared()
}

struct ApproveAll;

#[async_trait]
impl Approver for ApproveAll {
    async fn review(&self, _: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Approve
    }
}

#[test]
fn a_tool_that_needs_confirmation_refuses_to_build_without_a_confirmation_policy() {
    for (name, safety) in [
        (
            "delete_repo",
            ToolSafety::default().requires_confirmation(true),
        ),
        ("buy_credits", ToolSafety::default().spend(true)),
        ("run_cmd", ToolSafety::default().shell(true)),
    ] {
        let refused =
            ToolExecutor::builder(registry_of(needs_confirmation(name, safety.clone())), ())
                .build()
                .unwrap_err();
        assert_eq!(refused.rule(), "missing_policy");
        assert_eq!(
            refused,
            ExecutorBuildError::MissingPolicy {
                tool: name.into(),
                item: SafetyItem::Confirmation,
                policy: "ConfirmationPolicy",
            }
        );
        let text = refused.to_string();
        assert!(
            text.contains(name) && text.contains("ConfirmationPolicy"),
            "{text}"
        );
        assert!(
            text.contains("unenforced(SafetyItem::Confirmation)"),
            "{text}"
        );

        // Each explicit way out builds.
        let with_policy =
            ToolExecutor::builder(registry_of(needs_confirmation(name, safety.clone())), ())
                .middleware(ConfirmationPolicy::new(ApproveAll))
                .build();
        assert!(with_policy.is_ok());
        let opted_out = ToolExecutor::builder(registry_of(needs_confirmation(name, safety)), ())
            .unenforced(SafetyItem::Confirmation)
            .build();
        assert!(opted_out.is_ok());
    }
}

/// A middleware of the application's own that takes over confirmation.
struct OwnConfirmation;

#[async_trait]
impl Middleware for OwnConfirmation {
    fn name(&self) -> &str {
        "own_confirmation"
    }
    fn enforces(&self) -> &[SafetyItem] {
        &[SafetyItem::Confirmation]
    }
    async fn before_tool(&self, _: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
        Ok(BeforeOutcome::deny(
            "own_confirmation",
            "nobody is here to confirm",
        ))
    }
}

#[tokio::test]
async fn a_middleware_that_declares_it_enforces_confirmation_satisfies_the_build_and_decides() {
    let tool = needs_confirmation(
        "delete_repo",
        ToolSafety::default().requires_confirmation(true),
    );
    let exec = ToolExecutor::builder(registry_of(tool), ())
        .middleware(OwnConfirmation)
        .build()
        .unwrap();
    let r = execute_in(
        &exec,
        &RunContext::empty(),
        call("c", "delete_repo", json!({})),
    )
    .await;
    assert_eq!(kind(&r), "denied");
    assert_eq!(r.text(), "nobody is here to confirm");
}

#[test]
fn workspace_on_a_tool_without_a_path_argument_is_refused_at_registration() {
    let tool = needs_confirmation("tidy_up", ToolSafety::default().workspace(true));
    let refused = ToolRegistry::<()>::new().register(tool).unwrap_err();
    assert_eq!(refused.rule(), "workspace_without_path");
    assert!(refused.to_string().contains("tidy_up"), "{refused}");

    // A path nested in an array of objects, behind a `$ref`, counts.
    let nested = spec(
        "copy_all",
        json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
            "$defs": {"item": {"type": "object", "properties": {
                "from": {"type": "string", "format": "workspace-path"}
            }}}
        }),
    )
    .safety(ToolSafety::default().workspace(true))
    .build()
    .unwrap();
    assert!(
        ToolRegistry::<()>::new()
            .register(FakeTool::new(nested))
            .is_ok()
    );
}

#[tokio::test]
async fn turning_secret_redaction_off_is_refused_at_registration_unless_the_tool_opts_in() {
    let unmasked = || RedactionPolicy {
        secrets: false,
        ..RedactionPolicy::default()
    };
    let tool = |safety: ToolSafety| -> Arc<dyn Tool> {
        FakeTool::new(
            spec("show_token", json!({"type": "object", "properties": {}}))
                .safety(safety)
                .build()
                .unwrap(),
        )
        .answering(ToolOutput::text("token sk-live-777"))
        .shared()
    };
    let refused = ToolRegistry::<()>::new()
        .register(tool(ToolSafety::pure().redaction(unmasked())))
        .unwrap_err();
    assert_eq!(refused.rule(), "unredacted_secrets");
    assert!(refused.to_string().contains("show_token"), "{refused}");

    // Opted in: registered, and the secret is shown as the tool chose.
    let mut registry = ToolRegistry::new();
    registry
        .register(tool(
            ToolSafety::pure()
                .redaction(unmasked())
                .allow_unredacted_secrets(true),
        ))
        .unwrap();
    let exec = ToolExecutor::builder(registry, ()).build().unwrap();
    let run = RunContext::builder(())
        .secret("sk-live-777".to_owned())
        .build();
    let r = execute_in(&exec, &run, call("c", "show_token", json!({}))).await;
    assert_eq!(r.text(), "token sk-live-777");
}
