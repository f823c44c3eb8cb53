//! Newline-delimited JSON-RPC (the stdio transport) with every incoming line
//! [screened](crate::screen) before rmcp reads it.
//!
//! Two tasks sit between the byte streams and rmcp: one reads lines (at most
//! [`MAX_LINE_BYTES`] each), screens them and hands the readable ones to
//! rmcp through an in-process pipe; the other writes rmcp's messages and the
//! screen's own answers, one line each, in the order they are made.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use crate::screen::{Screened, error, screen};

/// The longest line read, in bytes; a longer one is answered `-32600`
/// (invalid request) and skipped.
pub(crate) const MAX_LINE_BYTES: usize = 4 << 20;

/// Room for messages in flight between the tasks and rmcp.
const PIPE_BYTES: usize = 64 << 10;

/// Starts the tasks between `reader`/`writer` and the returned pipe end,
/// which rmcp serves on. The tasks end when both sides have closed.
pub(crate) fn spawn<R, W>(reader: R, writer: W) -> DuplexStream
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (answers, outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(read_lines(BufReader::new(reader), to_rmcp, answers.clone()));
    tokio::spawn(forward(BufReader::new(from_rmcp), answers));
    tokio::spawn(write_lines(writer, outgoing));
    theirs
}

/// Reads, screens and forwards lines until the input ends or rmcp leaves.
async fn read_lines<R, W>(mut reader: R, mut to_rmcp: W, answers: mpsc::UnboundedSender<Vec<u8>>)
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::new();
    loop {
        let (ended, too_long) = match read_line(&mut reader, &mut line).await {
            Ok(read) => read,
            Err(e) => {
                tracing::debug!(error = %e, "MCP input failed");
                break;
            }
        };
        if too_long {
            let message =
                format!("Invalid request: a message is longer than {MAX_LINE_BYTES} bytes");
            let _ = answers.send(encode(&error(Value::Null, -32600, &message)));
        } else {
            match screen(&line) {
                Screened::Skip => {}
                Screened::Answer(answer) => {
                    let _ = answers.send(encode(&answer));
                }
                Screened::Pass(mut message) => {
                    message.push(b'\n');
                    if to_rmcp.write_all(&message).await.is_err() {
                        break;
                    }
                }
            }
        }
        line.clear();
        if ended {
            break;
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// Reads one line into `line` (without its newline), keeping at most
/// [`MAX_LINE_BYTES`]; returns whether the input ended and whether the line
/// was longer.
async fn read_line<R>(reader: &mut R, line: &mut Vec<u8>) -> std::io::Result<(bool, bool)>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok((true, too_long));
        }
        let (chunk, used, done) = match available.iter().position(|&c| c == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        if line.len() + chunk.len() > MAX_LINE_BYTES {
            too_long = true;
            line.clear();
        } else if !too_long {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if done {
            return Ok((false, too_long));
        }
    }
}

/// Hands rmcp's outgoing lines to the writer.
async fn forward<R>(mut from_rmcp: R, out: mpsc::UnboundedSender<Vec<u8>>)
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let mut line = Vec::new();
    while let Ok(read) = from_rmcp.read_until(b'\n', &mut line).await {
        if read == 0 || out.send(std::mem::take(&mut line)).is_err() {
            break;
        }
    }
}

/// Writes whole lines, flushing each.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

fn encode(answer: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(answer).unwrap_or_default();
    line.push(b'\n');
    line
}
