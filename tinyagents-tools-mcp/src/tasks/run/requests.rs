//! The task requests any instance answers from the store: `tasks/get`,
//! `tasks/update` (answers to a task's questions) and `tasks/cancel`.

use super::*;
use tinyagents_tools::journal::{CallQuery, JournalError};

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
/// it is never run again. A task whose call waits for an approval that is
/// now decided (or expired) is claimed by this instance, which makes the
/// call again under its journal key (the journal runs it once, or answers
/// the refusal) with `peer` as its client.
pub(crate) async fn get<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
    peer: Peer<RoleServer>,
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
    if task.status == TaskStatus::Working
        && task.owner.is_none()
        && let Some(approval) = task.approval.clone()
        && let Some(claimed) = claim_decided(core, task_id, &approval, peer).await?
    {
        return detailed(&claimed);
    }
    detailed(&task)
}

/// Claims task `task_id`, whose call waits for `approval`, once the
/// approval is decided or expired, and starts its call again under its
/// journal key; the task as it then is, or `None` while the approval
/// waits.
async fn claim_decided<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
    approval: &str,
    peer: Peer<RoleServer>,
) -> Result<Option<TaskRecord>, ErrorData> {
    let Some(journal) = core.executor.journal() else {
        return Ok(None);
    };
    let journal_error =
        |e: JournalError| ErrorData::internal_error(format!("the journal failed: {e}"), None);
    let entry = journal.approval(approval).await.map_err(journal_error)?;
    let expired = entry
        .request
        .expires_at
        .is_some_and(|at| at <= std::time::SystemTime::now());
    if entry.decision.is_none() && !expired {
        return Ok(None);
    }
    let query = CallQuery {
        approval_id: Some(approval.to_owned()),
        ..CallQuery::default()
    };
    let Some(call) = journal
        .calls(&query)
        .await
        .map_err(journal_error)?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let change = compare_and_set(core, task_id, |mut task, now| {
        let waits = task.status == TaskStatus::Working
            && task.owner.is_none()
            && task.approval.as_deref() == Some(approval);
        if !waits {
            return Change::Keep(task);
        }
        task.approval = None;
        task.status_message = Some(format!("approval {approval} decided: answering the call"));
        task.owner = Some(core.tasks.owner.clone());
        task.lease_until = Some(now.saturating_add(millis(core.tasks.lease)));
        task.updated_at = now;
        Change::Write(task)
    })
    .await?;
    Ok(Some(match change {
        Change::Write(task) => {
            start(core, &task, peer, Some(&call.key));
            task
        }
        Change::Keep(task) => task,
    }))
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
        start(core, &task, peer, None);
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
