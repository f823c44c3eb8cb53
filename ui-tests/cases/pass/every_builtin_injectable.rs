// Every built-in injectable, in one tool.
use std::sync::Arc;

use tinyagents_tools::prelude::*;

#[derive(Clone)]
struct AppState {
    greeting: Arc<str>,
}

struct Session {
    user: String,
}

struct Index;
struct Http;
struct Token(String);
impl AsRef<str> for Token {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Use everything the runtime offers.
#[tool(state = AppState, context = Session)]
#[allow(clippy::too_many_arguments)]
async fn everything(
    #[inject] state: State<AppState>,
    #[inject] ctx: Ctx<Session>,
    #[inject] run: RunContext<Session>,
    #[inject] runtime: ToolRuntime<Session>,
    #[inject] thread: ThreadId,
    #[inject] run_id: RunId,
    #[inject] call: ToolCallId,
    #[inject] index: Store<Index>,
    #[inject] http: Resource<Http>,
    #[inject] token: Secret<Token>,
    #[inject] events: EventEmitter,
    #[inject] stream: StreamWriter,
    #[inject] cancel: CancellationToken,
    #[inject] root: WorkspaceRoot,
) -> String {
    let _ = (
        run, runtime, thread, run_id, index, http, events, stream, root,
    );
    assert!(!cancel.is_cancelled());
    assert_eq!(token.expose().0, "t");
    format!("{} {} {call}", state.greeting, ctx.user)
}

fn main() {
    let mut registry: ToolRegistry<AppState, Session> = ToolRegistry::default();
    registry.register(EverythingTool).unwrap();
    assert_eq!(EverythingTool::spec().injected.len(), 14);
    let run = RunContext::builder(Session { user: "ann".into() })
        .store(Index)
        .resource(Http)
        .secret(Token("t".into()))
        .workspace_root("/tmp")
        .build();
    let runtime = ToolRuntime::new(run, "call-1", "everything");
    let state = AppState {
        greeting: "hello".into(),
    };
    let out = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(EverythingTool.call(&state, &runtime, serde_json::json!({})))
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!("hello ann call-1")));
}
