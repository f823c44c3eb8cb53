//! Tools on a service's methods: `#[tools]` on `impl` blocks, every tool
//! sharing the one `Arc` of the service that `register_service` took.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::prelude::*;
use tinyagents_tools::spec::Effect;
use tinyagents_tools::{RegistryError, ToolSchema};

/// An in-memory stock table: the state every tool of the service shares.
#[derive(Default)]
struct Inventory {
    stock: Mutex<BTreeMap<String, u32>>,
}

/// How many units of an item arrive.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Delivery {
    /// The item.
    item: String,
    /// How many units.
    units: u32,
}

#[tools]
impl Inventory {
    /// How many units of an item are in stock.
    #[tool(read_only, idempotent, timeout = "5s")]
    async fn stock_of(
        &self,
        /// The item.
        item: String,
    ) -> u32 {
        self.units(&item)
    }

    /// Record a delivery; returns the new stock of the item.
    #[tool]
    async fn receive(
        &self,
        delivery: Delivery,
        #[inject] call: ToolCallId,
    ) -> Result<String, ToolError> {
        let mut stock = self.stock.lock().unwrap();
        let units = stock.entry(delivery.item).or_default();
        *units += delivery.units;
        Ok(format!("{call}: {units}"))
    }

    /// Not a tool: an ordinary method of the service.
    fn units(&self, item: &str) -> u32 {
        self.stock.lock().unwrap().get(item).copied().unwrap_or(0)
    }
}

#[tools(block = 2)]
impl Inventory {
    /// Take units of an item out of stock.
    #[tool(destructive)]
    async fn ship(
        &self,
        /// The item.
        item: String,
        /// How many units.
        units: u32,
        #[inject] cancel: CancellationToken,
    ) -> Result<u32, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::cancelled());
        }
        let mut stock = self.stock.lock().unwrap();
        let held = stock.entry(item).or_default();
        if *held < units {
            return Err(ToolError::repair(format!("only {held} in stock")));
        }
        *held -= units;
        Ok(*held)
    }

    /// How many different items are in stock.
    #[tool(blocking, read_only)]
    fn item_count(&self) -> usize {
        self.stock.lock().unwrap().len()
    }
}

/// What `stock_of` would be as a free fn.
mod free {
    use tinyagents_tools::prelude::*;

    /// How many units of an item are in stock.
    #[tool(read_only, idempotent, timeout = "5s")]
    pub async fn stock_of(
        /// The item.
        item: String,
    ) -> u32 {
        item.len() as u32
    }
}

fn executor(inventory: &Arc<Inventory>) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register_service(inventory.clone()).unwrap();
    ToolExecutor::builder(registry, ()).build().unwrap()
}

async fn run(executor: &ToolExecutor, id: &str, name: &str, args: serde_json::Value) -> ToolResult {
    executor
        .execute(
            &RunContext::empty(),
            &Turn::new(1),
            ToolCall::new(id, name, args),
        )
        .await
}

#[test]
fn registering_a_service_registers_the_tools_of_both_blocks_in_order() {
    let mut registry = ToolRegistry::new();
    registry
        .register_service(Arc::new(Inventory::default()))
        .unwrap();
    assert_eq!(
        registry.names().collect::<Vec<_>>(),
        ["stock_of", "receive", "ship", "item_count"]
    );
}

#[tokio::test]
async fn every_call_works_on_the_one_shared_service() {
    let inventory = Arc::new(Inventory::default());
    let executor = executor(&inventory);
    // The registry's four tools hold the service, beside this test's handle.
    assert_eq!(Arc::strong_count(&inventory), 5);

    let received = run(
        &executor,
        "c1",
        "receive",
        json!({"item": "bolt", "units": 7}),
    )
    .await;
    assert_eq!(received.text(), "c1: 7");
    let shipped = run(&executor, "c2", "ship", json!({"item": "bolt", "units": 3})).await;
    assert_eq!(shipped.text(), "4");
    let stock = run(&executor, "c3", "stock_of", json!({"item": "bolt"})).await;
    assert_eq!(stock.text(), "4");
    let count = run(&executor, "c4", "item_count", json!({})).await;
    assert_eq!(count.text(), "1");
    // The application's own handle sees what the tools did.
    assert_eq!(inventory.units("bolt"), 4);

    let refused = run(&executor, "c5", "ship", json!({"item": "bolt", "units": 9})).await;
    assert!(refused.is_error);
    assert!(
        refused.text().contains("only 4 in stock"),
        "{}",
        refused.text()
    );
}

