//! Tools on a service: an in-memory stock table whose `&self` methods are
//! tools, spread over two `impl` blocks, registered once and sharing the
//! one instance. Run with `cargo run --example service`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tinyagents_tools::prelude::*;

// README: tools on a service (start)
/// A stock table shared by every tool of the service.
#[derive(Default)]
pub struct Inventory {
    stock: Mutex<BTreeMap<String, u32>>,
}

#[tools]
impl Inventory {
    /// How many units of an item are in stock.
    #[tool(read_only, idempotent)]
    async fn stock_of(
        &self,
        /// The item, e.g. "bolt".
        item: String,
    ) -> u32 {
        self.stock.lock().unwrap().get(&item).copied().unwrap_or(0)
    }

    /// Record a delivery; returns the item's new stock.
    #[tool]
    async fn receive(
        &self,
        /// The item.
        item: String,
        /// How many units arrived.
        units: u32,
    ) -> u32 {
        let mut stock = self.stock.lock().unwrap();
        let held = stock.entry(item).or_default();
        *held += units;
        *held
    }
}

#[tools(block = 2)] // a further block of the same type
impl Inventory {
    /// Ship units of an item; refused when too few are in stock.
    #[tool(destructive, timeout = "2s")]
    async fn ship(
        &self,
        /// The item.
        item: String,
        /// How many units to ship.
        units: u32,
        #[inject] call: ToolCallId,
    ) -> Result<String, ToolError> {
        let mut stock = self.stock.lock().unwrap();
        let held = stock.entry(item.clone()).or_default();
        if *held < units {
            return Err(ToolError::repair(format!("only {held} {item} in stock")));
        }
        *held -= units;
        Ok(format!("shipment {call}: {units} {item}, {held} left"))
    }
}

fn registry(inventory: Arc<Inventory>) -> Result<ToolRegistry, Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry.register_service(inventory)?; // stock_of, receive and ship
    Ok(registry)
}
// README: tools on a service (end)

/// The calls a model might make, in order: id, tool, arguments.
fn script() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        ("c1", "receive", json!({"item": "bolt", "units": 12})),
        ("c2", "ship", json!({"item": "bolt", "units": 5})),
        ("c3", "ship", json!({"item": "bolt", "units": 50})),
        ("c4", "stock_of", json!({"item": "bolt"})),
    ]
}

/// Runs the script; returns what the model reads for each call.
async fn walkthrough(inventory: Arc<Inventory>) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let executor = ToolExecutor::builder(registry(inventory)?, ()).build()?;
    let run = RunContext::empty();
    let mut seen = Vec::new();
    for (id, name, arguments) in script() {
        let line = format!("{name} {arguments}");
        let call = ToolCall::new(id, name, arguments);
        let result = executor.execute(&run, &Turn::new(1), call).await;
        let mark = if result.is_error { "refused" } else { "ok" };
        seen.push(format!("{line} -> {mark}: {}", result.text()));
    }
    Ok(seen)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let inventory = Arc::new(Inventory::default());
    for line in walkthrough(inventory.clone()).await? {
        println!("{line}");
    }
    // The application's own handle is the instance the tools worked on.
    let left = inventory.stock.lock().unwrap().get("bolt").copied();
    println!("the application sees {} bolts", left.unwrap_or(0));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_walkthrough_shares_one_inventory_across_both_blocks() {
        let inventory = Arc::new(Inventory::default());
        let seen = walkthrough(inventory.clone()).await.unwrap();
        assert_eq!(
            seen,
            [
                r#"receive {"item":"bolt","units":12} -> ok: 12"#,
                r#"ship {"item":"bolt","units":5} -> ok: shipment c2: 5 bolt, 7 left"#,
                r#"ship {"item":"bolt","units":50} -> refused: only 7 bolt in stock"#,
                r#"stock_of {"item":"bolt"} -> ok: 7"#,
            ]
        );
        assert_eq!(inventory.stock.lock().unwrap()["bolt"], 7);
    }
}
