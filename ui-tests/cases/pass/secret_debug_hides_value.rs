// Debug formatting of a secret shows the type and never the value.
use tinyagents_tools::Secret;

fn main() {
    let key = Secret::new(String::from("sk-live"));
    let shown = format!("{key:?}");
    assert_eq!(shown, "Secret<String>(***)");
    assert!(!shown.contains("sk-live"));
}
