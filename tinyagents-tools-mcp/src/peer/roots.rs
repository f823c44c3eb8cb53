//! [`McpPeer::list_roots`]: the client's roots, asked as a request on the
//! 2025 protocols and in input rounds on 2026-07-28.

use rmcp::model::{ClientResult, InputRequest, ListRootsRequest, ServerRequest};
use serde_json::Value;

use super::{McpPeer, McpPeerError, answered_in};

impl McpPeer {
    /// The client's roots (`roots/list`): the directories or files it lets
    /// the server work in, as `{"uri", "name"?}` objects.
    pub async fn list_roots(&self) -> Result<Vec<Value>, McpPeerError> {
        self.list_roots_keyed(None).await
    }

    /// [`list_roots`](Self::list_roots), asked under `key` when the client
    /// is asked in input rounds.
    pub async fn list_roots_as(&self, key: &str) -> Result<Vec<Value>, McpPeerError> {
        self.list_roots_keyed(Some(key)).await
    }

    async fn list_roots_keyed(&self, key: Option<&str>) -> Result<Vec<Value>, McpPeerError> {
        if !self.can_list_roots() {
            return Err(self.lacking("roots"));
        }
        let answer = if let Some(rounds) = self.rounds() {
            answered_in(rounds, key, "roots", || {
                InputRequest::ListRoots(ListRootsRequest::default())
            })?
        } else {
            let link = self.link()?;
            let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
            match self.request(link, request).await? {
                ClientResult::ListRootsResult(result) => {
                    serde_json::to_value(result).map_err(|_| McpPeerError::UnexpectedAnswer)?
                }
                _ => return Err(McpPeerError::UnexpectedAnswer),
            }
        };
        match answer.get("roots") {
            Some(Value::Array(roots)) if roots.iter().all(|r| r["uri"].is_string()) => {
                Ok(roots.clone())
            }
            _ => Err(McpPeerError::InvalidAnswer(
                "a roots/list result must hold `roots`, an array of objects with a `uri`".into(),
            )),
        }
    }
}
