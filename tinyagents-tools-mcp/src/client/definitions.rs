//! What the client knows of each imported remote tool's definition: the
//! fingerprint recorded at import, the definition calls are checked against,
//! and the changes a later listing found (a "rug pull": the server changing
//! a tool after it was imported).
//!
//! A tool whose listed definition differs from the recorded one is refused
//! until the application accepts the change; a tool the server stopped
//! listing is refused; a tool that appeared is listed, never imported by a
//! re-listing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::sync::lock;
use tinyagents_tools::hash::canonical_hash;

use super::bounded;
use super::convert::{local_input_schema, wraps_result};

/// The SHA-256 fingerprints ([`canonical_hash`]) of one remote tool's
/// definition, whole and by part, each 64 lowercase hex digits. An absent
/// part is hashed as `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ToolFingerprint {
    /// Of the whole definition: `{"name", "title", "description",
    /// "inputSchema", "outputSchema", "annotations"}`.
    pub definition: String,
    /// Of `title`.
    pub title: String,
    /// Of `description`.
    pub description: String,
    /// Of `inputSchema`.
    pub input_schema: String,
    /// Of `outputSchema`.
    pub output_schema: String,
    /// Of `annotations`.
    pub annotations: String,
}

impl ToolFingerprint {
    /// The fingerprints of `tool` as the server lists it.
    pub fn of(tool: &rmcp::model::Tool) -> Self {
        let parts = json!({
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "inputSchema": tool.input_schema,
            "outputSchema": tool.output_schema,
            "annotations": tool.annotations,
        });
        let part = |key: &str| canonical_hash(&parts[key]);
        ToolFingerprint {
            definition: canonical_hash(&parts),
            title: part("title"),
            description: part("description"),
            input_schema: part("inputSchema"),
            output_schema: part("outputSchema"),
            annotations: part("annotations"),
        }
    }

    /// The parts whose fingerprints differ between `self` and `other`, in
    /// the order of [`DefinitionPart`].
    pub fn changed_parts(&self, other: &ToolFingerprint) -> Vec<DefinitionPart> {
        DefinitionPart::ALL
            .into_iter()
            .filter(|part| self.part(*part) != other.part(*part))
            .collect()
    }

    fn part(&self, part: DefinitionPart) -> &str {
        match part {
            DefinitionPart::Title => &self.title,
            DefinitionPart::Description => &self.description,
            DefinitionPart::InputSchema => &self.input_schema,
            DefinitionPart::OutputSchema => &self.output_schema,
            DefinitionPart::Annotations => &self.annotations,
        }
    }
}

/// One part of a remote tool's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DefinitionPart {
    /// `title`.
    Title,
    /// `description`.
    Description,
    /// `inputSchema`.
    InputSchema,
    /// `outputSchema`.
    OutputSchema,
    /// `annotations` (the safety hints among them).
    Annotations,
}

impl DefinitionPart {
    const ALL: [DefinitionPart; 5] = [
        DefinitionPart::Title,
        DefinitionPart::Description,
        DefinitionPart::InputSchema,
        DefinitionPart::OutputSchema,
        DefinitionPart::Annotations,
    ];

    /// `title`, `description`, `input schema`, `output schema` or
    /// `annotations`.
    pub fn as_str(self) -> &'static str {
        match self {
            DefinitionPart::Title => "title",
            DefinitionPart::Description => "description",
            DefinitionPart::InputSchema => "input schema",
            DefinitionPart::OutputSchema => "output schema",
            DefinitionPart::Annotations => "annotations",
        }
    }
}

impl fmt::Display for DefinitionPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a listed tool differs from what was imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// The server lists an imported tool with another definition: it is
    /// refused until the change is accepted.
    Changed,
    /// The server no longer lists an imported tool: it is refused.
    Removed,
    /// The server lists a tool no import saw: nothing imports it but an
    /// explicit [`import_into`](super::McpClient::import_into).
    Added,
}

