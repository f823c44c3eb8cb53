// #[tool] on a fn without `self` of an `impl` block or a trait. One that
// names `Self` is refused by #[tool] at its name, alone. One that does not
// looks like a free fn to the attribute, which sees its item only: the
// compiler refuses the tool type #[tool] writes beside it (a struct and
// impls cannot go in an `impl` block or a trait), and the fn's check then
// says where #[tool] goes, at its name.
use tinyagents_tools::prelude::*;

struct Service;

impl Service {
    /// Make a service.
    #[tool]
    fn make() -> Self {
        Service
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

impl Greeter for Service {
    /// Say hello from a trait impl.
    #[tool]
    fn wave() -> String {
        "hi".to_owned()
    }
}

fn main() {
    let _ = (Service::make(), Service::greet());
}
