//! Input rounds (MCP 2026-07-28, SEP-2322): a call that needs its client's
//! input ends with an `input_required` result listing what it asks, and the
//! client calls again with the answers. Nothing is kept between the two
//! requests: what the server must remember travels in `requestState`,
//! sealed here.
//!
//! The sealed state (HMAC-SHA256 under the server's key, rmcp's
//! [`RequestStateCodec`]) carries the keys the server asked, the answers
//! gathered in earlier rounds and a nonce, and is bound to the call: the
//! tool and the fingerprint of its arguments are mixed into its tag, and it
//! expires. On the next request, answers are taken only for keys the
//! sealed state says were asked, and a state is accepted once: a tampered,
//! replayed, expired, self-made or foreign one (another call's, another
//! server key's) is refused with a JSON-RPC `-32602` before anything runs.
//! An answer sent without a state is ignored, so a client can never answer
//! a question it was not asked (an approval included).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use rmcp::model::{InputRequest, InputRequests, InputResponses, RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::sync::lock;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::journal::Journal;

/// The longest `requestState` a client may send back (64 KiB).
pub const MAX_REQUEST_STATE_BYTES: usize = 64 * 1024;

/// How long a sealed state is accepted by default (10 minutes).
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// What a sealed `requestState` carries.
#[derive(Serialize, Deserialize)]
struct Carried {
    /// The keys the server asked in the round that sealed it.
    asked: Vec<String>,
    /// Answers gathered so far, by key.
    answers: Map<String, Value>,
    /// Makes each state single-use.
    nonce: String,
}

/// The server's sealing key, its states' lifetime and the nonces already
/// used.
pub(crate) struct Sealer {
    codec: RequestStateCodec,
    ttl: Duration,
    used: Mutex<HashMap<String, i64>>,
    /// Where every instance records the states it accepted, when they
    /// share one: a state is then accepted once across all of them.
    shared: Option<Journal>,
}

impl Sealer {
    /// A sealer under `key` (at least 32 bytes; `None`: a random key of
    /// this process, which only this process can open).
    pub(crate) fn new(key: Option<Vec<u8>>, ttl: Duration) -> Result<Self, String> {
        let key = key.unwrap_or_else(random_key);
        let codec = RequestStateCodec::try_new(key).map_err(|e| {
            format!(
                "the request-state key must be at least {} bytes: {e}",
                RequestStateCodec::MIN_KEY_LENGTH
            )
        })?;
        Ok(Sealer {
            codec,
            ttl,
            used: Mutex::new(HashMap::new()),
            shared: None,
        })
    }

    /// Records accepted states in `journal` too (see
    /// [`McpServerBuilder::request_state_journal`](super::McpServerBuilder::request_state_journal)).
    pub(crate) fn shared(mut self, journal: Option<Journal>) -> Self {
        self.shared = journal;
        self
    }

    /// [`open`](Self::open), then, with a shared journal, the state's
    /// nonce recorded there: a state another instance accepted already is
    /// refused as a replay. A journal that cannot be reached refuses the
    /// state (it cannot be proven unused); the client may call again.
    pub(crate) async fn open_once(
        &self,
        tool: &str,
        fingerprint: &str,
        state: Option<&str>,
        responses: Option<InputResponses>,
    ) -> Result<Rounds, ErrorData> {
        let rounds = self.open(tool, fingerprint, state, responses)?;
        let (Some(journal), Some(nonce)) = (&self.shared, rounds.nonce.as_deref()) else {
            return Ok(rounds);
        };
        let spent = serde_json::json!({"tool": tool, "fingerprint": fingerprint});
        match journal
            .records(SPENT_STATES_SPACE)
            .insert(nonce, &spent)
            .await
        {
            Ok(None) => Ok(rounds),
            Ok(Some(_)) => Err(replayed()),
            Err(e) => Err(ErrorData::internal_error(
                format!("requestState could not be checked: {e}; call again"),
                None,
            )),
        }
    }