/// A difference between the tools the server lists and the ones imported,
/// waiting for the application's decision
/// ([`accept_change`](super::McpClient::accept_change)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DefinitionChange {
    /// The tool's name on the server (cut to 128 bytes).
    pub remote_name: String,
    /// Changed, removed or added.
    pub kind: ChangeKind,
    /// The parts that differ (empty unless [`ChangeKind::Changed`]).
    pub parts: Vec<DefinitionPart>,
    /// The fingerprints calls are checked against (`None` for an added
    /// tool).
    pub recorded: Option<ToolFingerprint>,
    /// The fingerprints of the definition the server lists now (`None` for
    /// a removed tool).
    pub listed: Option<ToolFingerprint>,
}

/// Why [`accept_change`](super::McpClient::accept_change) accepted nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AcceptError {
    /// No change of a tool of that name is waiting.
    #[error("no change of the MCP tool `{0}` is waiting to be accepted")]
    NoChange(String),
    /// The change waiting for that tool is not the one given: the server
    /// listed another definition since. Read
    /// [`changed_tools`](super::McpClient::changed_tools) again.
    #[error("the change of the MCP tool `{0}` was replaced by a later listing")]
    Superseded(String),
    /// The new definition cannot be checked against: its input or output
    /// schema does not compile. The tool stays refused.
    #[error("the new definition of the MCP tool `{tool}` cannot be used: {reason}")]
    InvalidDefinition {
        /// The tool's name on the server.
        tool: String,
        /// What is wrong, in a sentence.
        reason: String,
    },
}

/// The definition a remote tool's calls are checked against.
pub(super) struct Accepted {
    pub(super) fingerprint: ToolFingerprint,
    /// Its local input schema (optional arguments nullable), compiled.
    pub(super) input: jsonschema::Validator,
    pub(super) output: Option<jsonschema::Validator>,
    /// Its `outputSchema` wraps its value in `result`, which a call's
    /// answer unwraps ([`wraps_result`]).
    pub(super) wrapped: bool,
    /// Optional arguments made nullable locally; a `null` one is left out.
    pub(super) nullable: Vec<String>,
}

impl Accepted {
    /// `tool`'s definition, compiled, or the rule it breaks
    /// (`invalid_schema`, `invalid_output_schema`) and why.
    pub(super) fn compile(tool: &rmcp::model::Tool) -> Result<Self, (&'static str, String)> {
        let (schema, nullable) = local_input_schema(&tool.input_schema);
        let input = tinyagents_tools::registry::compile_schema(&schema)
            .map_err(|e| ("invalid_schema", e.to_string()))?;
        let output = match &tool.output_schema {
            None => None,
            Some(schema) => Some(
                jsonschema::validator_for(&Value::Object((**schema).clone()))
                    .map_err(|e| ("invalid_output_schema", e.to_string()))?,
            ),
        };
        Ok(Accepted {
            fingerprint: ToolFingerprint::of(tool),
            input,
            output,
            wrapped: tool.output_schema.as_deref().is_some_and(wraps_result),
            nullable,
        })
    }
}

/// What was found of one imported tool at the last listing.
enum Pending {
    /// Listed with this other definition.
    Changed(Box<rmcp::model::Tool>, ToolFingerprint),
    /// Not listed.
    Removed,
}

struct Record {
    accepted: Arc<Accepted>,
    pending: Option<Pending>,
}

#[derive(Default)]
struct Known {
    /// The imported tools, by remote name.
    records: BTreeMap<String, Record>,
    /// Every name an import listed (imported or refused): not "added".
    seen: BTreeSet<String>,
    /// Listed tools no import saw, with their fingerprints.
    added: BTreeMap<String, ToolFingerprint>,
}

/// Whether a remote tool may be called, and against what.
pub(super) enum Standing {
    /// Callable, checked against this definition.
    Current(Arc<Accepted>),
    /// Refused: its definition changed in these parts.
    Changed(Vec<DefinitionPart>),
    /// Refused: the server no longer lists it.
    Removed,
}

