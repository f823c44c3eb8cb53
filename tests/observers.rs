//! Observers the tests attach to a call: an event subscriber that panics,
//! a capture of what `tracing` writes, a middleware that records the
//! arguments `after_tool` sees, and one that only takes its time.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tinyagents_tools::events::{Delivery, EventSubscriber, ToolEvent};
use tinyagents_tools::prelude::{
    AfterToolCtx, BeforeOutcome, BeforeToolCtx, Middleware, ToolError, async_trait,
};
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::{DefaultFields, FmtSpan, Format};
use tracing_subscriber::fmt::{MakeWriter, SubscriberBuilder};

/// A subscriber that panics on every event it is handed, counting them;
/// delivered inline or queued, as built.
pub struct PanickingSubscriber {
    delivery: Delivery,
    handed: AtomicUsize,
}

impl PanickingSubscriber {
    /// A subscriber delivered as `delivery` says.
    pub fn new(delivery: Delivery) -> Arc<Self> {
        Arc::new(PanickingSubscriber {
            delivery,
            handed: AtomicUsize::new(0),
        })
    }

    /// How many events it was handed (and panicked on).
    pub fn handed(&self) -> usize {
        self.handed.load(Ordering::SeqCst)
    }
}

impl EventSubscriber for PanickingSubscriber {
    fn on_event(&self, _: &ToolEvent) {
        self.handed.fetch_add(1, Ordering::SeqCst);
        panic!("subscriber bug");
    }
    fn delivery(&self) -> Delivery {
        self.delivery
    }
}

/// Everything a `tracing` fmt subscriber wrote, kept in memory.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    /// A fmt subscriber builder that writes into this capture, without
    /// colours, up to `level`.
    pub fn subscriber(
        &self,
        level: tracing::Level,
    ) -> SubscriberBuilder<DefaultFields, Format, LevelFilter, LogCapture> {
        tracing_subscriber::fmt()
            .with_writer(self.clone())
            .with_max_level(level)
            .with_ansi(false)
    }

    /// Sets a subscriber writing into this capture, up to `level` and with
    /// the span events `spans`, as the thread's default until the guard is
    /// dropped.
    pub fn set_default(&self, level: tracing::Level, spans: FmtSpan) -> DefaultGuard {
        tracing::subscriber::set_default(self.subscriber(level).with_span_events(spans).finish())
    }

    /// What was written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).expect("UTF-8 log lines")
    }
}

impl Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogCapture {
    type Writer = LogCapture;
    fn make_writer(&'a self) -> LogCapture {
        self.clone()
    }
}

/// A middleware that records the arguments its `after_tool` sees (written
/// with the prelude's names alone).
pub struct SeesArguments(pub Arc<Mutex<Vec<Value>>>);

#[async_trait]
impl Middleware for SeesArguments {
    fn name(&self) -> &str {
        "sees_arguments"
    }

    async fn after_tool(&self, ctx: &mut AfterToolCtx<'_>) {
        self.0.lock().unwrap().push(ctx.arguments().clone());
    }
}

/// A middleware that waits `wait` (on tokio's clock) before letting each
/// call go on and, when `after`, again once its tool answered: a slow
/// approver, or a gap a kill can land in.
pub struct Pause {
    wait: Duration,
    after: bool,
}

impl Pause {
    /// Waits `wait` before each call goes on.
    pub fn before(wait: Duration) -> Self {
        Pause { wait, after: false }
    }

    /// Waits `wait` before each call goes on, and again after its tool
    /// answered.
    pub fn around(wait: Duration) -> Self {
        Pause { wait, after: true }
    }
}

#[async_trait]
impl Middleware for Pause {
    fn name(&self) -> &str {
        "pause"
    }

    async fn before_tool(&self, _: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
        tokio::time::sleep(self.wait).await;
        Ok(BeforeOutcome::Continue)
    }

    async fn after_tool(&self, _: &mut AfterToolCtx<'_>) {
        if self.after {
            tokio::time::sleep(self.wait).await;
        }
    }
}
