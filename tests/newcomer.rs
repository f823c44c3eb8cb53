//! A newcomer's first hour: the rough edges met writing two tools from the
//! README alone.

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::ToolHarness;
use tinyagents_tools::{ErrorClass, WorkspaceRoot};

/// A temperature unit.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
struct ForecastArgs {
    /// The city.
    city: String,
    /// The unit of the answer.
    unit: Unit,
}

/// Tomorrow's temperature in a city.
#[tool]
async fn forecast(args: ForecastArgs) -> String {
    let degrees = match args.unit {
        Unit::Celsius => "20 °C",
        Unit::Fahrenheit => "68 °F",
    };
    format!("{}: {degrees}", args.city)
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// Lists the workspace.
#[tool]
async fn list_workspace(_args: Nothing, #[inject] root: WorkspaceRoot) -> String {
    root.path().display().to_string()
}

#[test]
fn a_documented_enum_is_a_one_of_of_consts_in_the_schema() {
    let schema = ForecastTool::spec().input_schema.as_value().clone();
    let text = schema.to_string();
    assert!(text.contains("oneOf"), "{text}");
    assert!(text.contains("Degrees Celsius."), "{text}");
}

#[tokio::test]
async fn a_documented_enum_gives_the_allowed_values_in_the_repair_message() {
    let harness = ToolHarness::builder(ForecastTool).build().unwrap();
    let error = harness
        .call_err(json!({"city": "Paris", "unit": "kelvin"}))
        .await;
    assert_eq!(
        error.message(),
        "invalid arguments: `unit`: must be one of: \"celsius\", \"fahrenheit\""
    );
    let error = harness.call_err(json!({"city": "Paris", "unit": 3})).await;
    assert_eq!(
        error.message(),
        "invalid arguments: `unit`: must be one of: \"celsius\", \"fahrenheit\""
    );
}

#[tokio::test]
async fn a_registry_and_an_executor_infer_their_types_without_annotations() {
    let mut registry = ToolRegistry::new();
    registry.register(ForecastTool).unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["forecast"]);
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let call = ToolCall::new("c1", "forecast", r#"{"city": "Oslo", "unit": "celsius"}"#);
    let result = executor
        .execute(&RunContext::empty(), &Turn::new(1), call)
        .await;
    assert_eq!(result.text(), "Oslo: 20 °C");
}

#[tokio::test]
async fn a_runtime_errors_display_says_its_cause_and_the_model_sees_only_the_message() {
    let harness = ToolHarness::builder(ListWorkspaceTool).build().unwrap();
    let result = harness.call(json!({})).await;
    let error = result.error.as_ref().unwrap();
    assert!(matches!(error.kind(), ErrorKind::InjectionFailed { .. }));
    assert_eq!(
        error.to_string(),
        "the tool could not run: a resource it needs is not available (cause: the run has no workspace root)"
    );
    assert_eq!(
        result.text(),
        "the tool could not run: a resource it needs is not available"
    );
}

#[test]
fn a_display_does_not_repeat_a_cause_the_message_already_says() {
    let error = ToolError::from_error(std::io::Error::other("disk full"), ErrorClass::Retry);
    assert_eq!(error.to_string(), "disk full");
}

/// A harness over both tools.
fn forecast_and_workspace() -> ToolHarness {
    ToolHarness::builder(ForecastTool)
        .tool(ListWorkspaceTool)
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_unknown_tool_name_close_to_an_offered_one_gets_did_you_mean() {
    let harness = forecast_and_workspace();
    let result = harness.call_tool("forcast", json!({})).await;
    assert_eq!(result.outcome(), "unknown_tool");
    assert_eq!(
        result.text(),
        "there is no tool named `forcast`; did you mean `forecast`?"
    );
    let far = harness.call_tool("translate", json!({})).await;
    assert_eq!(
        far.text(),
        "there is no tool named `translate`; call one of the tools you were given"
    );
}

#[tokio::test]
async fn did_you_mean_never_names_a_tool_not_offered_this_turn() {
    let harness = forecast_and_workspace();
    let turn = Turn::new(1).advertising(["list_workspace"]);
    let call = ToolCall::new("c1", "forcast", "{}");
    let result = harness.executor().execute(harness.run(), &turn, call).await;
    assert_eq!(
        result.text(),
        "there is no tool named `forcast`; call one of the tools you were given"
    );
}

/// A newcomer's setup functions, written with the prelude alone: the errors
/// `register` and `build` return are named without another import.
mod prelude_only {
    use tinyagents_tools::prelude::*;

    /// Nothing to say.
    #[tool(read_only, idempotent)]
    async fn ping() -> String {
        "pong".into()
    }

    pub fn registry() -> Result<ToolRegistry, RegistryError> {
        let mut registry = ToolRegistry::new();
        registry.register(PingTool)?;
        Ok(registry)
    }

    pub fn executor(registry: ToolRegistry) -> Result<ToolExecutor, ExecutorBuildError> {
        ToolExecutor::builder(registry, ()).build()
    }

    pub fn class(result: &ToolResult) -> Option<ErrorClass> {
        result.error.as_ref().map(ToolError::class)
    }
}

#[tokio::test]
async fn the_errors_of_register_and_build_are_named_from_the_prelude_alone() {
    let registry = prelude_only::registry().unwrap();
    let executor = prelude_only::executor(registry).unwrap();
    let run = RunContext::empty();
    let pong = executor
        .execute(&run, &Turn::new(1), ToolCall::new("c1", "ping", "{}"))
        .await;
    assert_eq!(
        (pong.text(), prelude_only::class(&pong)),
        ("pong".to_owned(), None)
    );
    let unknown = executor
        .execute(&run, &Turn::new(1), ToolCall::new("c2", "pong", "{}"))
        .await;
    assert_eq!(prelude_only::class(&unknown), Some(ErrorClass::Repair));
    let mut twice = prelude_only::registry().unwrap();
    twice.register(ForecastTool).unwrap();
    let duplicate: RegistryError = twice.register(ForecastTool).map(|_| ()).unwrap_err();
    assert!(duplicate.to_string().contains("forecast"), "{duplicate}");
}

/// The crates named at the root of `use` paths, attribute paths and macro
/// paths in the compiled Rust snippets of `text` (blocks opened with
/// ```` ```rust ````, not `rust,ignore`).
fn crates_used_by_snippets(text: &str) -> Vec<String> {
    let mut crates = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            in_block = !in_block && (info == "rust" || info == "rust,no_run");
            continue;
        }
        if !in_block {
            continue;
        }
        let code = trimmed.trim_start_matches("# ");
        let roots = [
            code.strip_prefix("use "),
            code.strip_prefix("#[").filter(|rest| rest.contains("::")),
        ];
        for rest in roots.into_iter().flatten() {
            let root: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rest[root.len()..].starts_with("::") && !crates.contains(&root) {
                crates.push(root);
            }
        }
    }
    crates
}