    /// Opens the state a client sent back with a call of `tool` whose
    /// arguments have fingerprint `fingerprint`, and takes the answers it
    /// may: those to keys the state asked. No state: a first round, and
    /// answers sent without one are ignored.
    pub(crate) fn open(
        &self,
        tool: &str,
        fingerprint: &str,
        state: Option<&str>,
        responses: Option<InputResponses>,
    ) -> Result<Rounds, ErrorData> {
        let Some(state) = state else {
            // A first round: answers the client offers unasked are kept
            // apart, for a tool's own questions only (never an approval).
            let mut rounds = Rounds::new(Map::new());
            for (key, answer) in responses.unwrap_or_default() {
                rounds
                    .offered
                    .insert(key.clone(), result_object(&key, answer)?);
            }
            return Ok(rounds);
        };
        if state.len() > MAX_REQUEST_STATE_BYTES {
            return Err(refused(format!(
                "requestState is {} bytes, over the limit of {MAX_REQUEST_STATE_BYTES}",
                state.len()
            )));
        }
        let bound = binding(tool, fingerprint);
        let carried: Carried = self
            .codec
            .open_json_with(state, bound.as_bytes())
            .map_err(|e| {
                refused(match e {
                    rmcp::model::RequestStateError::Expired => {
                        "requestState expired: call the tool again from the start".to_owned()
                    }
                    _ => "requestState failed its integrity check: it was not issued by this server for this call".to_owned(),
                })
            })?;
        self.spend(&carried.nonce)?;
        let mut answers = carried.answers;
        let responses = responses.unwrap_or_default();
        for key in carried.asked {
            if let Some(answer) = responses.get(&key) {
                let answer = result_object(&key, answer.clone())?;
                answers.insert(key, answer);
            }
        }
        let mut rounds = Rounds::new(answers);
        rounds.nonce = Some(carried.nonce);
        Ok(rounds)
    }

    /// Seals what the next round must remember: the keys asked now and
    /// every answer so far.
    pub(crate) fn seal(&self, tool: &str, fingerprint: &str, rounds: &Rounds) -> String {
        let carried = Carried {
            asked: rounds.asked_keys(),
            answers: rounds.answers.clone(),
            nonce: hex_nonce(),
        };
        let bound = binding(tool, fingerprint);
        let options = SealOptions::new()
            .associated_data(bound.as_bytes())
            .ttl(self.ttl);
        // A map of strings and JSON values always serializes.
        self.codec
            .seal_json_with(&carried, &options)
            .unwrap_or_default()
    }

    /// Marks `nonce` used; refuses a state whose nonce was used before.
    fn spend(&self, nonce: &str) -> Result<(), ErrorData> {
        let now = crate::clock::now_ms();
        let mut used = lock(&self.used);
        used.retain(|_, until| *until > now);
        if used.contains_key(nonce) {
            return Err(replayed());
        }
        let until = now.saturating_add(self.ttl.as_millis() as i64);
        used.insert(nonce.to_owned(), until);
        Ok(())
    }
}

/// What one round of a call knows: the answers the client gave (to
/// questions it was asked), and what the call asks now.
pub(crate) struct Rounds {
    /// Answers to questions the server asked (under its sealed state).
    answers: Map<String, Value>,
    /// Answers a client offered in a first round, unasked.
    offered: Map<String, Value>,
    /// The nonce of the state this round was opened with.
    nonce: Option<String>,
    asked: Mutex<InputRequests>,
    missing: Mutex<Option<&'static str>>,
    next: AtomicU32,
}

impl Rounds {
    fn new(answers: Map<String, Value>) -> Self {
        Rounds {
            answers,
            offered: Map::new(),
            nonce: None,
            asked: Mutex::new(BTreeMap::new()),
            missing: Mutex::new(None),
            next: AtomicU32::new(1),
        }
    }

    /// The rounds of a task's body: the answers its client gave so far,
    /// each to a request the task asked.
    pub(crate) fn answered(answers: Map<String, Value>) -> Self {
        Rounds::new(answers)
    }

