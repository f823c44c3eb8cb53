//! MCP over streamable HTTP (feature `http`).
//!
//! rmcp implements the protocol as a tower service; this module makes one
//! per server ([`McpServer::streamable_http_service`], to mount in an axum
//! or hyper application) and serves it on a listener
//! ([`McpServer::serve_http`], HTTP/1.1, until a token fires). Each MCP
//! session (each client that initializes) gets its own [`McpSession`], with
//! a run made by the server's run function, exactly as over stdio.
//!
//! Defaults, against DNS rebinding and cross-site requests from a browser:
//! only loopback `Host` headers are accepted (rmcp's default), and a request
//! carrying an `Origin` header is refused with 403 unless the origin is
//! loopback (`http` or `https` on `localhost`, `127.0.0.1` or `[::1]`, any
//! port). To accept other origins, list them in the config's
//! `allowed_origins` ([`StreamableHttpServerConfig::with_allowed_origins`],
//! for example `["https://app.example.com:443"]`); the list then replaces
//! the loopback default. Request bodies are bounded
//! (`max_request_body_bytes`), and cancelling the config's token ends every
//! session.
//!
//! Each POSTed message is screened as over stdio
//! ([`McpServer::serve_lines`]): a body that is not JSON is answered 400
//! with a JSON-RPC `-32700` error, a `tools/call` without a name or with
//! arguments that are not an object gets `-32602`, and a call's arguments
//! reach the executor as the text the client sent (a plain call goes to
//! rmcp without them, their text beside it in the request's extensions).
//! `DELETE` of a session answers 204 No Content.
//!
//! On protocol 2026-07-28 and later, a `tools/call` of a tool whose schema
//! marks arguments with `x-mcp-header` must carry those arguments in
//! `Mcp-Param-{Name}` headers that agree with the body; one that does not is
//! refused with 400 and JSON-RPC `-32020` before it runs (the rules are in
//! the `params` module). rmcp checks the `Mcp-Method` and `Mcp-Name`
//! headers.
//!
//! # Stateless mode, for more than one machine
//!
//! By default a client on a protocol before `2026-07-28` opens a session
//! (`Mcp-Session-Id`) that lives in the process that answered `initialize`,
//! so every later request of that client must reach the same process.
//! [`stateless_config`] turns sessions off: each POSTed request is served on
//! its own by a fresh [`McpSession`] (with a run made by the server's run
//! function), and nothing about the client is kept between requests, so any
//! number of instances behind a round-robin proxy serve one client. Clients
//! on `2026-07-28` or later are always served this way. What a stateless
//! request cannot do: the server cannot send the client requests of its own
//! (elicitation, so approvals over MCP are refused as for a client without
//! elicitation), there is no standalone `GET` stream for server
//! notifications, and `DELETE` is not allowed (405); progress of a call still
//! reaches the client on that call's own response stream.

use std::convert::Infallible;
use std::fmt::Display;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use self::params::ParamHeaders;
use crate::screen::{ArgumentsText, Screened, screen, split_plain_call};
use crate::{McpServer, McpSession};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tinyagents_tools::CancellationToken;
use tinyagents_tools::tool::Shared;
use tokio::net::TcpListener;

mod params;

/// The origins accepted when the config lists none: loopback, any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

type Inner<S, C> = StreamableHttpService<McpSession<S, C>, LocalSessionManager>;

/// An HTTP response as the service gives it.
pub type McpHttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// The streamable HTTP service over sessions of an [`McpServer`]: rmcp's,
/// with each message screened first and `DELETE` answered 204 (a tower
/// `Service` for any `http_body::Body`).
///
/// Cheap to clone: clones share one rmcp service (its config and session
/// manager), which serves each request by reference.
pub struct McpHttpService<S, C> {
    inner: Arc<Inner<S, C>>,
    max_body: usize,
    params: Arc<ParamHeaders>,
}

impl<S, C> Clone for McpHttpService<S, C> {
    fn clone(&self) -> Self {
        McpHttpService {
            inner: Arc::clone(&self.inner),
            max_body: self.max_body,
            params: Arc::clone(&self.params),
        }
    }
}

