"""Renders the assistant calls of `text_render.rs`'s `*_calls_*` tests with
the families' own chat templates, to compare with the strings the tests
hold. CI runs none of this; the tests keep the output.

The templates are not in this repository. Save them into one directory,
under these names, from these sources (the commits the tests name):

  qwen3.jinja        Qwen/Qwen3-14B on Hugging Face, `chat_template`
  qwen3coder.jinja   vllm-project/vllm examples/tool_chat_template_qwen3coder.jinja @ 7a3bde4c
  glm46.jinja        ggml-org/llama.cpp models/templates/GLM-4.6.jinja @ afefa651
  glm45.jinja        ggml-org/llama.cpp models/templates/glm_4_5.jinja @ 623f3dd0
  llama31.jinja      vllm-project/vllm examples/tool_chat_template_llama3.1_json.jinja @ 54522760
  llama4.jinja       vllm-project/vllm examples/tool_chat_template_llama4_pythonic.jinja @ 0471aed1
  dsv3.jinja         vllm-project/vllm examples/tool_chat_template_deepseekv3.jinja @ 7531ada7
  dsv31.jinja        ggml-org/llama.cpp models/templates/deepseek-ai-DeepSeek-V3.1.jinja @ 0374c5b6
  kimi.jinja         ggml-org/llama.cpp models/templates/moonshotai-Kimi-K2-Thinking.jinja @ 0c3c896e

Then, in a venv with `pip install jinja2==3.1.6`:

  python tests/stream/render_calls_templates.py DIR

It prints each template's whole rendering of a system message, a user
message and the assistant message with the two calls; the tests hold the
part after the assistant header, up to the end of the turn. Llama 3.1's
template takes one call a turn, so it gets the first only; Llama 4's is
also given plain string arguments, as its test. mistral-common
(`encode_chat_completion`) and openai-harmony (`render_conversation`) are
run the same way by hand, with the arguments as the JSON text below.
"""

import json
import sys
from pathlib import Path

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # As transformers' apply_chat_template defines it.
    return json.dumps(
        x,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        sort_keys=sort_keys,
    )


EDIT = {
    "path": 'docs/naïve "q".md',
    "content": 'line 1\n  "two" — ü\n',
    "append": True,
    "count": 3,
    "ratio": -0.5,
    "limit": None,
    "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": False}},
}
WEATHER = {"city": "Paris", "unit": "celsius"}
# Templates that concatenate the arguments as text get json.dumps' text.
AS_TEXT = {"dsv31", "kimi"}


def messages(calls, as_text):
    tool_calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {
                "name": name,
                "arguments": json.dumps(args, ensure_ascii=False) if as_text else args,
            },
        }
        for name, args, call_id in calls
    ]
    return [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "", "tool_calls": tool_calls},
    ]


def main(directory):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.filters["tojson"] = tojson
    location = ("get_location", {}, "functions.get_location:1")
    edit = [("edit", EDIT, "functions.edit:0"), location]
    weather = [("get_weather", WEATHER, "functions.get_weather:0"), location]
    runs = {
        "llama31": [edit[:1]],
        "llama4": [edit, weather],
    }
    for path in sorted(Path(directory).glob("*.jinja")):
        template = env.from_string(path.read_text())
        for calls in runs.get(path.stem, [edit]):
            text = template.render(
                messages=messages(calls, path.stem in AS_TEXT),
                tools=[],
                bos_token="<s>",
                add_generation_prompt=False,
            )
            print(f"==== {path.stem}\n{text!r}")


if __name__ == "__main__":
    main(sys.argv[1])