    /// Every answer to a request the server asked.
    pub(crate) fn answers(&self) -> &Map<String, Value> {
        &self.answers
    }

    /// The answer to `key`, if the client gave one: to the question the
    /// server asked, or offered unasked with the first call (a tool's own
    /// question is the client's to answer either way).
    pub(crate) fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.get(key).or_else(|| self.offered.get(key))
    }

    /// The answer to `key` only if the server asked it under a state it
    /// sealed: what an approval takes, so that a client can never approve a
    /// call it was not asked about.
    pub(crate) fn asked_answer(&self, key: &str) -> Option<&Value> {
        self.answers.get(key)
    }

    /// Asks `request` under `key` (once: a key asked twice keeps its
    /// first request).
    pub(crate) fn ask(&self, key: String, request: InputRequest) {
        lock(&self.asked).entry(key).or_insert(request);
    }

    /// The next key of an unnamed question (`elicit-1`, `sample-2`, ...):
    /// the same in every round for a tool that asks in the same order.
    pub(crate) fn next_key(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Records that the call needs a capability the client did not declare.
    pub(crate) fn need(&self, capability: &'static str) {
        lock(&self.missing).get_or_insert(capability);
    }

    /// The capability the call needed and the client lacks, if any.
    pub(crate) fn missing(&self) -> Option<&'static str> {
        *lock(&self.missing)
    }

    /// What the call asked this round (empty: it asked nothing).
    pub(crate) fn take_asked(&self) -> InputRequests {
        std::mem::take(&mut *lock(&self.asked))
    }

    /// True when the call asked the client for input it has not given.
    pub(crate) fn asks(&self) -> bool {
        !lock(&self.asked).is_empty()
    }

    fn asked_keys(&self) -> Vec<String> {
        lock(&self.asked).keys().cloned().collect()
    }
}

/// The space of [`Journal::records`] in which a shared journal keeps the
/// states accepted: one record per state, under its nonce, naming the
/// tool and the arguments' fingerprint it was bound to.
pub const SPENT_STATES_SPACE: &str = "mcp-request-states";

/// The refusal of a state used before.
fn replayed() -> ErrorData {
    refused(
        "requestState was already used: each state answers one round; call the tool again from the start"
            .to_owned(),
    )
}

/// An answer that is a result object, or the refusal naming its key.
fn result_object(key: &str, answer: Value) -> Result<Value, ErrorData> {
    if answer.is_object() {
        Ok(answer)
    } else {
        Err(refused(format!(
            "inputResponses.{key} must be the result object of the request asked"
        )))
    }
}

/// What a state is bound to: the tool and its arguments' fingerprint.
fn binding(tool: &str, fingerprint: &str) -> String {
    format!("tinyagents/tools/call\n{tool}\n{fingerprint}")
}

