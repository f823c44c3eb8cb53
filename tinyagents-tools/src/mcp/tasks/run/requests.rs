//! The task requests any instance answers from the store: `tasks/get`,
//! `tasks/update` (answers to a task's questions) and `tasks/cancel`.

use super::*;

/// `tasks/get`: the task as it is. A working task whose owner is gone is
/// answered (and recorded) `failed`: its body may have run in part, and
/// it is never run again.
pub(crate) async fn get<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
) -> Result<GetTaskResult, ErrorData> {
    loop {
        let stored = read(core, task_id).await?;
        let now = now_ms();
        if !(stored.task.status == TaskStatus::Working && owner_gone(&stored.task, now)) {
            return detailed(&stored.task);
        }
        let gone = Outcome::Failed(error_object(
            ErrorCode::INTERNAL_ERROR,
            "the server instance running this task stopped before it ended: it may have run in part, and it is not run again",
            None,
        ));
        let task = gone.apply(stored.task, now);
        if core
            .tasks
            .store
            .replace(&task, stored.revision)
            .await
            .map_err(store_error)?
        {
            return detailed(&task);
        }
    }
}

/// True when the instance running `task` is gone at `now`.
pub(super) fn owner_gone(task: &TaskRecord, now: i64) -> bool {
    task.lease_until.is_some_and(|until| until < now)
        || task.owner.as_deref().is_some_and(process_gone)
}

/// `tasks/update`: takes the answers to pending requests (others are
/// ignored). Once none is pending, the body runs again here, with every
/// answer, and `peer` as its client.
pub(crate) async fn update<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
    responses: InputResponses,
    peer: Peer<RoleServer>,
) -> Result<(), ErrorData> {
    for (key, answer) in &responses {
        if !answer.is_object() {
            return Err(ErrorData::invalid_params(
                format!("inputResponses.{key} must be the result object of the request asked"),
                None,
            ));
        }
    }
    loop {
        let stored = read(core, task_id).await?;
        if stored.task.status != TaskStatus::InputRequired {
            return Ok(());
        }
        let mut task = stored.task;
        let mut taken = false;
        for (key, answer) in &responses {
            if task.input_requests.remove(key).is_some() {
                task.answers.insert(key.clone(), answer.clone());
                taken = true;
            }
        }
        if !taken {
            return Ok(());
        }
        let now = now_ms();
        task.updated_at = now;
        let resume = task.input_requests.is_empty();
        if resume {
            task.status = TaskStatus::Working;
            task.attempt += 1;
            task.owner = Some(core.tasks.owner.clone());
            task.lease_until = Some(now.saturating_add(millis(core.tasks.lease)));
        }
        if core
            .tasks
            .store
            .replace(&task, stored.revision)
            .await
            .map_err(store_error)?
        {
            if resume {
                start(core, &task, peer);
            }
            return Ok(());
        }
    }
}

/// `tasks/cancel`: a task not ended yet is `cancelled`, and its body's
/// cancellation fires (here at once, on another instance at its next
/// read); an ended task is left as it is.
pub(crate) async fn cancel<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
) -> Result<(), ErrorData> {
    loop {
        let stored = read(core, task_id).await?;
        if stored.task.status.is_terminal() {
            return Ok(());
        }
        let mut task = stored.task;
        task.input_requests.clear();
        let task = Outcome::Cancelled.apply(task, now_ms());
        if core
            .tasks
            .store
            .replace(&task, stored.revision)
            .await
            .map_err(store_error)?
        {
            core.tasks.cancel_here(task_id);
            return Ok(());
        }
    }
}

pub(super) async fn read<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
) -> Result<crate::mcp::tasks::StoredTask, ErrorData> {
    core.tasks
        .store
        .get(task_id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| unknown(task_id))
}
