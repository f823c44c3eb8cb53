// A secret cannot be formatted with `{}`; its Debug shows no value.
use tinyagents_tools::Secret;

fn main() {
    let key = Secret::new(String::from("sk-live"));
    println!("{key}");
}