impl<S, C, B> tower_service::Service<Request<B>> for McpHttpService<S, C>
where
    S: Shared,
    C: Shared,
    B: Body<Data: Send, Error: Display> + Send + 'static,
{
    type Response = McpHttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<McpHttpResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let service = self.clone();
        Box::pin(async move { Ok(handle(&service, request).await) })
    }
}

async fn handle<S: Shared, C: Shared, B>(
    service: &McpHttpService<S, C>,
    request: Request<B>,
) -> McpHttpResponse
where
    B: Body<Data: Send, Error: Display> + Send + 'static,
{
    let inner = &*service.inner;
    let deleting = request.method() == Method::DELETE;
    let request = match screened(service.max_body, &service.params, request).await {
        Next::Forward(request) => request,
        Next::Done(response) => return response,
        // Rare, and it waits for rmcp twice: boxed, so that every request's
        // future stays the size of one wait.
        Next::Refuse(parts, answer) => return Box::pin(refuse(inner, parts, answer)).await,
    };
    let response = inner.handle(request).await;
    if deleting && response.status() == StatusCode::ACCEPTED {
        let mut done = Response::new(Full::new(Bytes::new()).boxed());
        *done.status_mut() = StatusCode::NO_CONTENT;
        return done;
    }
    response
}

/// What becomes of a request once its body is read and screened.
enum Next {
    /// rmcp serves this request (the body as sent, or as the screen
    /// rewrote it).
    Forward(Request<Full<Bytes>>),
    /// This is the answer.
    Done(McpHttpResponse),
    /// The screen answers the message itself, once rmcp has judged the
    /// request's headers.
    Refuse(http::request::Parts, Value),
}

/// Reads and screens the body of a POST (its `Mcp-Param-*` headers checked
/// against it first); any other method goes to rmcp with an empty body.
async fn screened<B>(max_body: usize, params: &ParamHeaders, request: Request<B>) -> Next
where
    B: Body,
    B::Error: Display,
{
    let (mut parts, body) = request.into_parts();
    if parts.method != Method::POST {
        return Next::Forward(Request::from_parts(parts, Full::new(Bytes::new())));
    }
    let bytes = match collect(body, max_body).await {
        Ok(bytes) => bytes,
        Err(response) => return Next::Done(response),
    };
    let json_body = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let prefix = v.trim_start().as_bytes().get(..JSON_TYPE.len());
            prefix.is_some_and(|p| p.eq_ignore_ascii_case(JSON_TYPE))
        });
    if !json_body {
        // rmcp answers it (415).
        return Next::Forward(Request::from_parts(parts, Full::new(bytes)));
    }
    if let Err(answer) = params.check(&parts.headers, &bytes) {
        return Next::Refuse(parts, answer);
    }
    if let Some((message, arguments)) = split_plain_call(&bytes) {
        // rmcp reads the call without its arguments; their text, as sent,
        // goes beside it to the session.
        if let Some(text) = arguments {
            parts.extensions.insert(ArgumentsText(text));
        }
        return rewritten(parts, message);
    }
    match screen(&bytes) {
        Screened::Pass(message) => rewritten(parts, message),
        Screened::Skip => Next::Forward(Request::from_parts(parts, Full::new(bytes))),
        Screened::Answer(answer) => Next::Refuse(parts, answer),
    }
}

/// The request with the body the screen wrote (its old length dropped).
fn rewritten(mut parts: http::request::Parts, message: Vec<u8>) -> Next {
    parts.headers.remove(http::header::CONTENT_LENGTH);
    Next::Forward(Request::from_parts(parts, Full::new(Bytes::from(message))))
}

/// The screen's answer (400, a JSON-RPC error) to a message rmcp cannot
/// read or whose headers contradict it, unless rmcp refuses the request's
/// headers first.
async fn refuse<S, C>(
    inner: &Inner<S, C>,
    parts: http::request::Parts,
    answer: Value,
) -> McpHttpResponse
where
    S: Shared,
    C: Shared,
{
    // rmcp first judges the headers (Host, Origin, Accept, session): a body
    // it cannot read gets its 415 only when they pass.
    let probe = Full::new(Bytes::from_static(b"{"));
    let judged = inner.handle(Request::from_parts(parts, probe)).await;
    if judged.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return judged;
    }
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// The media type whose bodies are screened (any case, any parameters).
const JSON_TYPE: &[u8] = b"application/json";

