"""Drives examples/mcp_server.rs `--journal URL` with the official Python
MCP SDK's client (mcp 2.3, default mode, stdio): `write_note` waits for a
person's approval in the journal, and the person decides it from another
process with the durable_approval example.

Run by tests/mcp/python_sdk.rs (which makes the venv and counts, in the
journal, how many times the note was written). By hand:

    python3 -m venv /tmp/mcpvenv && /tmp/mcpvenv/bin/pip install mcp==2.3.0
    /tmp/mcpvenv/bin/python tests/python/drive_durable_approvals.py \\
        SCENARIO SERVER_BIN APPROVAL_BIN JOURNAL_URL WORKSPACE

SCENARIO is `session` (the same call in one session, then across a
restart with an idempotency key) or `instances` (two servers on one
journal: approved, the other instance runs it). Exits 0 when every check
held; prints one line per step.
"""

import asyncio
import re
import subprocess
import sys

from mcp import Client, StdioServerParameters

PENDING = "dev.tinyagents/pending-approval"
KEY = "dev.tinyagents/idempotency-key"


def waiting_on(result) -> str:
    """The approval a waiting result names; fails unless it is one."""
    assert result.is_error, f"a waiting call is an error result: {result}"
    text = result.content[0].text
    assert "the call has not run" in text, text
    meta = (result.meta or {}).get(PENDING)
    assert meta and meta["status"] == "pending", result
    approval = meta["approvalId"]
    assert re.fullmatch(r"apr_[0-9A-Za-z_]+", approval), approval
    assert approval in text, text
    return approval


def decide(approval_bin: str, journal: str, *words: str) -> None:
    """A person deciding, in another process."""
    done = subprocess.run(
        [approval_bin, "--journal", journal, *words],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    print(f"durable_approval {' '.join(words)}: {done.stdout.strip()}")


def server(binary: str, journal: str, workspace: str) -> StdioServerParameters:
    return StdioServerParameters(command=binary, args=["--journal", journal, workspace])


NOTE = {"title": "groceries", "body": "milk"}


async def session(binary: str, approval_bin: str, journal: str, workspace: str) -> None:
    async with Client(server(binary, journal, workspace)) as client:
        print(f"protocol {client.protocol_version}")
        first = waiting_on(await client.call_tool("write_note", NOTE))
        again = waiting_on(await client.call_tool("write_note", NOTE))
        assert again == first, (first, again)
        print(f"waiting on {first}, found again by the same call")
        decide(approval_bin, journal, "approve", first)
        done = await client.call_tool("write_note", NOTE)
        assert not done.is_error, done
        assert done.structured_content["title"] == "groceries", done
        print(f"approved: written, {done.content[0].text}")
        fresh = waiting_on(await client.call_tool("write_note", NOTE))
        assert fresh != first, fresh
        print(f"answered: the same call again waits on a new approval, {fresh}")
        keyed = waiting_on(await client.call_tool("write_note", NOTE, meta={KEY: "order-1"}))
        denied = waiting_on(await client.call_tool("write_note", NOTE, meta={KEY: "order-2"}))
    # The server process ended with the client; a new one opens the journal.
    async with Client(server(binary, journal, workspace)) as client:
        found = waiting_on(await client.call_tool("write_note", NOTE, meta={KEY: "order-1"}))
        assert found == keyed, (found, keyed)
        print(f"after a restart the key finds {found}")
        decide(approval_bin, journal, "approve", keyed)
        decide(approval_bin, journal, "deny", denied, "not", "today")
        done = await client.call_tool("write_note", NOTE, meta={KEY: "order-1"})
        assert not done.is_error, done
        refused = await client.call_tool("write_note", NOTE, meta={KEY: "order-2"})
        assert refused.is_error, refused
        assert "not today" in refused.content[0].text, refused
        assert PENDING not in (refused.meta or {}), refused
        print(f"denied: {refused.content[0].text}")


async def instances(binary: str, approval_bin: str, journal: str, workspace: str) -> None:
    async with Client(server(binary, journal, workspace)) as a, Client(
        server(binary, journal, workspace)
    ) as b:
        approval = waiting_on(await a.call_tool("write_note", NOTE, meta={KEY: "shared-1"}))
        seen = waiting_on(await b.call_tool("write_note", NOTE, meta={KEY: "shared-1"}))
        assert seen == approval, (seen, approval)
        print(f"both instances wait on {approval}")
        decide(approval_bin, journal, "approve", approval)
        done = await b.call_tool("write_note", NOTE, meta={KEY: "shared-1"})
        assert not done.is_error, done
        print(f"the other instance ran it: {done.content[0].text}")


SCENARIOS = {"session": session, "instances": instances}

if __name__ == "__main__":
    scenario, *args = sys.argv[1:]
    asyncio.run(SCENARIOS[scenario](*args))
    print("ok")
