//! [`TextPrompt`]: the whole prompt a raw completion endpoint is sent when
//! the model writes its calls as text, in its family's chat template.
//!
//! The library writes the parts that are about tools
//! ([`TextFormat::instruction`], [`TextFormat::render_results`]); this
//! module writes the turns around them the way each family's chat template
//! does: the system turn (with the instruction where the template puts it),
//! the user turn, the assistant's turns and the header that asks for the
//! next one. What each family's template is read from is named on
//! [`TextPrompt::render`].
//!
//! The assistant's turns go back **as the model wrote them** (the raw
//! output of the completion, reasoning and call markup included) followed by
//! the marker that ends the turn, which the server strips as a stop
//! sequence. That is what the template renders for the turns of the current
//! request (the reasoning of tool-calling turns is kept), it keeps a call
//! the reader refused exactly as the model wrote it next to its error
//! answer, and each prompt extends the last one byte for byte, so a server's
//! prefix cache reuses it.
//!
//! The prompt starts after the beginning-of-sequence token: servers add it
//! when they tokenize a completion prompt (vLLM, SGLang and llama.cpp do).

use tinyagents_tools::ToolResult;
use tinyagents_tools::spec::ToolSpec;
use tinyagents_tools::stream::text::{Family, TextFormat};

/// Harmony's system message, as openai/harmony renders it with the default
/// identity, medium reasoning and function tools.
const HARMONY_SYSTEM: &str = "<|start|>system<|message|>You are ChatGPT, a large language model \
trained by OpenAI.\nKnowledge cutoff: 2024-06\n\nReasoning: medium\n\n# Valid channels: analysis, \
commentary, final. Channel must be included for every message.\nCalls to these tools must go to \
the commentary channel: 'functions'.<|end|>";

/// Llama 3.1's system header when tools are offered, with its template's
/// default date.
const LLAMA3_SYSTEM: &str = "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: \
ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";

/// One assistant turn of the conversation and the answers to its calls.
#[derive(Debug, Clone)]
pub struct TextTurn {
    /// What the model wrote, as it arrived (the stop sequence excluded).
    pub output: String,
    /// Whether the model called tools in it (ready, failed or cut off).
    pub called: bool,
    /// The answers to its calls, in call order.
    pub results: Vec<ToolResult>,
}

/// The conversation of one run against a completion endpoint: the system
/// text, the tools, the user's prompt and the turns so far.
#[derive(Debug, Clone)]
pub struct TextPrompt {
    format: TextFormat,
    system: Option<String>,
    instruction: String,
    user: String,
    turns: Vec<TextTurn>,
}

impl TextPrompt {
    /// A conversation in `format` that offers `tools`, with the system
    /// text `system` (if any) and the user's `prompt`.
    pub fn new(
        format: TextFormat,
        system: Option<String>,
        tools: &[ToolSpec],
        prompt: impl Into<String>,
    ) -> Self {
        TextPrompt {
            instruction: format.instruction(tools),
            format,
            system,
            user: prompt.into(),
            turns: Vec::new(),
        }
    }

    /// The format the model writes in.
    pub fn format(&self) -> &TextFormat {
        &self.format
    }

    /// Appends the assistant's turn and the answers to its calls.
    pub fn push(&mut self, turn: TextTurn) {
        self.turns.push(turn);
    }

    /// The turns so far.
    pub fn turns(&self) -> &[TextTurn] {
        &self.turns
    }

