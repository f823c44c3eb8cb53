//! `Self` in the signature of a `#[tools]` method names the service, as it
//! does in any method: the tool's argument type, its output and its schema
//! are the service's, not the generated tool type's.

use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::prelude::*;

/// A list of labels; it is also what its tools take and give back.
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Labels {
    /// The labels, in order.
    labels: Vec<String>,
}

/// The label type of a list, through a trait.
trait Listed {
    type Item;
}

impl Listed for Labels {
    type Item = String;
}

#[tools]
impl Labels {
    /// These labels followed by the others' and the extra one.
    #[tool(read_only)]
    async fn joined(
        &self,
        /// Further lists, appended in order.
        others: Vec<Self>,
        /// One more label, appended last.
        extra: Option<<Self as Listed>::Item>,
    ) -> Json<Self> {
        let mut labels = self.labels.clone();
        labels.extend(others.into_iter().flat_map(|o| o.labels));
        labels.extend(extra);
        Json(Labels { labels })
    }
}

#[tokio::test]
async fn self_in_a_tool_method_s_signature_names_the_service() {
    let mut registry = ToolRegistry::new();
    registry
        .register_service(Arc::new(Labels {
            labels: vec!["a".into()],
        }))
        .unwrap();
    let spec = registry.get("joined").unwrap().spec();
    let schema = serde_json::to_value(&spec.input_schema).unwrap();
    let others = &schema["properties"]["others"];
    assert_eq!(others["type"], "array", "{schema}");
    let item = others["items"]["$ref"].as_str().unwrap();
    let def = item.rsplit('/').next().unwrap();
    assert_eq!(
        schema["$defs"][def]["properties"]["labels"]["type"], "array",
        "`Self` is the service's type: {schema}"
    );
    assert_eq!(
        schema["properties"]["extra"]["type"],
        json!(["string", "null"])
    );

    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let call = ToolCall::new(
        "c1",
        "joined",
        json!({"others": [{"labels": ["b", "c"]}], "extra": "d"}),
    );
    let result = executor
        .execute(&RunContext::empty(), &Turn::new(1), call)
        .await;
    assert!(result.error.is_none(), "{}", result.text());
    assert_eq!(
        result.message.structured,
        Some(json!({"labels": ["a", "b", "c", "d"]}))
    );
}
