//! Auto-registration: tools marked `#[tool(collect)]` are gathered at link
//! time and [`ToolRegistry::from_collected`] registers every one.
//!
//! Collection uses the `inventory` crate rather than `linkme`: `inventory`
//! needs no linker-section support from the target (it registers each item
//! from a constructor run at startup, on every platform Rust's std supports,
//! WebAssembly included), and a collected item needs no shared slice
//! declared up front. Without the `collect` feature nothing global happens:
//! `#[tool(collect)]` is then a compile error that names the feature.

use std::sync::Arc;

use crate::registry::{RegistryError, ToolRegistry};
use crate::tool::Tool;

/// One tool submitted by `#[tool(collect)]`, with where it is defined.
#[doc(hidden)]
pub struct CollectedTool {
    /// Builds the tool.
    pub make: fn() -> Arc<dyn Tool>,
    /// The file of the `#[tool(collect)]` attribute (`file!()`).
    pub file: &'static str,
    /// Its line (`line!()`).
    pub line: u32,
}

inventory::collect!(CollectedTool);

impl ToolRegistry {
    /// A registry of every tool marked `#[tool(collect)]` in the program
    /// (cargo feature `collect`; tools without application state or run
    /// context value). The order follows the link, not the source: rely on
    /// names, not positions. Every registration check applies; two
    /// collected tools with one name are [`RegistryError::Collision`] naming
    /// both definitions (`the tool collected at src/github.rs:12`).
    pub fn from_collected() -> Result<Self, RegistryError> {
        let mut registry = ToolRegistry::new();
        let mut collected: Vec<&CollectedTool> = inventory::iter::<CollectedTool>().collect();
        // The link order differs between builds; sorted by place, the
        // registry and its errors are the same every time.
        collected.sort_by_key(|c| (c.file, c.line));
        for tool in collected {
            let origin = format!("the tool collected at {}:{}", tool.file, tool.line);
            registry.register_from((tool.make)(), Some(Arc::from(origin)))?;
        }
        Ok(registry)
    }
}
