//! What a journaled call carries through the steps, and the step only it
//! has: the write-ahead `started` record before a body that may not run
//! twice.

use std::time::Duration;

use serde_json::Value;

use super::CallCx;
use super::answer::Stop;
use crate::approval::{ApprovalRecord, ApprovalRequest};
use crate::error::ToolError;
use crate::executor::ToolExecutor;
use crate::journal::{Admission, Journal, JournalError, Stored};
use crate::registry::RegisteredTool;
use crate::tool::Shared;

/// A journaled call's state in the journal and what its steps decided
/// about it.
pub(crate) struct DurableCx {
    pub(crate) journal: Journal,
    /// The record as last read or written.
    pub(crate) stored: Stored,
    /// The decision (or standing grant) the journal holds for the call,
    /// shown to the `before_tool` hooks.
    pub(crate) journaled: Option<ApprovalRecord>,
    /// A decision a hook made in this process, for the journal.
    pub(crate) decided: Option<ApprovalRecord>,
    /// The call waits for a decision: the request (arguments masked) and
    /// the arguments to run with once decided.
    pub(crate) pending: Option<(Box<ApprovalRequest>, Value)>,
    /// Another instance changed the record first: the call is answered
    /// as the journal then says.
    pub(crate) journal_says: Option<Admission>,
    /// This call wrote `started` before its body.
    pub(crate) claimed: bool,
    /// The journal failed while the call went through its steps.
    pub(crate) failed: Option<JournalError>,
}

impl DurableCx {
    pub(crate) fn new(journal: Journal, stored: Stored, journaled: Option<ApprovalRecord>) -> Self {
        DurableCx {
            journal,
            stored,
            journaled,
            decided: None,
            pending: None,
            journal_says: None,
            claimed: false,
            failed: None,
        }
    }

    /// True when the call's answer is not the steps' own (it waits, or the
    /// journal answers it): its steps' last event is not emitted.
    pub(crate) fn answered_elsewhere(&self) -> bool {
        self.pending.is_some() || self.journal_says.is_some()
    }
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Between steps 5 and 6, for a journaled call to a tool that is
    /// neither read-only nor idempotent: its `started` record is committed
    /// before its body runs. When another instance changed the record
    /// first, the call is answered as the journal says and this body never
    /// runs; when the journal cannot be written, the call is not run.
    pub(super) async fn write_ahead(
        &self,
        cx: &mut CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: &Value,
    ) -> Result<(), Stop> {
        let Some(durable) = cx.durable.as_deref_mut() else {
            return Ok(());
        };
        let safety = &registered.spec().safety;
        if safety.is_read_only() || safety.idempotency.is_idempotent() {
            return Ok(());
        }
        let timeout = registered
            .spec()
            .timeout
            .unwrap_or(self.config.default_timeout);
        let bound = timeout + self.config.cancel_grace + Duration::from_secs(1);
        let approval = durable.decided.clone();
        let journal = durable.journal.clone();
        match journal
            .claim(&mut durable.stored, arguments, approval, bound)
            .await
        {
            Ok(true) => {
                durable.claimed = true;
                Ok(())
            }
            Ok(false) => {
                let record = &durable.stored.record;
                let readmitted = journal
                    .admit(
                        &record.key,
                        &record.tool,
                        &record.fingerprint,
                        &record.arguments,
                        false,
                        cx.run.cancellation(),
                    )
                    .await;
                match readmitted {
                    Ok(admission) => {
                        durable.journal_says = Some(admission);
                        Err(Stop::rejected(ToolError::journal_unavailable()))
                    }
                    Err(e) => {
                        durable.failed = Some(e);
                        Err(Stop::rejected(ToolError::journal_unavailable()))
                    }
                }
            }
            Err(e) => {
                durable.failed = Some(e);
                Err(Stop::rejected(ToolError::journal_unavailable()))
            }
        }
    }
}
