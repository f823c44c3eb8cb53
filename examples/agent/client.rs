//! [`ApiClient`]: POSTs requests to an OpenAI-compatible API (Chat
//! Completions, or the raw Completions endpoint), whole or streamed, with
//! the API key as a bearer token that is never shown.

use std::fmt;
use std::time::Duration;

use futures_util::Stream;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use tinyagents_tools::Secret;

/// An API key. Only ever held inside a [`Secret`], so `Debug` shows
/// `Secret<ApiKey>(***)`.
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Secret<ApiKey> {
        Secret::new(ApiKey(key.into()))
    }
}

impl AsRef<str> for ApiKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The most bytes of an error body kept in a [`ClientError::Status`].
pub const MAX_ERROR_BODY: usize = 2048;

/// Why a request got no usable response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The HTTP client could not be built (TLS setup).
    #[error("could not set up the HTTP client: {0}")]
    Setup(#[source] reqwest::Error),
    /// The API key cannot be sent in a header (it has control characters).
    #[error("the API key contains characters that cannot be sent in a header")]
    InvalidKey,
    /// The request failed before a response came (connection, TLS,
    /// timeout).
    #[error("request to {url} failed: {cause}")]
    Transport {
        /// The endpoint.
        url: String,
        /// The chain of causes, innermost last (for example
        /// `client error (Connect): invalid peer certificate: UnknownIssuer`).
        cause: String,
        /// The client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The endpoint answered with an error status.
    #[error("{url} answered {status}: {body}")]
    Status {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body, with the API key masked.
        body: String,
    },
    /// The response body is not JSON.
    #[error("{url} answered with a body that is not JSON: {source}")]
    NotJson {
        /// The endpoint.
        url: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
}

/// The endpoint a request goes to, under the API root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `{base_url}/chat/completions`.
    Chat,
    /// `{base_url}/completions`: a raw prompt in, raw text out.
    Completions,
}

impl Endpoint {
    fn path(self) -> &'static str {
        match self {
            Endpoint::Chat => "chat/completions",
            Endpoint::Completions => "completions",
        }
    }
}

/// Sends requests to an OpenAI-compatible API root.
pub struct ApiClient {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<Secret<ApiKey>>,
}

impl ApiClient {
    /// A client for `base_url` (for example `https://api.openai.com/v1`),
    /// authenticating with `api_key` when there is one, each request bounded
    /// by `timeout` (a streamed one from the request to the stream's end).
    pub fn new(
        base_url: &str,
        api_key: Option<Secret<ApiKey>>,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        // One TLS stack: rustls with the ring provider (builds without cmake).
        // Installing fails only when the application installed one already,
        // which is then used.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!(
                "tinyagents-tools-examples/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .map_err(ClientError::Setup)?;
        if let Some(key) = &api_key {
            bearer(key)?;
        }
        Ok(ApiClient {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key,
        })
    }

    /// The URL of `endpoint`.
    pub fn url(&self, endpoint: Endpoint) -> String {
        format!("{}/{}", self.base_url, endpoint.path())
    }

    /// POSTs `body` to `endpoint` and returns the JSON response of a 2xx
    /// answer.
    pub async fn complete(&self, endpoint: Endpoint, body: &Value) -> Result<Value, ClientError> {
        let url = self.url(endpoint);
        let response = self.send(&url, body, "application/json").await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|source| transport(&url, source))?;
        serde_json::from_slice(&bytes).map_err(|source| ClientError::NotJson { url, source })
    }

    /// POSTs `body` (a request with `"stream": true`) to `endpoint` and,
    /// once a 2xx answer's head has come, returns its body as it arrives:
    /// the server-sent events, in pieces cut wherever the network cut them.
    /// A connection lost mid-body is the stream's last item, an error.
    pub async fn stream(
        &self,
        endpoint: Endpoint,
        body: &Value,
    ) -> Result<
        impl Stream<Item = Result<impl AsRef<[u8]> + use<>, ClientError>> + use<>,
        ClientError,
    > {
        let url = self.url(endpoint);
        let response = self.send(&url, body, "text/event-stream").await?;
        Ok(futures_util::stream::unfold(
            Some((response, url)),
            |state| async move {
                let (mut response, url) = state?;
                match response.chunk().await {
                    Ok(Some(piece)) => Some((Ok(piece), Some((response, url)))),
                    Ok(None) => None,
                    // Nothing comes after a broken body.
                    Err(source) => Some((Err(transport(&url, source)), None)),
                }
            },
        ))
    }

    /// Sends `body` to `url` and returns the response of a 2xx answer; any
    /// other status is a [`ClientError::Status`] with the start of the
    /// body.
    async fn send(
        &self,
        url: &str,
        body: &Value,
        accept: &'static str,
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = self
            .http
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            request = request.header(AUTHORIZATION, bearer(key)?);
        }
        let response = request
            .send()
            .await
            .map_err(|source| transport(url, source))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|source| transport(url, source))?;
        Err(ClientError::Status {
            url: url.to_owned(),
            status: status.as_u16(),
            body: self.mask(&bytes),
        })
    }

    /// The start of an error body as text, with the key masked wherever it
    /// appears (some servers echo what they were sent).
    fn mask(&self, bytes: &[u8]) -> String {
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        if let Some(key) = &self.api_key
            && !key.expose().0.is_empty()
        {
            text = text.replace(key.expose().0.as_str(), "***");
        }
        if text.len() > MAX_ERROR_BODY {
            // The longest start of at most MAX_ERROR_BODY bytes that ends
            // between two characters.
            let end = (0..=MAX_ERROR_BODY)
                .rfind(|&end| text.is_char_boundary(end))
                .unwrap_or(0);
            text.truncate(end);
            text.push_str("...");
        }
        text
    }
}

fn transport(url: &str, source: reqwest::Error) -> ClientError {
    ClientError::Transport {
        url: url.to_owned(),
        cause: causes(&source),
        source,
    }
}

/// The causes under a client error, joined by `: ` (the top error only
/// repeats the URL); its own text when it has none.
fn causes(error: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut next = std::error::Error::source(error);
    while let Some(cause) = next {
        parts.push(cause.to_string());
        next = cause.source();
    }
    if parts.is_empty() {
        error.to_string()
    } else {
        parts.join(": ")
    }
}

fn bearer(key: &Secret<ApiKey>) -> Result<HeaderValue, ClientError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose().0))
        .map_err(|_| ClientError::InvalidKey)?;
    value.set_sensitive(true);
    Ok(value)
}

impl fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiClient")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .finish()
    }
}