#[test]
fn injected_parameters_of_a_method_stay_out_of_its_schema() {
    let receive = InventoryReceiveTool::spec();
    let injected: Vec<&str> = receive.injected.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(injected, ["call"]);
    assert_eq!(
        receive.input_schema.as_value(),
        ToolSchema::for_input::<Delivery>().as_value()
    );
    let ship = InventoryShipTool::spec();
    let properties: Vec<&str> = ship.input_schema.property_names().collect();
    assert_eq!(properties, ["item", "units"]);
    assert_eq!(ship.injected[0].name, "cancel");
}

#[test]
fn a_method_tool_has_the_spec_of_the_same_free_fn_tool() {
    let method = InventoryStockOfTool::spec();
    let free = free::StockOfTool::spec();
    assert_eq!(method.name, free.name);
    assert_eq!(method.description, free.description);
    assert_eq!(method.input_schema.as_value(), free.input_schema.as_value());
    assert_eq!(method.output_schema, free.output_schema);
    assert_eq!(method.safety, free.safety);
    assert_eq!(method.timeout, Some(Duration::from_secs(5)));
    assert_eq!(method.timeout, free.timeout);
}

#[test]
fn options_of_each_method_reach_its_own_spec() {
    assert_eq!(InventoryShipTool::spec().safety.effect, Effect::Destructive);
    assert_eq!(
        InventoryItemCountTool::spec().safety.effect,
        Effect::ReadOnly
    );
    assert!(InventoryItemCountTool::spec().blocking);
    assert_eq!(InventoryReceiveTool::spec().timeout, None);
}

/// A tool of another origin named like one of the service's.
mod taken {
    use tinyagents_tools::prelude::*;

    /// Ship something else.
    #[tool]
    pub async fn ship() {}
}

#[test]
fn a_service_with_a_taken_name_is_refused_whole_and_leaves_the_registry_as_it_was() {
    let mut registry = ToolRegistry::new();
    registry.register(taken::ShipTool).unwrap();
    let before = registry.version();
    let inventory = Arc::new(Inventory::default());
    let err = registry.register_service(inventory.clone()).unwrap_err();
    assert_eq!(
        err,
        RegistryError::Duplicate {
            name: "ship".into()
        }
    );
    assert_eq!(registry.names().collect::<Vec<_>>(), ["ship"]);
    assert!(registry.get("stock_of").is_none());
    assert_eq!(registry.version(), before);
    // Nothing holds the service any more but this test.
    assert_eq!(Arc::strong_count(&inventory), 1);
}

/// The application state of a service whose tools read it.
#[derive(Clone)]
struct Shop {
    currency: &'static str,
}

/// A price list whose tools also read the application state.
struct Prices {
    cents: u64,
}

#[tools(state = Shop)]
impl Prices {
    /// The price of one unit.
    #[tool(read_only)]
    async fn price(&self, #[inject] shop: State<Shop>) -> String {
        format!("{} {}", self.cents, shop.currency)
    }
}

#[tokio::test]
async fn a_service_named_with_a_state_type_reads_the_executor_state() {
    let mut registry = ToolRegistry::<Shop, ()>::default();
    registry
        .register_service(Arc::new(Prices { cents: 250 }))
        .unwrap();
    let executor = ToolExecutor::builder(registry, Shop { currency: "EUR" })
        .build()
        .unwrap();
    let result = executor
        .execute(
            &RunContext::empty(),
            &Turn::new(1),
            ToolCall::new("c1", "price", json!({})),
        )
        .await;
    assert_eq!(result.text(), "250 EUR");
}

#[test]
fn the_guide_service_snippet_is_the_compiled_example() {
    let page = include_str!("../../tinyagents-tools/docs/services.md");
    let section = &page[page.find("## Tools on a service").expect("the section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let block = &section[start..];
    let block = &block[..block.find("```").expect("the block's end")];
    // The lines rustdoc hides (`# ...`) set the doctest up; the rest is the example's.
    let block: String = block
        .lines()
        .filter(|line| !line.trim_start().starts_with("# ") && line.trim() != "#")
        .flat_map(|line| [line, "\n"])
        .collect();
    let example = include_str!("../../examples/service.rs");
    let from = "// README: tools on a service (start)\n";
    let start = example.find(from).expect("the start marker") + from.len();
    let end = example
        .find("// README: tools on a service (end)")
        .expect("the end marker");
    assert_eq!(
        block,
        &example[start..end],
        "the guide's service snippet and examples/service.rs differ"
    );
}
