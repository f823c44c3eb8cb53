// The rules of the block itself: an inherent impl, with `#[tool]` methods,
// a block number from 2 to 16, known options; `isolated` and `collect` are
// free-fn options.
use tinyagents_tools::prelude::*;

struct Service;

trait Greet {
    fn greet(&self) -> String;
}

#[tools]
impl Greet for Service {
    /// Greet.
    #[tool]
    fn greet(&self) -> String {
        String::new()
    }
}

#[tools(block = 2)]
impl Service {
    /// Not a tool.
    fn helper(&self) {}
}

#[tools(block = 17)]
impl Service {
    /// Ping.
    #[tool]
    async fn ping(&self) {}
}

#[tools(blocks = 3)]
impl Service {
    /// Pong.
    #[tool]
    async fn pong(&self) {}
}

#[tools(block = 4)]
impl Service {
    /// Crunch in a worker.
    #[tool(isolated, blocking)]
    fn crunch(&self) {}

    /// Collected.
    #[tool(collect)]
    async fn gather(&self) {}
}

fn main() {}
