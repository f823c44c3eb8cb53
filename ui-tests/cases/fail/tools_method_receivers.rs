// A tool method takes `&self`: `&mut self`, `self` and no receiver are
// refused, each at its receiver (or name).
use tinyagents_tools::prelude::*;

struct Counter;

#[tools]
impl Counter {
    /// Bump the counter.
    #[tool]
    async fn bump(&mut self) {}

    /// Consume the counter.
    #[tool]
    async fn consume(self) {}

    /// No receiver at all.
    #[tool]
    async fn detached() {}

    /// A typed receiver.
    #[tool]
    async fn typed(self: std::sync::Arc<Self>) {}
}

fn main() {
    let mut registry = ToolRegistry::new();
    let _ = registry.register_service(std::sync::Arc::new(Counter));
}
