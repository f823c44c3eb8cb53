//! The catalog of the code-mode example: two tools a program calls in a
//! loop (`lookup`, then `label`), the program, and the shape of twenty
//! declared tools for comparing declaration sizes. Shared by the example,
//! the crate's tests and the code-mode benchmark (both include this file by
//! path).

use serde_json::json;
use tinyagents_tools::prelude::*;
use tinyagents_tools::{ToolSafety, ToolSchema};

/// Which item.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemId {
    /// The item's number, from 1 to 100.
    #[schemars(range(min = 1, max = 100))]
    pub id: u32,
}

/// An item of the catalog.
#[derive(Serialize, JsonSchema)]
pub struct Item {
    /// Its name.
    pub name: String,
    /// Its price in cents.
    pub price: u32,
}

/// Look up an item of the catalog by number.
#[tool(read_only, idempotent, local)]
pub async fn lookup(args: ItemId) -> Item {
    Item {
        name: format!("item-{}", args.id),
        price: args.id * 125,
    }
}

/// What to label.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelArgs {
    /// The item's name.
    pub name: String,
    /// Its price in cents.
    pub price: u32,
}

/// Make the shelf label of an item.
#[tool(read_only, idempotent, local)]
pub async fn label(args: LabelArgs) -> String {
    format!(
        "{} ${}.{:02}",
        args.name,
        args.price / 100,
        args.price % 100
    )
}

/// The program the scripted model writes: 20 items, two calls each.
pub const PROGRAM: &str = r#"
const labels = [];
for (let id = 1; id <= 20; id++) {
  const item = tools.lookup({ id });
  labels.push(tools.label({ name: item.name, price: item.price }));
}
return labels.join("; ");
"#;

/// The spec of the `i`-th of twenty tools shaped like the example's: one
/// sentence, two described arguments (one bounded), an object answer of two
/// described members.
pub fn catalog_spec(i: usize) -> ToolSpec {
    ToolSpec::builder(
        format!("catalog_tool_{i}"),
        format!("Look up record {i} of the catalog by number and name."),
    )
    .input_schema(ToolSchema::from_value(json!({
        "type": "object", "description": "Which record.",
        "properties": {
            "id": {"type": "integer", "minimum": 1, "maximum": 100, "description": "The record's number, from 1 to 100."},
            "name": {"type": "string", "description": "The record's name."}
        },
        "required": ["id", "name"], "additionalProperties": false
    })))
    .output_schema(ToolSchema::from_value(json!({
        "type": "object", "description": "A record.",
        "properties": {
            "label": {"type": "string", "description": "Its label."},
            "price": {"type": "integer", "minimum": 0, "description": "Its price in cents."}
        },
        "required": ["label", "price"]
    })))
    .safety(ToolSafety::pure())
    .build()
    .expect("a valid spec")
}
