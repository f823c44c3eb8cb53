// #[tool] on a method of a block without #[tools]: one error at the receiver, naming #[tools].
use tinyagents_tools::prelude::*;

struct Service;

impl Service {
    /// Say hello.
    #[tool]
    async fn hello(&self) -> String {
        "hello".to_owned()
    }
}

fn main() {
    let _ = Service.hello();
}
