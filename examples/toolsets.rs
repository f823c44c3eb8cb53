//! Toolsets that compose: two services whose tools share names, merged
//! under prefixes, a rename, a filter by tag, and the collision error that
//! names both origins when they are merged as they are.
//!
//! `cargo run --example toolsets`

use tinyagents_tools::prelude::*;

use tinyagents_tools_examples::services::{github, jira};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // As they are, both services offer `search`: the merge says who.
    let clash = github().merge(jira()).err().expect("a collision");
    println!("merged as they are: {clash}\n");

    // Prefixed, they compose; only the read tools of GitHub, and Jira's
    // search renamed.
    let registry = github()
        .tagged("read")
        .prefixed("github_")?
        .merge(jira().rename("search", "jira_tickets")?)?
        .into_registry()?;
    for tool in registry.iter() {
        println!(
            "{:<14} from {}",
            tool.spec().name.as_str(),
            tool.origin().unwrap_or("-")
        );
    }

    let executor = ToolExecutor::builder(registry, ()).build()?;
    let calls = vec![
        ToolCall::new("c1", "github_search", r#"{"text": "flaky test"}"#),
        ToolCall::new("c2", "jira_tickets", r#"{"text": "flaky test"}"#),
        ToolCall::new("c3", "search", r#"{"text": "flaky test"}"#),
    ];
    println!();
    for result in executor
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await
    {
        println!(
            "{} {}: {}",
            result.tool_call_id,
            result.outcome(),
            result.text()
        );
    }
    Ok(())
}