#[test]
fn the_readmes_install_block_lists_every_crate_the_guides_snippets_use() {
    let readme = include_str!("../README.md");
    let install = &readme[readme.find("## Install").unwrap()..];
    let toml = &install[install.find("```toml\n").unwrap()..];
    let toml = &toml[..toml[3..].find("```").unwrap()];
    let listed: Vec<String> = toml
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(name, _)| name.trim().replace('-', "_"))
        .collect();
    let pages = [
        readme,
        include_str!("../tinyagents-tools/docs/tools.md"),
        include_str!("../tinyagents-tools/docs/injection.md"),
        include_str!("../tinyagents-tools/docs/executor.md"),
        include_str!("../tinyagents-tools/docs/providers.md"),
        include_str!("../tinyagents-tools/docs/journal.md"),
        include_str!("../tinyagents-tools/docs/middleware-and-policies.md"),
        include_str!("../tinyagents-tools/docs/testing.md"),
    ];
    let mut used = Vec::new();
    for page in pages {
        used.extend(crates_used_by_snippets(page));
    }
    assert!(used.iter().any(|c| c == "serde_json"), "{used:?}");
    for name in used {
        let own = ["std", "tinyagents_tools"].contains(&name.as_str());
        assert!(
            own || listed.contains(&name),
            "the snippets use `{name}`, which the README's install block does not list: {listed:?}"
        );
    }
}
