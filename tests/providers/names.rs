//! Provider name rules and reversible aliases.

use tinyagents_tools::ToolCall;
use tinyagents_tools::providers::{
    NameMapError, Provider, ProviderNameError, ToolNameMap, check_provider_name, provider_alias,
};

use crate::corpus::corpus;

#[test]
fn canonical_names_satisfy_every_provider() {
    for spec in corpus() {
        for provider in Provider::ALL {
            assert_eq!(check_provider_name(provider, spec.name.as_str()), Ok(()));
        }
    }
}

#[test]
fn each_provider_rule_refuses_what_the_provider_refuses() {
    assert_eq!(
        check_provider_name(Provider::OpenAiChat, "files.read"),
        Err(ProviderNameError::InvalidChar { ch: '.' })
    );
    assert_eq!(check_provider_name(Provider::Gemini, "files.read"), Ok(()));
    assert_eq!(check_provider_name(Provider::Mcp, "files.read"), Ok(()));
    assert_eq!(
        check_provider_name(Provider::Gemini, "9lives"),
        Err(ProviderNameError::InvalidStart { ch: '9' })
    );
    assert_eq!(check_provider_name(Provider::Anthropic, "9lives"), Ok(()));
    let long = "a".repeat(65);
    assert_eq!(
        check_provider_name(Provider::Anthropic, &long),
        Err(ProviderNameError::TooLong { len: 65, max: 64 })
    );
    assert_eq!(check_provider_name(Provider::Mcp, &long), Ok(()));
    assert_eq!(
        check_provider_name(Provider::Mcp, ""),
        Err(ProviderNameError::Empty)
    );
}

#[test]
fn imported_names_get_aliases_that_map_calls_back() {
    let map =
        ToolNameMap::new(Provider::OpenAiChat, ["files.read", "search"]).expect("no collision");
    assert_eq!(map.provider_name("files.read"), Some("files_read"));
    assert_eq!(map.provider_name("search"), Some("search"));
    assert!(map.is_aliased("files.read"));
    assert!(!map.is_aliased("search"));
    let call = map.resolve_call(ToolCall::new("call_1", "files_read", "{}"));
    assert_eq!(call.name, "files.read");
    let unknown = map.resolve_call(ToolCall::new("call_2", "nope", "{}"));
    assert_eq!(unknown.name, "nope");
}

#[test]
fn two_names_sharing_an_alias_are_a_collision() {
    let err = ToolNameMap::new(Provider::Anthropic, ["files.read", "files_read"]).unwrap_err();
    assert_eq!(
        err,
        NameMapError::Collision {
            provider: Provider::Anthropic,
            alias: "files_read".into(),
            first: "files.read".into(),
            second: "files_read".into(),
        }
    );
    assert_eq!(
        ToolNameMap::new(Provider::Mcp, ["a", "a"]).unwrap_err(),
        NameMapError::Duplicate("a".into())
    );
}

#[test]
fn an_overlong_name_is_shortened_with_a_hash_that_tells_names_apart() {
    let a = format!("{}_alpha", "x".repeat(70));
    let b = format!("{}_beta", "x".repeat(70));
    let alias_a = provider_alias(Provider::OpenAiResponses, &a).expect("alias");
    let alias_b = provider_alias(Provider::OpenAiResponses, &b).expect("alias");
    assert_eq!(alias_a.len(), 64);
    assert_ne!(alias_a, alias_b);
    assert_eq!(
        check_provider_name(Provider::OpenAiResponses, &alias_a),
        Ok(())
    );
    assert_eq!(
        provider_alias(Provider::Gemini, "9lives").as_deref(),
        Some("_9lives")
    );
    let map =
        ToolNameMap::new(Provider::OpenAiResponses, [a.as_str(), b.as_str()]).expect("distinct");
    assert_eq!(map.tool_name(&alias_b), Some(b.as_str()));
}
