//! The README's durable program (`cargo run --example durable_first`), as
//! is: the block in "Durable runs" is the example's text, and it runs.

use tinyagents_tools_tests::readme_block;

mod program {
    include!("../../examples/durable_first.rs");

    pub(super) async fn run(url: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        durable(url).await
    }

    pub(super) fn unused() -> fn() -> Result<(), Box<dyn std::error::Error>> {
        main
    }
}

#[test]
fn the_readme_shows_the_durable_program_as_it_is() {
    assert_eq!(
        readme_block("## Durable runs"),
        include_str!("../../examples/durable_first.rs"),
        "the README's durable snippet and examples/durable_first.rs differ"
    );
    let _ = program::unused();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_durable_program_waits_for_the_person_then_runs_once() {
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
