//! Auto-registration (feature `collect`): two collected tools with one
//! name are refused with both definitions' places. A test binary of its
//! own, since the duplicate makes every `from_collected` in it fail.

use tinyagents_tools::RegistryError;
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

mod first {
    use super::*;

    /// Looks the text up in the first index.
    #[tool(collect, name = "lookup")]
    pub async fn lookup(args: Text) -> String {
        args.text
    }
}

mod second {
    use super::*;

    /// Looks the text up in the second index.
    #[tool(collect, name = "lookup")]
    pub async fn lookup(args: Text) -> String {
        args.text
    }
}

#[test]
fn two_collected_tools_with_one_name_are_refused_naming_both_definitions() {
    let err = ToolRegistry::from_collected().unwrap_err();
    assert_eq!(
        err,
        RegistryError::Collision {
            name: "lookup".into(),
            first: "the tool collected at tests/collect_duplicates.rs:18".into(),
            second: "the tool collected at tests/collect_duplicates.rs:28".into(),
        }
    );
    assert!(err.to_string().contains("tests/collect_duplicates.rs:18"));
}
