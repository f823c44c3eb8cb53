// Tools on a service: two blocks, plain parameters, an argument struct,
// injections and options, under a renamed runtime crate path too.
use std::sync::Arc;

use tinyagents_tools::prelude::*;

/// The arguments of `put`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Put {
    /// The key.
    pub key: String,
}

#[derive(Default)]
pub struct Db;

#[tools]
impl Db {
    /// Read a key.
    #[tool(read_only, idempotent, retry(max_attempts = 2))]
    pub async fn get(
        &self,
        /// The key.
        key: String,
        #[inject] _call: ToolCallId,
    ) -> Result<String, ToolError> {
        Ok(key)
    }

    /// Write a key.
    #[tool(name = "put_key", timeout = "1s")]
    pub async fn put(&self, args: Put) -> String {
        args.key
    }
}

#[tools(block = 2)]
impl Db {
    /// Count the keys.
    #[tool(blocking, read_only)]
    pub fn count(&self) -> usize {
        0
    }
}

mod renamed {
    pub use tinyagents_tools as runtime;
}

struct Other;

#[tools(crate = "renamed::runtime")]
impl Other {
    /// Say hi.
    #[tool]
    async fn hi(&self) -> String {
        "hi".into()
    }
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register_service(Arc::new(Db)).unwrap();
    registry.register_service(Arc::new(Other)).unwrap();
    let _ = DbGetTool::new(Arc::new(Db)).clone();
    let _ = DbPutTool::spec();
    let _ = OtherHiTool::spec();
}