/// The definitions of one client's imported tools.
#[derive(Default)]
pub(super) struct Definitions {
    known: Mutex<Known>,
    /// How many `tools/list_changed` notifications arrived.
    notices: AtomicU64,
    /// The notice count a successful listing started at: no check is owed
    /// while it equals [`notices`](Self::notices).
    checked: AtomicU64,
    /// Held while a listing is compared, so a call that owes a check waits
    /// for one in progress instead of starting another.
    pub(super) listing: tokio::sync::Mutex<()>,
    /// Whether a comparison started by a notice is waiting to run: a flood
    /// of notices starts one, not one each.
    scheduled: AtomicBool,
}

impl Definitions {
    /// Counts a `tools/list_changed` notification.
    pub(super) fn notice(&self) {
        self.notices.fetch_add(1, Ordering::AcqRel);
    }

    /// The notice count to hand to [`relist`](Self::relist) for a listing
    /// started now.
    pub(super) fn notices(&self) -> u64 {
        self.notices.load(Ordering::Acquire)
    }

    /// Marks a comparison as scheduled; false when one already was.
    pub(super) fn schedule(&self) -> bool {
        !self.scheduled.swap(true, Ordering::AcqRel)
    }

    /// Clears the mark of [`schedule`](Self::schedule): a listing is about
    /// to be compared (with the listing lock held).
    pub(super) fn unschedule(&self) {
        self.scheduled.store(false, Ordering::Release);
    }

    /// Whether a notice arrived since the start of the last listing.
    pub(super) fn owes_check(&self) -> bool {
        self.notices.load(Ordering::Acquire) > self.checked.load(Ordering::Acquire)
    }

    /// Whether any tool was imported.
    pub(super) fn is_empty(&self) -> bool {
        lock(&self.known).records.is_empty()
    }

    /// Compares a full listing, started at notice count `started`, with the
    /// imported tools.
    pub(super) fn relist(&self, listed: &[rmcp::model::Tool], started: u64) {
        let listed: BTreeMap<&str, &rmcp::model::Tool> =
            listed.iter().map(|t| (t.name.as_ref(), t)).collect();
        let mut known = lock(&self.known);
        let Known {
            records,
            seen,
            added,
        } = &mut *known;
        for (name, record) in records.iter_mut() {
            record.pending = match listed.get(name.as_str()) {
                None => Some(Pending::Removed),
                Some(tool) => {
                    let fingerprint = ToolFingerprint::of(tool);
                    (fingerprint != record.accepted.fingerprint)
                        .then(|| Pending::Changed(Box::new((*tool).clone()), fingerprint))
                }
            };
        }
        added.clear();
        for (name, tool) in &listed {
            if !records.contains_key(*name) && !seen.contains(*name) {
                added.insert((*name).to_owned(), ToolFingerprint::of(tool));
            }
        }
        drop(known);
        self.checked.fetch_max(started, Ordering::AcqRel);
    }

    /// Records `tool` as imported now, with its compiled definition.
    pub(super) fn record(&self, tool: &rmcp::model::Tool, accepted: Accepted) {
        let mut known = lock(&self.known);
        let name = tool.name.to_string();
        known.added.remove(&name);
        known.seen.insert(name.clone());
        known.records.entry(name).or_insert(Record {
            accepted: Arc::new(accepted),
            pending: None,
        });
    }

    /// Notes that an import saw `name` (and left it out).
    pub(super) fn saw(&self, name: &str) {
        let mut known = lock(&self.known);
        known.added.remove(name);
        known.seen.insert(name.to_owned());
    }

    /// Whether `name` was imported before, and if so the parts of its
    /// listed definition that differ from the accepted one (empty when
    /// none do).
    pub(super) fn recorded_parts(&self, tool: &rmcp::model::Tool) -> Option<Vec<DefinitionPart>> {
        let known = lock(&self.known);
        let record = known.records.get(tool.name.as_ref())?;
        Some(
            record
                .accepted
                .fingerprint
                .changed_parts(&ToolFingerprint::of(tool)),
        )
    }

