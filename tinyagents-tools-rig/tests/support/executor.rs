//! The executor the rig tests hand to rig: the built-in `echo` and `hash`
//! tools, with every event recorded.

use std::sync::Arc;

use tinyagents_tools::builtins::{EchoTool, HashTool};
use tinyagents_tools::testkit::EventRecorder;
use tinyagents_tools::{ToolExecutor, ToolRegistry};

/// An executor over `echo` and `hash`, and the recorder of its events.
pub fn recorded_executor() -> (Arc<ToolExecutor>, Arc<EventRecorder>) {
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(EchoTool).unwrap();
    registry.register(HashTool).unwrap();
    let recorder = EventRecorder::new();
    let executor = ToolExecutor::builder(registry, ())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    (Arc::new(executor), recorder)
}
