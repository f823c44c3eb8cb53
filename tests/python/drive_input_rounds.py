"""Drives examples/mcp_conformance_server.rs's input-round tools with the
official Python MCP SDK's client (2.3), whose callbacks answer the
server's elicitation, sampling and roots questions: on 2026-07-28 through
`input_required` rounds (the client resends with the answers and the
sealed `requestState`), in legacy mode as requests during the call.

Not run by CI (CI needs only the Rust toolchain); the same exchanges are
raw-JSON Rust tests in tests/mcp/peer.rs and tests/mcp/scale_out.rs. Run
it by hand:

    python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp
    cargo build -p tinyagents-tools-examples --example mcp_conformance_server
    /tmp/mcpvenv/bin/python tests/python/drive_input_rounds.py target/debug/examples/mcp_conformance_server
"""

import asyncio
import socket
import subprocess
import sys
import time

from mcp import Client, types


async def elicit(context, params):
    props = params.requested_schema.get("properties", {})
    content = {}
    for name, field in props.items():
        content[name] = True if field.get("type") == "boolean" else "Ada"
    return types.ElicitResult(action="accept", content=content)


async def sample(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris"),
        model="python-sdk",
        stopReason="endTurn",
    )


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


async def exercise(url: str, mode: str) -> None:
    async with Client(
        url,
        mode=mode,
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=roots,
    ) as client:
        print(f"[{mode}] protocol {client.protocol_version}")
        for tool in [
            "test_input_required_result_elicitation",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_multi_round",
        ]:
            result = await client.call_tool(tool, {})
            text = result.content[0].text
            print(f"[{mode}] {tool}: isError={result.is_error} {text!r}")
            assert not result.is_error, text


async def main(binary: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([binary, "--http", f"127.0.0.1:{port}"])
    try:
        time.sleep(1.0)
        await exercise(f"http://127.0.0.1:{port}/mcp", "auto")
        await exercise(f"http://127.0.0.1:{port}/mcp", "legacy")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
