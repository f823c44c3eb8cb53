// #[tool] on a fn of an `impl` block without #[tools]: a method is refused
// at its receiver, an associated fn (or a trait's fn) at its name, each
// naming #[tools]; no other error follows.
use tinyagents_tools::prelude::*;

struct Service;

impl Service {
    /// Say hello.
    #[tool]
    async fn hello(&self) -> String {
        "hello".to_owned()
    }

    /// Say hello, without `self`.
    #[tool]
    fn greet() -> String {
        "hello".to_owned()
    }
}

trait Greeter {
    /// Say hello from a trait.
    #[tool]
    fn wave() -> String {
        "hello".to_owned()
    }
}

fn main() {
    let _ = (Service.hello(), Service::greet());
}
