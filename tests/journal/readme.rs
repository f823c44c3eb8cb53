//! The guide's durable program (`cargo run --features journal-sqlite --example durable_first`), as
//! is: the block in `tinyagents-tools/docs/journal.md`, "A whole program",
//! is the example's text, and it runs.

mod program {
    include!("../../examples/durable_first.rs");

    pub(super) async fn run(url: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        durable(url).await
    }

    pub(super) fn unused() -> fn() -> Result<(), Box<dyn std::error::Error>> {
        main
    }
}

/// The first `rust,no_run` block of the journal page's section `heading`.
fn guide_block(heading: &str) -> &'static str {
    let page = include_str!("../../tinyagents-tools/docs/journal.md");
    let section = &page[page.find(heading).expect("the section")..];
    let fence = "```rust,no_run\n";
    let block = &section[section.find(fence).expect("a rust block") + fence.len()..];
    &block[..block.find("```").expect("the block's end")]
}

#[test]
fn the_guide_shows_the_durable_program_as_it_is() {
    assert_eq!(
        guide_block("## A whole program"),
        include_str!("../../examples/durable_first.rs"),
        "the guide's durable snippet and examples/durable_first.rs differ"
    );
    let _ = program::unused();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guide_durable_program_waits_for_the_person_then_runs_once() {
    let dir =
        std::env::temp_dir().join(format!("tinyagents-readme-durable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("notes.db").display());
    let said = program::run(&url).await.unwrap();
    assert_eq!(
        said,
        [
            "call-1: pending_approval",
            "asks to run delete_note with {\"id\":7}",
            "call-1: ok (note 7 deleted)",
        ]
    );
    // Run again: the call is answered from the journal, nothing waits.
    let again = program::run(&url).await.unwrap();
    assert_eq!(again, ["call-1: ok"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
