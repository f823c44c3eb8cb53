// A secret cannot be deserialized, so a model cannot supply one.
use tinyagents_tools::Secret;

fn main() {
    let _: Secret<String> = serde_json::from_str("\"sk-live\"").unwrap();
}
