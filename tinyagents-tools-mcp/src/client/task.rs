//! A call the server answered with a task (the MCP tasks extension,
//! `resultType: "task"`): polled with `tasks/get` at the interval the server
//! asks for, its requests for input answered through the application's
//! handler with `tasks/update`, and cancelled with `tasks/cancel` when the
//! caller stops waiting before it ends.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, ErrorData, GetTaskParams, InputRequests, Task, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::Value;

use tinyagents_tools::error::{ErrorClass, ErrorKind, ToolError};

use super::input::{McpInputContext, answer_all};
use super::remote::{Rounds, TellOnDrop, service_error};

/// The poll interval when the server suggests none.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long the answer to `tasks/cancel` is waited for.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);
/// The shortest and longest poll intervals used, whatever the server asks.
const POLL_INTERVAL_BOUNDS: (Duration, Duration) =
    (Duration::from_millis(10), Duration::from_secs(30));

/// The wait before the next poll: what the server suggested, bounded.
fn poll_interval(suggested: Option<u64>) -> Duration {
    let (shortest, longest) = POLL_INTERVAL_BOUNDS;
    suggested
        .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
        .clamp(shortest, longest)
}

/// Follows the task `task` until it ends, and gives its result.
pub(super) async fn follow(
    peer: &Peer<RoleClient>,
    task: Task,
    rounds: &mut Rounds<'_>,
    context: &McpInputContext,
) -> Result<CallToolResult, ToolError> {
    // Unless the task ends, the server is told `tasks/cancel`.
    let cancel = CancelTaskParams::new(task.task_id.clone());
    let cancelling = peer.clone();
    let mut unfinished = TellOnDrop::armed(async move {
        // Bounded: a server that never answers keeps no task alive.
        let _ = tokio::time::timeout(CANCEL_TIMEOUT, cancelling.cancel_task(cancel)).await;
    });
    let mut wait =
        (task.status == TaskStatus::Working).then(|| poll_interval(task.poll_interval_ms));
    let mut answered: BTreeSet<String> = BTreeSet::new();
    loop {
        if let Some(wait) = wait {
            tokio::time::sleep(wait).await;
        }
        let polled = peer
            .get_task(GetTaskParams::new(task.task_id.clone()))
            .await
            .map_err(service_error)?
            .task;
        wait = Some(poll_interval(polled.task.poll_interval_ms));
        match polled.payload {
            TaskPayload::Working => {}
            TaskPayload::InputRequired { input_requests } => {
                let fresh: InputRequests = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if fresh.is_empty() {
                    // Answered already; the server has not caught up yet.
                    continue;
                }
                rounds.count()?;
                let responses = answer_all(rounds.handler(), context, &fresh).await?;
                answered.extend(fresh.into_keys());
                peer.update_task(UpdateTaskParams::new(task.task_id.clone(), responses))
                    .await
                    .map_err(service_error)?;
            }
            TaskPayload::Completed { result } => {
                unfinished.disarm();
                return serde_json::from_value(Value::Object(result)).map_err(|_| {
                    ToolError::fatal("the MCP server's task did not end with a tool result")
                });
            }
            TaskPayload::Failed { error } => {
                unfinished.disarm();
                return Err(
                    match serde_json::from_value::<ErrorData>(Value::Object(error)) {
                        Ok(data) => service_error(ServiceError::McpError(data)),
                        Err(_) => ToolError::fatal("the MCP server's task failed"),
                    },
                );
            }
            TaskPayload::Cancelled => {
                unfinished.disarm();
                return Err(ToolError::new(
                    ErrorClass::Fatal,
                    ErrorKind::Cancelled,
                    "the MCP server cancelled the call's task",
                ));
            }
            _ => {
                return Err(ToolError::fatal(
                    "the MCP server's task is in a state this client does not know",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_interval_is_the_servers_within_bounds() {
        assert_eq!(poll_interval(Some(150)), Duration::from_millis(150));
        assert_eq!(poll_interval(None), DEFAULT_POLL_INTERVAL);
        assert_eq!(poll_interval(Some(0)), Duration::from_millis(10));
        assert_eq!(poll_interval(Some(u64::MAX)), Duration::from_secs(30));
    }
}
