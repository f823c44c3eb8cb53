//! Two small services whose tools share a name (`search`), for the toolset
//! example and its tests: GitHub issues and Jira tickets.

use tinyagents_tools::Toolset;
use tinyagents_tools::prelude::*;

/// What the model asks a service to find or open.
#[derive(Deserialize, JsonSchema)]
pub struct Query {
    /// What to find.
    text: String,
}

/// GitHub's tools.
pub mod github {
    use super::*;

    /// Searches GitHub issues.
    #[tool(read_only, tags = ["read"])]
    pub async fn search(args: Query) -> String {
        format!("github issues about {}", args.text)
    }

    /// Opens a GitHub issue.
    #[tool(mutating, tags = ["write"])]
    pub async fn open_issue(args: Query) -> String {
        format!("opened github issue {}", args.text)
    }
}

/// Jira's tools.
pub mod jira {
    use super::*;

    /// Searches Jira tickets.
    #[tool(read_only, tags = ["read"])]
    pub async fn search(args: Query) -> String {
        format!("jira tickets about {}", args.text)
    }
}

/// GitHub's two tools, under the toolset name `github`.
pub fn github() -> Toolset {
    Toolset::new("github")
        .tool(github::SearchTool)
        .tool(github::OpenIssueTool)
}

/// Jira's one tool, under the toolset name `jira`.
pub fn jira() -> Toolset {
    Toolset::new("jira").tool(jira::SearchTool)
}