    /// Whether the tool named `remote` on the server may be called.
    pub(super) fn standing(&self, remote: &str) -> Standing {
        let known = lock(&self.known);
        match known.records.get(remote) {
            None
            | Some(Record {
                pending: Some(Pending::Removed),
                ..
            }) => Standing::Removed,
            Some(Record {
                accepted,
                pending: Some(Pending::Changed(_, listed)),
            }) => Standing::Changed(accepted.fingerprint.changed_parts(listed)),
            Some(Record { accepted, .. }) => Standing::Current(Arc::clone(accepted)),
        }
    }

    /// The recorded fingerprints, by remote name.
    pub(super) fn fingerprints(&self) -> BTreeMap<String, ToolFingerprint> {
        lock(&self.known)
            .records
            .iter()
            .map(|(name, record)| (name.clone(), record.accepted.fingerprint.clone()))
            .collect()
    }

    /// The changes waiting for a decision: changed and removed tools, then
    /// added ones, each by name.
    pub(super) fn changes(&self) -> Vec<DefinitionChange> {
        let known = lock(&self.known);
        let mut changes: Vec<DefinitionChange> = known
            .records
            .iter()
            .filter_map(|(name, record)| {
                let recorded = record.accepted.fingerprint.clone();
                let (kind, parts, listed) = match record.pending.as_ref()? {
                    Pending::Removed => (ChangeKind::Removed, Vec::new(), None),
                    Pending::Changed(_, listed) => (
                        ChangeKind::Changed,
                        recorded.changed_parts(listed),
                        Some(listed.clone()),
                    ),
                };
                Some(DefinitionChange {
                    remote_name: bounded(name, 128),
                    kind,
                    parts,
                    recorded: Some(recorded),
                    listed,
                })
            })
            .collect();
        changes.extend(known.added.iter().map(|(name, listed)| DefinitionChange {
            remote_name: bounded(name, 128),
            kind: ChangeKind::Added,
            parts: Vec::new(),
            recorded: None,
            listed: Some(listed.clone()),
        }));
        changes
    }

    /// Accepts `change` when it is still the one waiting: a changed tool
    /// is then checked against the definition `change` describes, a removed
    /// one is forgotten, an added one no longer listed.
    pub(super) fn accept(&self, change: &DefinitionChange) -> Result<(), AcceptError> {
        let name = change.remote_name.as_str();
        let waiting = self.changes().into_iter().find(|c| c.remote_name == name);
        match waiting {
            None => return Err(AcceptError::NoChange(bounded(name, 128))),
            Some(waiting) if waiting != *change => {
                return Err(AcceptError::Superseded(bounded(name, 128)));
            }
            Some(_) => {}
        }
        let mut known = lock(&self.known);
        match change.kind {
            ChangeKind::Added => {
                known.added.remove(name);
                known.seen.insert(name.to_owned());
            }
            ChangeKind::Removed => {
                known.records.remove(name);
                known.seen.remove(name);
            }
            ChangeKind::Changed => {
                let record = known.records.get_mut(name);
                let Some(record) = record else {
                    return Err(AcceptError::Superseded(bounded(name, 128)));
                };
                let Some(Pending::Changed(tool, listed)) = &record.pending else {
                    return Err(AcceptError::Superseded(bounded(name, 128)));
                };
                if Some(listed) != change.listed.as_ref() {
                    return Err(AcceptError::Superseded(bounded(name, 128)));
                }
                let accepted = Accepted::compile(tool).map_err(|(_, reason)| {
                    AcceptError::InvalidDefinition {
                        tool: bounded(name, 128),
                        reason: bounded(&reason, 500),
                    }
                })?;
                record.accepted = Arc::new(accepted);
                record.pending = None;
            }
        }
        Ok(())
    }
}
