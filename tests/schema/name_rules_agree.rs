//! The tool-name rule is written twice: in the runtime crate (`ToolName::new`,
//! applied at registration) and in the macro crate (applied at compile time).
//! Both must give the same verdict and the same message for every name.

#[allow(dead_code)]
#[path = "../../tinyagents-tools-macros/src/names.rs"]
mod macro_names;

use tinyagents_tools::ids::{MAX_NAME_LEN, ToolName};

#[test]
fn the_macro_and_the_registry_judge_every_name_alike() {
    let long_ok = "a".repeat(MAX_NAME_LEN);
    let too_long = "a".repeat(MAX_NAME_LEN + 1);
    let long_with_caps = format!("{}A", "a".repeat(MAX_NAME_LEN + 3));
    let names = [
        "search_docs",
        "_private",
        "a",
        "x9",
        "get_v2_item",
        "",
        " ",
        "search docs",
        "SearchDocs",
        "searchDocs",
        "café",
        "search-docs",
        "search.docs",
        "9lives",
        "_9",
        "a\tb",
        "ünïcode",
        "tab\t",
        "emoji_🎉",
        long_ok.as_str(),
        too_long.as_str(),
        long_with_caps.as_str(),
        "a/b",
        "a:b",
        "a$b",
    ];
    assert_eq!(macro_names::MAX_NAME_LEN, MAX_NAME_LEN);
    for name in names {
        let runtime = ToolName::new(name).map(|_| ()).map_err(|e| e.to_string());
        let macro_verdict = macro_names::check_tool_name(name);
        assert_eq!(macro_verdict, runtime, "the two rules disagree on {name:?}");
    }
}
