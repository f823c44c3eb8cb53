// A secret cannot be serialized, so it cannot leak into a tool result.
use tinyagents_tools::Secret;

fn main() {
    let key = Secret::new(String::from("sk-live"));
    let _ = serde_json::to_string(&key);
}
