"""Drives examples/mcp_server.rs with the official Python MCP SDK's client,
in its default mode, over stdio and over streamable HTTP.

Not run by CI (CI needs only the Rust toolchain); what it showed is kept as
raw-JSON Rust tests in tests/mcp_protocol.rs. Run it by hand:

    python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp
    cargo build --example mcp_server
    /tmp/mcpvenv/bin/python tests/python/drive_mcp_server.py target/debug/examples/mcp_server
"""

import asyncio
import socket
import subprocess
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters


async def exercise(client: Client, label: str) -> None:
    print(f"[{label}] protocol {client.protocol_version}")
    tools = await client.list_tools()
    names = [t.name for t in tools.tools]
    print(f"[{label}] tools: {names}")
    assert {"calculate", "read_file", "search_docs", "write_note"} <= set(names), names
    ok = await client.call_tool("calculate", {"a": 2, "op": "add", "b": 3})
    print(f"[{label}] ok call: isError={ok.is_error} content={ok.content[0].text!r}")
    assert not ok.is_error
    bad = await client.call_tool("calculate", {"a": 1, "op": "modulo", "b": 2})
    print(f"[{label}] bad call: isError={bad.is_error} content={bad.content[0].text[:80]!r}")
    assert bad.is_error
    missing = await client.call_tool("read_file", {"path": "no-such-file.txt"})
    print(f"[{label}] failing tool: isError={missing.is_error}")
    assert missing.is_error


async def main(binary: str) -> None:
    workspace = tempfile.mkdtemp()
    params = StdioServerParameters(command=binary, args=[workspace])
    async with Client(params) as client:
        await exercise(client, "stdio")
    print("[stdio] closed cleanly")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([binary, "--http", f"127.0.0.1:{port}", workspace])
    try:
        time.sleep(1.0)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await exercise(client, "http")
        print("[http] closed cleanly")
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
            await exercise(client, "http legacy")
        print("[http legacy] closed cleanly")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
