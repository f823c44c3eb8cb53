// A further block's tool needs the state `Shop`; the main block works with
// any state: registering the service says to name the state on the main block.
use tinyagents_tools::prelude::*;

#[derive(Clone)]
struct Shop;

struct Prices;

#[tools]
impl Prices {
    /// List the prices.
    #[tool]
    async fn list(&self) {}
}

#[tools(block = 2)]
impl Prices {
    /// The shop's price.
    #[tool]
    async fn price(&self, #[inject] _shop: State<Shop>) {}
}

fn main() {
    let mut registry = ToolRegistry::<Shop, ()>::default();
    let _ = registry.register_service(std::sync::Arc::new(Prices));
}
