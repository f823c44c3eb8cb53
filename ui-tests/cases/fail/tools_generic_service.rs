// #[tools] on a generic impl block: one error at its generics.
use tinyagents_tools::prelude::*;

struct Cache<T>(T);

#[tools]
impl<T: Send + Sync + 'static> Cache<T> {
    /// Read the cache.
    #[tool]
    async fn read(&self) -> String {
        String::new()
    }
}

fn main() {
    let mut registry = ToolRegistry::new();
    let _ = registry.register_service(std::sync::Arc::new(Cache(1u8)));
}
