// A blocking tool's return value crosses threads: it must be `Send`.
use std::rc::Rc;
use tinyagents_tools::prelude::*;

/// Count.
#[tool(blocking)]
fn count() -> Rc<u32> {
    Rc::new(1)
}

fn main() {}