/// The whole body, at most `max` bytes. A body that arrives in one piece
/// is kept as it arrived (no copy).
async fn collect<B>(body: B, max: usize) -> Result<Bytes, McpHttpResponse>
where
    B: Body,
    B::Error: Display,
{
    use bytes::Buf;
    let mut body = std::pin::pin!(body);
    let mut first = Bytes::new();
    let mut joined: Option<Vec<u8>> = None;
    while let Some(frame) = body.as_mut().frame().await {
        let frame = frame.map_err(|e| {
            plain(
                StatusCode::BAD_REQUEST,
                format!("failed to read the request body: {e}"),
            )
        })?;
        if let Ok(mut data) = frame.into_data() {
            let held = joined.as_ref().map_or(first.len(), Vec::len);
            if data.remaining() > max.saturating_sub(held) {
                return Err(plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("Payload Too Large: request body exceeds {max} bytes"),
                ));
            }
            let piece = data.copy_to_bytes(data.remaining());
            match &mut joined {
                None if first.is_empty() => first = piece,
                None => joined = Some([&first[..], &piece[..]].concat()),
                Some(whole) => whole.extend_from_slice(&piece),
            }
        }
    }
    Ok(joined.map_or(first, Bytes::from))
}

fn plain(status: StatusCode, text: String) -> McpHttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
}

/// A config for stateless serving: no sessions are kept, so several
/// instances behind any load balancer serve one client (see the module
/// documentation for what a stateless request cannot do). Simple answers are
/// sent as `application/json`; an answer preceded by progress notifications
/// is sent as an event stream.
///
/// ```no_run
/// # async fn serve(server: tinyagents_tools_mcp::McpServer) -> std::io::Result<()> {
/// use tinyagents_tools::CancellationToken;
/// use tinyagents_tools_mcp::stateless_config;
///
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
/// let config = stateless_config().with_allowed_hosts(["mcp.example.com"]);
/// server.serve_http(listener, config, CancellationToken::new()).await
/// # }
/// ```
pub fn stateless_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
}

#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl<S: Shared, C: Shared> McpServer<S, C> {
    /// A tower service that speaks MCP streamable HTTP, one [`McpSession`]
    /// per client session. Mount it at a path of your HTTP server (for
    /// example axum's `Router::nest_service("/mcp", service)`).
    ///
    /// An empty `config.allowed_origins` accepts only [`LOOPBACK_ORIGINS`];
    /// a list replaces them.
    pub fn streamable_http_service(
        &self,
        mut config: StreamableHttpServerConfig,
    ) -> McpHttpService<S, C> {
        if config.allowed_origins.is_empty() {
            config = config.with_allowed_origins(LOOPBACK_ORIGINS);
        }
        let max_body = config.max_request_body_bytes;
        let params = Arc::new(ParamHeaders::new(self.tools()));
        let server = self.clone();
        // Without legacy sessions every request is served on its own.
        let stateless = !config.legacy_session_mode;
        McpHttpService {
            inner: Arc::new(StreamableHttpService::new(
                move || match stateless {
                    true => Ok(server.session().stateless()),
                    false => Ok(server.session()),
                },
                Arc::new(LocalSessionManager::default()),
                config,
            )),
            max_body,
            params,
        }
    }

    /// Serves MCP streamable HTTP on `listener` (every path answers) until
    /// `shutdown` fires: then it stops accepting, cancels every session and
    /// returns. A connection that fails is dropped without affecting the
    /// others. Errors only when accepting connections fails.
    ///
    /// ```no_run
    /// # async fn serve(server: tinyagents_tools_mcp::McpServer) -> std::io::Result<()> {
    /// use tinyagents_tools::CancellationToken;
    /// use tinyagents_tools_mcp::rmcp::transport::StreamableHttpServerConfig;
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
            // An answer streamed as events is written in several small
            // pieces: without this, Nagle's algorithm holds each piece until
            // the client acknowledges the previous one (up to 40 ms of
            // delayed ACK per call).
            let _ = stream.set_nodelay(true);
            let service = TowerToHyperService::new(service.clone());
            // A token of the connection's own: the connection's task checks
            // it each time it wakes, and a token shared by every connection
            // would make those checks contend for one lock across threads.
            let stop = sessions.child_token();
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
