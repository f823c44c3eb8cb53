// #[tool] on a `&self` method of an `impl` block without #[tools]: refused
// at its receiver, naming #[tools]; no other error follows.
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
