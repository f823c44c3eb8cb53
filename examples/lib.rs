//! The tools the examples (and the tests) share: the quickstart's four
//! realistic tools and the stores they use.
//!
//! - [`search_docs`]: a read-only search over a small built-in document set;
//! - [`write_note`]: writes to a notebook, and requires confirmation;
//! - [`read_file`]: reads a text file confined to the run's workspace root;
//! - [`calculate`]: a pure calculator.
//!
//! [`ApproveAndReport`] is the approver the quickstart and the MCP server
//! put behind `write_note`'s confirmation.

use std::sync::Mutex;

use tinyagents_tools::policy::WorkspacePath;

use tinyagents_tools::approval::{ApprovalDecision, ApprovalRequest, Approver};
use tinyagents_tools::prelude::*;
use tinyagents_tools::{RegistryError, WorkspaceRoot, async_trait, tool};

#[cfg(feature = "openai")]
pub mod agent;
pub mod conformance_tasks;
pub mod conformance_tools;
pub mod durable;
pub mod services;

/// One document of the built-in set.
#[derive(Debug, Clone)]
pub struct Doc {
    /// A stable id.
    pub id: &'static str,
    /// The title.
    pub title: &'static str,
    /// The text.
    pub body: &'static str,
}

/// A tiny in-memory document index.
#[derive(Debug, Clone)]
pub struct DocIndex {
    docs: Vec<Doc>,
}

impl DocIndex {
    /// The built-in documents about this framework.
    pub fn builtin() -> Self {
        let docs = vec![
            Doc {
                id: "tools",
                title: "Writing a tool",
                body: "Put #[tool] on an async fn. Its one argument struct becomes the JSON schema the model sees; parameters marked #[inject] are hidden runtime values.",
            },
            Doc {
                id: "safety",
                title: "Safety metadata",
                body: "Declare read_only, mutating or destructive, idempotent, local or networked, filesystem, shell, spend and requires_confirmation. The executor and the policies enforce them.",
            },
            Doc {
                id: "executor",
                title: "The executor",
                body: "Every call is checked before it runs: the tool exists and was advertised, the arguments parse and match the schema, limits hold. Then middleware, the tool, events and a tool message.",
            },
            Doc {
                id: "retries",
                title: "Timeouts and retries",
                body: "A timeout fires the call's cancellation token. Only idempotent tools are retried, with backoff and jitter, and only for retry-class errors.",
            },
            Doc {
                id: "providers",
                title: "Provider formats",
                body: "One spec exports to OpenAI, Anthropic, Gemini and MCP, with each provider's schema rules applied, and their tool calls and results read back.",
            },
        ];
        DocIndex { docs }
    }

    /// Documents matching any word of `query`, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
            .map(str::to_lowercase)
            .collect();
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .filter_map(|doc| {
                let text = format!("{} {}", doc.title, doc.body).to_lowercase();
                let score = words.iter().filter(|w| text.contains(w.as_str())).count() as u32;
                (score > 0).then(|| Hit {
                    id: doc.id.to_owned(),
                    title: doc.title.to_owned(),
                    snippet: doc.body.chars().take(80).collect(),
                    score,
                })
            })
            .collect();
        hits.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(limit);
        hits
    }
}

/// Arguments of [`search_docs`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
    /// How many hits to return (1 to 10, default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub limit: Option<u32>,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Hit {
    /// The document id.
    pub id: String,
    /// The document title.
    pub title: String,
    /// The start of the document.
    pub snippet: String,
    /// How many query words matched.
    pub score: u32,
}

/// Search the framework's built-in documentation and return the best hits.
#[tool(read_only, idempotent, local, deterministic, timeout = "5s", tags = ["docs"])]
pub async fn search_docs(args: SearchArgs, #[inject] index: Store<DocIndex>) -> Vec<Hit> {
    index.search(&args.query, args.limit.unwrap_or(3) as usize)
}

/// A saved note.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Note {
    /// The note's number in the notebook.
    pub id: usize,
    /// The title.
    pub title: String,
    /// The text.
    pub body: String,
}

/// The user's notebook (shared by every call of a run).
#[derive(Debug, Default)]
pub struct NoteBook {
    notes: Mutex<Vec<Note>>,
}

