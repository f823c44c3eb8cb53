//! Our executor around "add": plain, and with one event subscriber and one
//! middleware, or running a bounded number of calls at once.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tinyagents_tools::events::{Delivery, EventSubscriber, ToolEvent};
use tinyagents_tools::middleware::{BeforeOutcome, BeforeToolCtx};
use tinyagents_tools::{Middleware, Tool, ToolError, ToolExecutor, ToolRegistry, async_trait};

/// An executor over one tool, with nothing attached.
pub fn plain(tool: impl Tool) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(tool).expect("registers");
    ToolExecutor::builder(registry, ()).build().expect("builds")
}

/// Counts the events it receives, in line (no queue, no task), reading
/// each event's kind and tool name: what a metrics subscriber does.
#[derive(Default)]
pub struct CountingSubscriber {
    /// Events seen.
    pub events: AtomicU64,
}

impl EventSubscriber for CountingSubscriber {
    fn on_event(&self, event: &ToolEvent) {
        std::hint::black_box((&event.kind, &event.tool));
        self.events.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// A middleware that counts the calls it lets through.
#[derive(Default)]
pub struct CountingMiddleware {
    /// Calls seen.
    pub calls: AtomicU64,
}

#[async_trait]
impl Middleware for CountingMiddleware {
    fn name(&self) -> &str {
        "counting"
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
        std::hint::black_box(ctx.arguments());
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(BeforeOutcome::Continue)
    }
}

/// An executor over one tool with one inline event subscriber and one
/// middleware; the counters are returned so the caller can check they ran.
pub fn observed(
    tool: impl Tool,
) -> (
    ToolExecutor,
    Arc<CountingSubscriber>,
    Arc<CountingMiddleware>,
) {
    let subscriber = Arc::new(CountingSubscriber::default());
    let middleware = Arc::new(CountingMiddleware::default());
    let executor = attached(tool, Some(subscriber.clone()), Some(middleware.clone()));
    (executor, subscriber, middleware)
}

/// An executor over one tool with the subscriber and the middleware given
/// (either may be left out, to see what each costs alone).
pub fn attached(
    tool: impl Tool,
    subscriber: Option<Arc<CountingSubscriber>>,
    middleware: Option<Arc<CountingMiddleware>>,
) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(tool).expect("registers");
    let mut builder = ToolExecutor::builder(registry, ());
    if let Some(subscriber) = subscriber {
        builder = builder.subscribe(subscriber);
    }
    if let Some(middleware) = middleware {
        builder = builder.middleware(middleware);
    }
    builder.build().expect("builds")
}

/// An executor over one tool running at most `n` calls of a batch at once.
pub fn with_concurrency(tool: impl Tool, n: usize) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(tool).expect("registers");
    ToolExecutor::builder(registry, ())
        .configure(|c| c.max_concurrency = NonZeroUsize::new(n).expect("n > 0"))
        .build()
        .expect("builds")
}
