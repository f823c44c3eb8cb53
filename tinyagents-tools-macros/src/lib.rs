//! The `#[tool]` attribute of `tinyagents-tools`. Use it through
//! `tinyagents_tools::tool` (or the prelude); this crate has no other API.
//!
//! Stages, one module each: `ast` reads the fn, `attr` parses the options,
//! `valid` checks every rule (all errors of one fn together), `expand`
//! writes the tool type. `service` handles `#[tools]` on an `impl` block,
//! whose `#[tool]` methods go through the same stages.

mod ast;
mod attr;
mod duration;
mod expand;
mod isolated;
mod json;
mod names;
mod plain;
mod ready;
mod safety;
mod service;
mod signature;
mod stub;
mod valid;

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool: a unit struct named after the fn in
/// PascalCase plus `Tool` (`search_docs` gives `SearchDocsTool`), with the
/// fn's visibility, implementing `tinyagents_tools::Tool`. Register it with
/// `registry.register(SearchDocsTool)?`. The fn itself stays as written and
/// callable; `SearchDocsTool::spec()` gives its `ToolSpec`, built once.
///
/// ```ignore
/// use tinyagents_tools::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct SearchArgs {
///     /// What to look for.
///     query: String,
/// }
///
/// /// Search the document index.
/// #[tool(read_only, idempotent, timeout = "5s")]
/// async fn search_docs(args: SearchArgs, #[inject] index: Store<DocIndex>) -> Result<Vec<String>, ToolError> {
///     Ok(index.search(&args.query))
/// }
/// ```
///
/// # Parameters
/// The model-visible input is either one argument struct or plain
/// parameters.
///
/// The argument struct is taken by name (`args: SearchArgs`) and must
/// implement `serde::Deserialize` and `schemars::JsonSchema`; its schema
/// (every object closed with `additionalProperties: false`) is the tool's
/// input schema. Add `#[serde(deny_unknown_fields)]` to argument structs so
/// that serde refuses exactly the keys the schema refuses.
///
/// Plain parameters (`async fn add(a: i64, b: i64)`) are gathered into a
/// generated struct named after the fn (`AddArgs`, with the fn's
/// visibility, `deny_unknown_fields`), whose schema is the input schema.
/// Each needs a description: a `///` doc comment on the parameter or
/// `#[arg(description = "...")]`. `Option<T>` parameters are optional;
/// `#[arg(default)]` and `#[arg(default = "path::to::fn")]` give serde
/// defaults; every other parameter is required. They own their values
/// (`String`, not `&str`).
///
/// The rule that tells them apart: a parameter without `#[inject]`, without
/// a description and whose type is not a plain type (a number, `bool`,
/// `char`, `String`, `Vec`, `Option`, a map or set, `Value`, `PathBuf`, a
/// tuple, an array, a reference) is the argument struct; every other
/// parameter without `#[inject]` is a plain parameter. Both at once is a
/// compile error. With neither, the tool takes an empty object.
///
/// Every other parameter carries `#[inject]` (no options) and is built for
/// each call by `tinyagents_tools::Inject`: `Ctx<C>`, `RunContext<C>`,
/// `ToolRuntime<C>`, `ThreadId`, `RunId`, `ToolCallId`, `State<T>`,
/// `Store<T>`, `Resource<T>`, `Secret<T>`, `EventEmitter`, `StreamWriter`,
/// `CancellationToken`, `WorkspaceRoot`, or your own type. Injected parameters
/// never appear in the schema; the spec lists them under `injected`.
///
/// # Return type
/// A plain `T`, or a `Result<T, E>` under any name (`anyhow::Result<T>`,
/// `std::io::Result<T>`, an alias of your own): the compiler decides through
/// `tinyagents_tools::ToolReturn`, not the word `Result`. `T` is `()`, a
/// `ToolOutput` (content blocks and artifacts), or any `serde::Serialize`
/// value (the structured result; its schema is the output schema when `T`
/// also implements `JsonSchema`). `E` is `ToolError`, `String`, any
/// `std::error::Error + Send + Sync + 'static` (its class chosen by
/// `tinyagents_tools::ClassifyError`), `Box<dyn Error + Send + Sync>` or
/// `anyhow::Error`; the model reads its `Display` text only, bounded.
///
/// # State and context types
/// The tool implements `Tool<S, C>`. `S` is taken from `state = Type`, else
/// from a `State<T>` parameter (`S = T`); `C` from `context = Type`, else from
/// a `Ctx<T>`, `RunContext<T>` or `ToolRuntime<T>` parameter. Otherwise the
/// tool works with any `S` and `C`. Name the state with `state = AppState`
/// when a `State<Part>` parameter takes a part of it through `FromState`.
///
/// # Calls that never wait
/// When the fn's body has no `.await` and no macro invocation other than
/// well-known ones that expand to plain code (`format!`, `vec!`, `json!`,
/// the assertion and logging macros, ...), the tool also implements
/// `Tool::call_now`, and the executor runs its calls at once, with no boxed
/// future. Any other body keeps the usual async call.
///
/// # Options
/// - `name = "search_docs"`: the tool name (default: the fn name). ASCII
///   snake_case, 1 to 64 characters, checked at compile time.
/// - `description = "..."`: what the model reads (default: the fn's doc
///   comment, paragraphs kept). One of the two is required.
/// - `title = "..."`: a human-readable title (MCP `title`).
/// - `read_only` | `mutating` | `destructive`: the effect (default
///   `mutating`). `read_only` excludes the other two.
/// - `idempotent`: repeating a call is safe (default: not idempotent).
/// - `local` | `networked`: the reach (default `networked`).
/// - `filesystem = "read"` | `filesystem = "write"`: filesystem access
///   (default none).
/// - `shell`: runs commands or spawns processes.
/// - `spend`: spends money or a paid quota.
/// - `requires_confirmation`: must be approved before it runs.
/// - `workspace`: its paths must stay inside the run's workspace root.
/// - `redact(fields = ["password"], patterns = ["sk-"], secrets = false)`:
///   JSON fields and text patterns to mask in its output; `secrets` (default
///   `true`) masks registered secret values.
/// - `unredacted_secrets`: the explicit opt-in `redact(secrets = false)`
///   needs (`ToolSafety::allow_unredacted_secrets`); without it,
///   `secrets = false` is a compile error, and it is one alone.
/// - `deterministic` | `deterministic_given_injected`: whether a recorded
///   result may be replayed (default: non-deterministic).
/// - `timeout = "30s"`: the tool's timeout; a string, an integer with unit
///   `ms`, `s`, `m` or `h`, not zero.
/// - `retry(max_attempts = 3, backoff = "100ms")`: attempts in total (at
///   least 2) and the first backoff (default `"100ms"`), growing
///   exponentially. Requires `idempotent`.
/// - `sequential`: never overlaps another call of the batch.
/// - `max_concurrency = 4`: at most this many calls of the tool at once
///   (at least 1; not with `sequential`).
/// - `tags = ["files", "search"]`: groups for per-turn selection.
/// - `example = r#"{"city": "Paris"}"#` (repeatable): an example of
///   arguments, a JSON object. Malformed JSON is a compile error; an
///   example the input schema refuses is a registration error naming the
///   field (`RegistryError::InvalidExample`). Anthropic declarations list
///   the examples as `input_examples`; other providers read them appended
///   to the description (`providers::description_with_examples`).
/// - `blocking`: the fn is synchronous and runs on tokio's blocking pool
///   (required for a sync fn, refused on an async fn).
/// - `isolated`: the fn runs in a worker process of
///   `tinyagents_tools::isolated` (the application calls `serve_if_worker`
///   with a `WorkerRegistry` holding `.entry::<CrunchTool>()` first thing in
///   `main`). `Tool::call` sends each call to `WorkerPool::global()`;
///   `CrunchTool::in_pool(pool)` uses another pool. Every `#[inject]`
///   parameter must implement `CrossesProcess` (ids, secrets), else a
///   compile error at its type. It never implements `call_now`; with
///   `blocking`, the fn is called as is in its worker.
/// - `max_memory = "256MiB"` (`KiB`, `MiB`, `GiB`) and `max_cpu = "2s"`
///   (`ms`, `s`, `m`, `h`): the worker's address-space and per-call CPU
///   limits, set by the OS. Only with `isolated`; not zero.
/// - `task = "optional"` | `task = "required"`: the tool may run as an MCP
///   task (`ToolSpec::task_support`, exported as `execution.taskSupport`):
///   a client that declared the tasks extension gets a task handle at once
///   and polls it; with `"required"`, a client that did not is refused.
///   Default `"forbidden"`.
/// - `escalates`: the tool's task begins where its body calls
///   `McpPeer::escalate` (`TaskStart::OnEscalate`); until then the call
///   runs in its request and asks its client in input rounds. Only with
///   `task`.
/// - `state = Type`, `context = Type`: the `S` and `C` of `Tool<S, C>`.
/// - `collect`: collect the tool at link time for
///   `ToolRegistry::from_collected()` (a tool without state or context;
///   needs the runtime crate's `collect` feature, a compile error otherwise).
/// - `crate = "my_crate::tools"` (or `crate = my_crate::tools`): where the
///   runtime crate is, for a crate that re-exports it under another path
///   (default `::tinyagents_tools`).
///
/// # Mistakes
/// Every mistake is a compile error at the token that is wrong, saying what
/// to write instead; all mistakes of one fn are reported together, and the
/// fn and its tool type are still emitted so that their uses add no errors
/// of their own.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into tools that share one
/// instance of the type: a database client, an HTTP client holding a pool,
/// an in-memory table. Register them all with
/// `registry.register_service(Arc::new(service))?`.
///
/// ```ignore
/// use std::sync::{Arc, Mutex};
/// use tinyagents_tools::prelude::*;
///
/// #[derive(Default)]
/// struct Counter {
///     count: Mutex<i64>,
/// }
///
/// #[tools]
/// impl Counter {
///     /// Add to the counter and return the new count.
///     #[tool]
///     async fn add(
///         &self,
///         /// How much to add.
///         n: i64,
///     ) -> i64 {
///         let mut count = self.count.lock().unwrap();
///         *count += n;
///         *count
///     }
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register_service(Arc::new(Counter::default()))?;
/// ```
///
/// Each `#[tool]` method takes `&self` and otherwise everything a free
/// `#[tool]` fn takes: the same options (except `isolated` and `collect`),
/// plain parameters or one argument struct, `#[inject]` parameters. Its tool
/// type is named after the type and the method (`CounterAddTool`, with the
/// method's visibility); `CounterAddTool::new(service)` builds it alone and
/// `CounterAddTool::spec()` gives its spec. The tool's name defaults to the
/// method's name. Methods without `#[tool]` stay as they are.
///
/// # Several blocks
/// A type may spread its tools over several `impl` blocks, in one module or
/// many. Mark the main block `#[tools]` and each further one
/// `#[tools(block = 2)]`, `#[tools(block = 3)]`, ... (up to 16, each number
/// once per type). Registering the service registers the tools of every
/// block: the main block's first, then block 2's, and so on. The blocks are
/// found at compile time (no list to keep, nothing collected at run time);
/// a number used twice is a compile error (conflicting implementations of
/// `ToolBlock<N>`).
///
/// # Options
/// - `block = N`: a further block of the type (2 to 16).
/// - `state = Type`, `context = Type`: the `S` and `C` of the service's
///   `ToolService<S, C>`, and the default `state`/`context` of the block's
///   methods. Without them the service works with a registry of any state
///   and context its tools accept. When a further block's tools need a
///   state or context type, name it on the main block.
/// - `crate = "path"`: where the runtime crate is, as for `#[tool]`.
///
/// # Refused
/// A generic `impl<T> Service<T>` block, a trait impl, a `#[tool]` method
/// taking `&mut self`, `self` or no receiver at all, and a block without
/// `#[tool]` methods are compile errors that say what to write instead.
/// `#[tool]` on a method outside a `#[tools]` block is a compile error that
/// names `#[tools]`.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    service::tools(args.into(), input.into()).into()
}
