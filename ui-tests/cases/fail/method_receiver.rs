// #[tool] on a method: one error at the receiver, nothing else.
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
