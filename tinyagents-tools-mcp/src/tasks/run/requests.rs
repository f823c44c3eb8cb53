//! The task requests any instance answers from the store: `tasks/get`,
//! `tasks/update` (answers to a task's questions) and `tasks/cancel`.

use super::*;

/// What a request makes of the task it read: `Keep` leaves it as it is,
/// `Write` replaces it.
enum Change {
    Keep(TaskRecord),
    Write(TaskRecord),
}

/// Reads the task `task_id` and writes what `change` makes of it (given the
/// time of the read) at the revision read, again from a fresh read until no
/// other writer got there first. Returns the change made: the task kept as
/// it was, or the one written.
async fn compare_and_set<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
    mut change: impl FnMut(TaskRecord, i64) -> Change,
) -> Result<Change, ErrorData> {
    loop {
        let stored = read(core, task_id).await?;
        let task = match change(stored.task, now_ms()) {
            Change::Write(task) => task,
            kept => return Ok(kept),
        };
        let store = &core.tasks.store;
        if store
            .replace(&task, stored.revision)
            .await
            .map_err(store_error)?
        {
            return Ok(Change::Write(task));
        }
    }
}

/// `tasks/get`: the task as it is. A working task whose owner is gone is
/// answered (and recorded) `failed`: its body may have run in part, and
/// it is never run again.
pub(crate) async fn get<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let change = compare_and_set(core, task_id, |task, now| {
        if !(task.status == TaskStatus::Working && owner_gone(&task, now)) {
            return Change::Keep(task);
        }
        let gone = Outcome::Failed(error_object(
            ErrorCode::INTERNAL_ERROR,
            "the server instance running this task stopped before it ended: it may have run in part, and it is not run again",
            None,
        ));
        Change::Write(gone.apply(task, now))
    })
    .await?;
    let (Change::Keep(task) | Change::Write(task)) = change;
    detailed(&task)
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
    let change = compare_and_set(core, task_id, |mut task, now| {
        if task.status != TaskStatus::InputRequired {
            return Change::Keep(task);
        }
        let mut taken = false;
        for (key, answer) in &responses {
            if task.input_requests.remove(key).is_some() {
                task.answers.insert(key.clone(), answer.clone());
                taken = true;
            }
        }
        if !taken {
            return Change::Keep(task);
        }
        task.updated_at = now;
        if task.input_requests.is_empty() {
            // Every request is answered: the body runs again.
            task.status = TaskStatus::Working;
            task.attempt += 1;
            task.owner = Some(core.tasks.owner.clone());
            task.lease_until = Some(now.saturating_add(millis(core.tasks.lease)));
        }
        Change::Write(task)
    })
    .await?;
    if let Change::Write(task) = change
        && task.status == TaskStatus::Working
    {
        start(core, &task, peer);
    }
    Ok(())
}

/// `tasks/cancel`: a task not ended yet is `cancelled`, and its body's
/// cancellation fires (here at once, on another instance at its next
/// read); an ended task is left as it is.
pub(crate) async fn cancel<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
) -> Result<(), ErrorData> {
    let change = compare_and_set(core, task_id, |mut task, now| {
        if task.status.is_terminal() {
            return Change::Keep(task);
        }
        task.input_requests.clear();
        Change::Write(Outcome::Cancelled.apply(task, now))
    })
    .await?;
    if let Change::Write(_) = change {
        core.tasks.cancel_here(task_id);
    }
    Ok(())
}

pub(super) async fn read<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
) -> Result<crate::tasks::StoredTask, ErrorData> {
    core.tasks
        .store
        .get(task_id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| unknown(task_id))
}
