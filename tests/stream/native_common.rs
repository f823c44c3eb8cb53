//! Helpers of the provider-stream tests: fixtures, and a stream fed to a
//! reader in pieces.

use serde_json::Value;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader};
use tinyagents_tools::stream::{
    ModelOutput, OutputReader, StreamEvent, StreamLimits, StreamProblemKind,
};
use tinyagents_tools::testkit::{Chunking, chunk_bytes};

/// A file of `tests/fixtures/streams/`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/streams/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A JSON file of `tests/fixtures/streams/`.
pub fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&fixture(name)).unwrap()
}

/// Every event a reader of `format` tells for `bytes` fed in the pieces
/// `chunking` cuts, the end included.
pub fn events(
    format: NativeFormat,
    options: NativeOptions,
    bytes: &[u8],
    chunking: Chunking,
) -> Vec<StreamEvent> {
    let mut reader = NativeReader::with_options(format, options);
    let mut out = Vec::new();
    for piece in chunk_bytes(bytes, chunking) {
        reader.push(piece, &mut out);
    }
    reader.finish(&mut out);
    out
}

/// The output collected from `bytes` fed in the pieces `chunking` cuts.
pub fn read(format: NativeFormat, bytes: &[u8], chunking: Chunking) -> ModelOutput {
    ModelOutput::collect(events(format, NativeOptions::default(), bytes, chunking))
}

/// Options with small argument limits.
pub fn small_limits(max_argument_bytes: usize, max_argument_depth: usize) -> NativeOptions {
    NativeOptions {
        limits: StreamLimits {
            max_argument_bytes,
            max_argument_depth,
        },
        ..NativeOptions::default()
    }
}

/// The kinds of the output's stream problems, in order.
pub fn problem_kinds(out: &ModelOutput) -> Vec<StreamProblemKind> {
    out.problems.iter().map(|p| p.kind).collect()
}

/// Server-sent events with one `data:` line each.
pub fn sse(events: &[Value]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// Whether any event is a ready call.
pub fn any_ready(events: &[StreamEvent]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, StreamEvent::CallReady(_)))
}
