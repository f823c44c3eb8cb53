// A description may come from doc attributes that are macro calls.
use tinyagents_tools::prelude::*;

#[doc = concat!("Add two ", "numbers.")]
#[tool]
async fn add() -> u32 {
    2
}

#[doc = include_str!("doc_from_macros.md")]
#[tool]
async fn described() {}

fn main() {
    assert_eq!(AddTool::spec().description, "Add two numbers.");
    assert_eq!(
        DescribedTool::spec().description,
        "A description kept in a file, soft-wrapped lines joined.\n\nA second paragraph."
    );
}
