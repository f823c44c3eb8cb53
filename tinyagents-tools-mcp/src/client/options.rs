//! How an [`McpClient`](super::McpClient) connects: its initialization's
//! timeout and lifecycle, and who answers the server's requests for input.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::DEFAULT_CONNECT_TIMEOUT;
use super::input::McpInputHandler;

/// How many rounds of requests for input one call answers unless set
/// otherwise ([`McpClientOptions::max_input_rounds`]).
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 8;

/// How an [`McpClient`](super::McpClient) connects and answers requests for input.
#[derive(Clone)]
#[non_exhaustive]
pub struct McpClientOptions {
    /// How long the MCP initialization may take.
    pub timeout: Duration,
    /// Answers the server's requests for input (declines and refuses
    /// everything when unset).
    pub input_handler: Option<Arc<dyn McpInputHandler>>,
    /// How many rounds of requests for input one call answers; one more
    /// fails the call (`fatal`, limit `mcp_input_rounds`).
    pub max_input_rounds: usize,
    /// Start with `server/discover` (protocol 2026-07-28, which has no
    /// `initialize`), falling back to `initialize` when the server answers
    /// it with an error (or not within 10 seconds), so that a server that
    /// speaks 2026-07-28 is spoken to in it. Off by default: the client
    /// sends `initialize`, and a 2026-07-28 server answers it with an older
    /// version.
    pub discover: bool,
}

impl Default for McpClientOptions {
    fn default() -> Self {
        McpClientOptions {
            timeout: DEFAULT_CONNECT_TIMEOUT,
            input_handler: None,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            discover: false,
        }
    }
}

impl fmt::Debug for McpClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClientOptions")
            .field("timeout", &self.timeout)
            .field("input_handler", &self.input_handler.as_ref().map(|_| ".."))
            .field("max_input_rounds", &self.max_input_rounds)
            .field("discover", &self.discover)
            .finish()
    }
}

impl McpClientOptions {
    /// [`DEFAULT_CONNECT_TIMEOUT`], no input handler,
    /// [`DEFAULT_MAX_INPUT_ROUNDS`].
    pub fn new() -> Self {
        McpClientOptions::default()
    }

    /// How long the MCP initialization may take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Answers the server's requests for input with `handler`.
    pub fn input_handler(mut self, handler: impl McpInputHandler) -> Self {
        self.input_handler = Some(Arc::new(handler));
        self
    }

    /// How many rounds of requests for input one call answers.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Whether to start with `server/discover` ([`discover`](Self::discover)).
    pub fn discover(mut self, discover: bool) -> Self {
        self.discover = discover;
        self
    }
}
