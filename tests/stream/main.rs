//! Model output as it streams: provider streams read as they arrive
//! (`native_*`) and the text formats of open-weight models, each against
//! the whole-response parse, for every chunking; and one streamed turn
//! from the output to the answers (`execute`); the `stream_calls` example
//! as a process (`example_stream_calls`).
//!
//! One test binary for the folder, one module per file.

mod example_stream_calls;
mod execute;
mod grammar_convert;
mod grammar_gbnf;
mod grammar_lark;
mod grammar_required;
mod grammar_support;
mod grammar_xgrammar;
mod native_anthropic;
mod native_bad_input;
mod native_chat;
mod native_common;
mod native_gemini;
mod native_invariant;
mod native_responses;
mod text_bare;
mod text_early;
mod text_finish;
mod text_formats;
mod text_in_place;
mod text_invariance;
mod text_markup;
mod text_peers;
mod text_render;
mod text_rules;
mod text_support;