impl NoteBook {
    /// Every note, oldest first.
    pub fn notes(&self) -> Vec<Note> {
        self.notes.lock().expect("notebook lock").clone()
    }
}

/// Arguments of [`write_note`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    /// A short title.
    #[schemars(length(min = 1, max = 80))]
    pub title: String,
    /// The note's text.
    #[schemars(length(max = 2000))]
    pub body: String,
}

/// Save a note in the user's notebook.
///
/// The user must approve every note before it is written.
#[tool(mutating, local, requires_confirmation, tags = ["notes"])]
pub async fn write_note(args: NoteArgs, #[inject] notebook: Store<NoteBook>) -> Note {
    let mut notes = notebook.notes.lock().expect("notebook lock");
    let note = Note {
        id: notes.len() + 1,
        title: args.title,
        body: args.body,
    };
    notes.push(note.clone());
    note
}

/// Arguments of [`read_file`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file, relative to the workspace root.
    pub path: WorkspacePath,
}

/// A file's text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileText {
    /// The path as given.
    pub path: String,
    /// The UTF-8 text.
    pub text: String,
}

/// Read a UTF-8 text file from the workspace.
#[tool(read_only, idempotent, local, filesystem = "read", workspace, timeout = "2s", tags = ["files"])]
pub async fn read_file(
    args: ReadFileArgs,
    #[inject] root: WorkspaceRoot,
) -> Result<FileText, ToolError> {
    let full = args
        .path
        .resolve(root.path())
        .map_err(|violation| ToolError::denied("workspace_root", violation.to_string()))?;
    let text = tokio::fs::read_to_string(&full).await?;
    Ok(FileText {
        path: args.path.to_string(),
        text,
    })
}

/// An arithmetic operation.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// a + b
    Add,
    /// a - b
    Subtract,
    /// a * b
    Multiply,
    /// a / b
    Divide,
    /// a to the power b
    Power,
}

// Plain parameters: `#[tool]` gathers them into the generated
// `CalculateArgs` (the input schema), each described by its doc comment.
/// Compute `a op b` exactly as a calculator would.
#[tool(read_only, idempotent, local, deterministic)]
pub async fn calculate(
    /// The left operand.
    a: f64,
    /// The operation.
    op: Operation,
    /// The right operand.
    b: f64,
) -> Result<f64, ToolError> {
    let value = match op {
        Operation::Add => a + b,
        Operation::Subtract => a - b,
        Operation::Multiply => a * b,
        Operation::Divide if b == 0.0 => {
            return Err(ToolError::repair(
                "`b`: division by zero; use a non-zero divisor",
            ));
        }
        Operation::Divide => a / b,
        Operation::Power => a.powf(b),
    };
    if !value.is_finite() {
        return Err(ToolError::repair("the result is not a finite number"));
    }
    Ok(value)
}

/// A registry with the four quickstart tools.
pub fn quickstart_registry() -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry
        .register(SearchDocsTool)?
        .register(WriteNoteTool)?
        .register(ReadFileTool)?
        .register(CalculateTool)?;
    Ok(registry)
}

/// A run with the stores the quickstart tools need, confined to `workspace`.
pub fn quickstart_run(
    workspace: &std::path::Path,
    notebook: std::sync::Arc<NoteBook>,
) -> RunContext {
    RunContext::builder(())
        .store(DocIndex::builtin())
        .store_arc(notebook)
        .workspace_root(workspace)
        .build()
}

/// Serves `server` over streamable HTTP on `listener` until Ctrl-C, the way
/// the MCP examples run.
pub async fn serve_http_until_ctrl_c<S: Shared, C: Shared>(
    server: &tinyagents_tools_mcp::McpServer<S, C>,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    server
        .serve_http(
            listener,
            tinyagents_tools_mcp::rmcp::transport::StreamableHttpServerConfig::default(),
            shutdown,
        )
        .await
}

/// An approver that approves every call after handing its request to the
/// function it holds (the examples print the request there): it stands in
/// for a person, or records a confirmation the MCP host already asked for.
pub struct ApproveAndReport(pub fn(&ApprovalRequest));

#[async_trait]
impl Approver for ApproveAndReport {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        (self.0)(request);
        ApprovalDecision::Approve
    }
}
