//! MCP over streamable HTTP (feature `mcp-http`).
//!
//! rmcp implements the protocol as a tower service; this module makes one
//! per server ([`McpServer::streamable_http_service`], to mount in an axum
//! or hyper application) and serves it on a listener
//! ([`McpServer::serve_http`], HTTP/1.1, until a token fires). Each MCP
//! session (each client that initializes) gets its own [`McpSession`], with
//! a run made by the server's run function, exactly as over stdio.
//!
//! rmcp's defaults hold unless the config says otherwise: only loopback
//! `Host` headers are accepted (against DNS rebinding), request bodies are
//! bounded, and cancelling the config's token ends every session.

use std::io;
use std::sync::Arc;

use super::{McpServer, McpSession};
use crate::CancellationToken;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

/// rmcp's streamable HTTP service over sessions of an [`McpServer`].
pub type McpHttpService<S, C> = StreamableHttpService<McpSession<S, C>, LocalSessionManager>;

impl<S, C> McpServer<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// A tower service that speaks MCP streamable HTTP, one [`McpSession`]
    /// per client session. Mount it at a path of your HTTP server (for
    /// example axum's `Router::nest_service("/mcp", service)`).
    pub fn streamable_http_service(
        &self,
        config: StreamableHttpServerConfig,
    ) -> McpHttpService<S, C> {
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.session()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// Serves MCP streamable HTTP on `listener` (every path answers) until
    /// `shutdown` fires: then it stops accepting, cancels every session and
    /// returns. A connection that fails is dropped without affecting the
    /// others. Errors only when accepting connections fails.
    ///
    /// ```no_run
    /// # async fn serve(server: tinyagents_tools::mcp::McpServer) -> std::io::Result<()> {
    /// use tinyagents_tools::CancellationToken;
    /// use tinyagents_tools::mcp::rmcp::transport::StreamableHttpServerConfig;
    ///
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server
    ///     .serve_http(listener, StreamableHttpServerConfig::default(), CancellationToken::new())
    ///     .await
    /// # }
    /// ```
    pub async fn serve_http(
        &self,
        listener: TcpListener,
        mut config: StreamableHttpServerConfig,
        shutdown: CancellationToken,
    ) -> io::Result<()> {
        // Sessions end with the server.
        let sessions = shutdown.child_token();
        config.cancellation_token = sessions.clone();
        let service = self.streamable_http_service(config);
        let result = loop {
            let (stream, _peer) = tokio::select! {
                _ = shutdown.cancelled() => break Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(connection) => connection,
                    Err(e) if is_per_connection(&e) => continue,
                    Err(e) => break Err(e),
                },
            };
            let service = TowerToHyperService::new(service.clone());
            let stop = sessions.clone();
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    served = connection.as_mut() => {
                        if let Err(e) = served {
                            tracing::debug!(error = %e, "MCP HTTP connection ended with an error");
                        }
                    }
                    _ = stop.cancelled() => {
                        // Let answers in flight finish, briefly.
                        connection.as_mut().graceful_shutdown();
                        let _ = tokio::time::timeout(GRACE, connection.as_mut()).await;
                    }
                }
            });
        };
        sessions.cancel();
        result
    }
}

/// How long open connections get to finish after shutdown.
const GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Accept errors that concern one connection only (the listener goes on).
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}
