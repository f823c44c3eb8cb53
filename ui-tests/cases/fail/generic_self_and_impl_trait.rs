// A tool fn is a free, concrete, async fn.
use tinyagents_tools::prelude::*;

/// Generic.
#[tool]
async fn generic<T: Send>(#[inject] _value: State<T>) {}

/// Takes impl Trait.
#[tool]
async fn takes_impl(#[inject] _value: impl Send) {}

struct Service;

impl Service {
    /// A method.
    #[tool]
    async fn method(&self) {}
}

/// Unsafe and const.
#[tool]
const unsafe fn odd() {}

fn main() {}