/// A `-32602` refusal.
fn refused(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

/// 32 bytes from the operating system's random source.
fn random_key() -> Vec<u8> {
    let mut key = vec![0u8; 32];
    fill_random(&mut key);
    key
}

fn hex_nonce() -> String {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Fills `bytes` from `/dev/urandom`, or (where there is none) from std's
/// randomly seeded hasher.
pub(crate) fn fill_random(bytes: &mut [u8]) {
    use std::io::Read;
    if let Ok(mut source) = std::fs::File::open("/dev/urandom")
        && source.read_exact(bytes).is_ok()
    {
        return;
    }
    use std::hash::BuildHasher;
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let seed = std::collections::hash_map::RandomState::new();
        let word = seed.hash_one((i, std::time::SystemTime::now()));
        for (b, w) in chunk.iter_mut().zip(word.to_le_bytes()) {
            *b = w;
        }
    }
}

/// The arguments as a value, for their fingerprint: text that is not JSON
/// is its own string.
pub(crate) fn arguments_value(arguments: &RawArguments) -> Value {
    match arguments {
        RawArguments::Json(value) => value.clone(),
        RawArguments::Text(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
    }
}

/// The error for a call that needs a capability its client did not
/// declare (`-32021`, MissingRequiredClientCapability), naming it in
/// `requiredCapabilities` as a `ClientCapabilities` object.
pub(crate) fn missing_capability(capability: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode(-32021),
        format!(
            "this call needs the client capability `{capability}`, which the request did not declare"
        ),
        Some(serde_json::json!({"requiredCapabilities": {capability: {}}})),
    )
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitationSchema};
    use serde_json::json;

    use super::*;

    fn sealer() -> Sealer {
        Sealer::new(
            Some(b"0123456789abcdef0123456789abcdef".to_vec()),
            DEFAULT_REQUEST_STATE_TTL,
        )
        .unwrap()
    }

    fn question() -> InputRequest {
        InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: "name?".into(),
                requested_schema: ElicitationSchema::new(Default::default()),
            },
        ))
    }

    fn responses(pairs: Value) -> Option<InputResponses> {
        serde_json::from_value(pairs).ok()
    }

    #[test]
    fn a_state_opens_once_for_its_call_and_takes_only_asked_answers() {
        let s = sealer();
        let first = s
            .open(
                "t",
                "fp",
                None,
                responses(json!({"k": {"action": "accept"}})),
            )
            .unwrap();
        assert!(
            first.asked_answer("k").is_none(),
            "no state: nothing was asked"
        );
        assert!(
            first.answer("k").is_some(),
            "offered to the tool's own questions"
        );
        assert!(s.open("t", "fp", None, responses(json!({"k": 5}))).is_err());
        first.ask("k".into(), question());
        let state = s.seal("t", "fp", &first);
        let second = s
            .open(
                "t",
                "fp",
                Some(&state),
                responses(json!({"k": {"action": "accept"}, "other": {}})),
            )
            .unwrap();
        assert!(second.asked_answer("k").is_some());
        assert!(second.answer("other").is_none(), "never asked");
        // Replayed, or another call's: refused.
        let again = s.open("t", "fp", Some(&state), None).err().unwrap();
        assert!(again.message.contains("already used"), "{}", again.message);
        let third = s.open("t", "fp", None, None).unwrap();
        third.ask("k".into(), question());
        let other_args = s.seal("t", "fp", &third);
        let e = s.open("t", "other", Some(&other_args), None).err().unwrap();
        assert!(e.message.contains("integrity"), "{}", e.message);
    }

    #[test]
    fn tampered_self_made_foreign_and_oversized_states_are_refused() {
        let s = sealer();
        let r = s.open("t", "fp", None, None).unwrap();
        r.ask("k".into(), question());
        let state = s.seal("t", "fp", &r);
        let mut tampered = state.clone().into_bytes();
        let last = tampered.len() - 3;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        for bad in [tampered.as_str(), "rs2.eyJhc2tlZCI6W119.AAAA", "made-up"] {
            let e = s.open("t", "fp", Some(bad), None).err().unwrap();
            assert_eq!(e.code.0, -32602);
        }
        let foreign = Sealer::new(Some(vec![7u8; 32]), DEFAULT_REQUEST_STATE_TTL).unwrap();
        assert!(foreign.open("t", "fp", Some(&state), None).is_err());
        let huge = "x".repeat(MAX_REQUEST_STATE_BYTES + 1);
        let e = s.open("t", "fp", Some(&huge), None).err().unwrap();
        assert!(e.message.contains("over the limit"));
        assert!(Sealer::new(Some(b"short".to_vec()), DEFAULT_REQUEST_STATE_TTL).is_err());
    }

    #[test]
    fn an_expired_state_is_refused() {
        let s = Sealer::new(Some(vec![1u8; 32]), Duration::from_millis(1)).unwrap();
        let r = s.open("t", "fp", None, None).unwrap();
        r.ask("k".into(), question());
        let state = s.seal("t", "fp", &r);
        std::thread::sleep(Duration::from_millis(20));
        let e = s.open("t", "fp", Some(&state), None).err().unwrap();
        assert!(e.message.contains("expired"), "{}", e.message);
    }
}