    /// The texts that end the model's turn in this family, sent as the
    /// request's `stop` so a server without the model's end-of-turn tokens
    /// in its stop list still stops there (and the model does not write the
    /// tool's answer itself).
    pub fn stop(&self) -> &'static [&'static str] {
        match self.format.family {
            Family::Glm45 => &["<|user|>", "<|observation|>"],
            Family::Llama3Json => &["<|eot_id|>", "<|eom_id|>"],
            Family::Pythonic => &["<|eot|>", "<|eom|>"],
            Family::Mistral | Family::MistralV11 => &["</s>"],
            Family::DeepSeekV3 | Family::DeepSeekV31 => &["<｜end▁of▁sentence｜>"],
            Family::Harmony => &["<|call|>", "<|return|>"],
            // ChatML: Hermes, Qwen3-Coder, Kimi's `<|im_end|>`, and the
            // tags format, written in ChatML.
            _ => &["<|im_end|>"],
        }
    }

    /// The whole prompt: the conversation so far, ending where the model
    /// writes its next turn.
    ///
    /// Each family follows its chat template: ChatML with the tools in the
    /// system turn (Qwen2.5's and Qwen3's templates for `hermes`,
    /// Qwen3-Coder's for `qwen3-coder`, and ChatML for a `tags:` format);
    /// GLM-4.5's (`[gMASK]<sop>`, the tools in their own `<|system|>` turn,
    /// `<|observation|>` results); Llama 3.1's JSON tool template (the tools
    /// in the first user turn, results in `ipython` turns); vLLM's Llama 4
    /// pythonic template (the tools after the system text); mistral-common's
    /// tokenizers (`[AVAILABLE_TOOLS]` before the user turn; v11 adds
    /// `[SYSTEM_PROMPT]`); DeepSeek V3's and V3.1's templates (V3.1 in
    /// non-thinking mode, `</think>` after `<｜Assistant｜>`); Kimi K2's
    /// (`tool_declare` first); and openai/harmony's renderer (system and
    /// developer messages, the tools in the developer message).
    pub fn render(&self) -> String {
        let mut out = self.head();
        for turn in &self.turns {
            out.push_str(&turn.output);
            out.push_str(self.turn_end(turn.called));
            if !turn.results.is_empty() {
                out.push_str(&self.results(&turn.results));
                out.push_str(self.next_turn());
            }
        }
        out
    }

    /// The system text followed by `sep`, or nothing.
    fn system_then(&self, sep: &str) -> String {
        match &self.system {
            Some(s) if !s.trim().is_empty() => format!("{}{sep}", s.trim()),
            _ => String::new(),
        }
    }

    /// Everything before the first assistant turn, its header included.
    fn head(&self) -> String {
        let (instruction, user) = (&self.instruction, &self.user);
        match self.format.family {
            Family::Glm45 => {
                let system = match &self.system {
                    Some(s) if !s.trim().is_empty() => format!("<|system|>\n{}", s.trim()),
                    _ => String::new(),
                };
                format!(
                    "[gMASK]<sop><|system|>\n{instruction}{system}<|user|>\n{user}<|assistant|>"
                )
            }
            Family::Llama3Json => format!(
                "{LLAMA3_SYSTEM}{}<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n\
                 {instruction}{user}<|eot_id|>{}",
                self.system_then(""),
                self.next_turn()
            ),
            Family::Pythonic => format!(
                "<|header_start|>system<|header_end|>\n\n{}{instruction}<|eot|>\
                 <|header_start|>user<|header_end|>\n\n{user}<|eot|>{}",
                self.system_then("\n"),
                self.next_turn()
            ),
            Family::Mistral => {
                format!(
                    "{instruction}[INST] {}{user}[/INST]",
                    self.system_then("\n\n")
                )
            }
            Family::MistralV11 => {
                let system = match &self.system {
                    Some(s) if !s.trim().is_empty() => {
                        format!("[SYSTEM_PROMPT]{}[/SYSTEM_PROMPT]", s.trim())
                    }
                    _ => String::new(),
                };
                format!("{system}{instruction}[INST]{user}[/INST]")
            }
            Family::DeepSeekV3 => format!(
                "{}{instruction}<｜User｜>{user}<｜Assistant｜>",
                self.system_then("\n\n")
            ),
            Family::DeepSeekV31 => format!(
                "{}{instruction}<｜User｜>{user}<｜Assistant｜></think>",
                self.system_then("\n\n")
            ),
            Family::KimiK2 => {
                let system = self
                    .system
                    .as_deref()
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or("You are Kimi, an AI assistant created by Moonshot AI.");
                format!(
                    "{instruction}<|im_system|>system<|im_middle|>{system}<|im_end|>\
                     <|im_user|>user<|im_middle|>{user}<|im_end|>{}",
                    self.next_turn()
                )
            }
            Family::Harmony => format!(
                "{HARMONY_SYSTEM}<|start|>developer<|message|># Instructions\n\n{}{instruction}<|end|>\
                 <|start|>user<|message|>{user}<|end|>{}",
                self.system_then("\n\n"),
                self.next_turn()
            ),
            // ChatML: Hermes and Qwen3 (the tools after the system text),
            // Qwen3-Coder, and the tags format.
            _ => format!(
                "<|im_start|>system\n{}{instruction}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n{}",
                self.system_then("\n\n"),
                self.next_turn()
            ),
        }
    }

    /// What closes an assistant turn after the model's output (the stop
    /// sequence the server stripped, and what the template writes after
    /// it).
    fn turn_end(&self, called: bool) -> &'static str {
        match self.format.family {
            // The next turn's role tag closes it.
            Family::Glm45 => "",
            Family::Llama3Json => "<|eot_id|>",
            Family::Pythonic => "<|eot|>",
            Family::Mistral | Family::MistralV11 => "</s>",
            Family::DeepSeekV3 | Family::DeepSeekV31 => "<｜end▁of▁sentence｜>",
            Family::KimiK2 => "<|im_end|>",
            Family::Harmony if called => "<|call|>",
            Family::Harmony => "<|end|>",
            _ => "<|im_end|>\n",
        }
    }

    /// The answers, as the family's template writes tool results.
    fn results(&self, results: &[ToolResult]) -> String {
        let rendered = self.format.render_results(results);
        match self.format.family {
            // The tags format names no chat template: its answers go in a
            // ChatML user turn.
            Family::Tags => format!("<|im_start|>user\n{rendered}<|im_end|>\n"),
            _ => rendered,
        }
    }

    /// The header that asks the model for its next turn (after the user's
    /// turn or after tool results).
    fn next_turn(&self) -> &'static str {
        match self.format.family {
            Family::Glm45 => "<|assistant|>",
            Family::Llama3Json => "<|start_header_id|>assistant<|end_header_id|>\n\n",
            Family::Pythonic => "<|header_start|>assistant<|header_end|>\n\n",
            // The model goes on right after `[/TOOL_RESULTS]` and after
            // DeepSeek's tool outputs.
            Family::Mistral | Family::MistralV11 | Family::DeepSeekV3 | Family::DeepSeekV31 => "",
            Family::KimiK2 => "<|im_assistant|>assistant<|im_middle|>",
            Family::Harmony => "<|start|>assistant",
            _ => "<|im_start|>assistant\n",
        }
    }
}
