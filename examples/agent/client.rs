//! [`ChatClient`]: POSTs Chat Completions requests to an OpenAI-compatible
//! endpoint, with the API key as a bearer token that is never shown.

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
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

/// Sends Chat Completions requests to `{base_url}/chat/completions`.
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    api_key: Option<Secret<ApiKey>>,
}

impl ChatClient {
    /// A client for `base_url` (for example `https://api.openai.com/v1`),
    /// authenticating with `api_key` when there is one, each request bounded
    /// by `timeout`.
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
        Ok(ChatClient {
            http,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key,
        })
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` and returns the JSON response of a 2xx answer.
    pub async fn complete(&self, body: &Value) -> Result<Value, ClientError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            request = request.header(AUTHORIZATION, bearer(key)?);
        }
        let transport = |source: reqwest::Error| ClientError::Transport {
            url: self.url.clone(),
            cause: causes(&source),
            source,
        };
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(transport)?;
        if !status.is_success() {
            return Err(ClientError::Status {
                url: self.url.clone(),
                status: status.as_u16(),
                body: self.mask(&bytes),
            });
        }
        serde_json::from_slice(&bytes).map_err(|source| ClientError::NotJson {
            url: self.url.clone(),
            source,
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

impl fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatClient")
            .field("url", &self.url)
            .field("api_key", &self.api_key)
            .finish()
    }
}
