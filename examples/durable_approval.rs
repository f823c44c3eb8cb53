//! Durable runs: an approval that waits for a person across restarts, and
//! a destructive tool whose side effect runs at most once. The program is
//! [`tinyagents_tools_examples::durable`]; its doc lists the commands.
//!
//! ```sh
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db start
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db approve apr_...
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db resume
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db answers
//! ```

fn main() {
    std::process::exit(tinyagents_tools_examples::durable::cli(std::env::args().skip(1)).into());
}
