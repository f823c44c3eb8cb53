// Two blocks of one type with the same number.
use tinyagents_tools::prelude::*;

struct Service;

#[tools]
impl Service {
    /// Ping.
    #[tool]
    fn ping(&self) {}
}

#[tools(block = 2)]
impl Service {
    /// Pong.
    #[tool]
    fn pong(&self) {}
}

#[tools(block = 2)]
impl Service {
    /// Peng.
    #[tool]
    fn peng(&self) {}
}

fn main() {}
