//! A local OpenAI-compatible Chat Completions stub on 127.0.0.1 (no network,
//! no key), shared by the `rig_agent` example and the agent test: it answers
//! the `n`th request with the `n`th scripted assistant message (the last one
//! again past the end) and keeps every request body it got.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// An assistant message asking for one call of `tool` with `arguments`
/// (JSON text, as the model sends it).
pub fn tool_call(id: &str, tool: &str, arguments: &str) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": id, "type": "function",
        "function": {"name": tool, "arguments": arguments}
    }]})
}

/// An assistant message with final text.
pub fn text(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// A running stub: its base URL (`http://127.0.0.1:<port>/v1`) and the
/// request bodies it has received so far.
pub struct Stub {
    /// The base URL to give the OpenAI client.
    pub base_url: String,
    /// Every request body, parsed, in arrival order.
    pub requests: Arc<Mutex<Vec<Value>>>,
}

/// Starts the stub on a free port, answering with `script` in order.
pub async fn start(script: Vec<Value>) -> std::io::Result<Stub> {
    // rig's reqwest client may be built with rustls and no provider when
    // features are unified across the workspace; plain HTTP still needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    let requests = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn(serve(listener, script, Arc::clone(&requests)));
    Ok(Stub { base_url, requests })
}

fn completion(n: usize, message: &Value) -> Value {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json!({
        "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 0,
        "model": "stub-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
}

/// Serves HTTP/1.1, one request per connection.
async fn serve(listener: TcpListener, script: Vec<Value>, requests: Arc<Mutex<Vec<Value>>>) {
    while let Ok((mut socket, _)) = listener.accept().await {
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        let mut body_at = None;
        // Headers, then as many body bytes as Content-Length says.
        while let Ok(n) = socket.read(&mut buf).await {
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
            let head = String::from_utf8_lossy(&request);
            if let Some(end) = head.find("\r\n\r\n") {
                let length = head[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    body_at = Some(end + 4);
                    break;
                }
            }
        }
        let body = body_at
            .and_then(|at| serde_json::from_slice(&request[at..]).ok())
            .unwrap_or(Value::Null);
        let n = {
            let mut seen = requests.lock().unwrap();
            seen.push(body);
            seen.len() - 1
        };
        let message = &script[n.min(script.len() - 1)];
        let body = completion(n, message).to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
    }
}
