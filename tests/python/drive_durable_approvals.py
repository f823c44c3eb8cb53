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
restart with an idempotency key), `instances` (two servers on one
journal: approved, the other instance runs it), `tasks` (the tasks
extension on protocol 2026-07-28: the task waits, is approved, and a
restarted server completes it; another is denied and fails) or
`task_instances` (a task filed on one instance, approved, and asked
about on both at once). Exits 0 when every check held; prints one line
per step.

The SDK has no client for the tasks extension, but it lets a client
extension claim a `tools/call` result by its `resultType`
(`mcp.client.extension.ResultClaim`) and send requests it does not know
(`ClientSession.send_request` with models defined here): `Tasks` below
declares `io.modelcontextprotocol/tasks`, takes the `resultType: "task"`
answer, and follows it with `tasks/get`. The SDK does the transport, the
2026-07-28 `_meta` of every request, and the ids.
"""

import asyncio
import re
import subprocess
import sys
from typing import Any, Literal

from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result

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


class TaskHandle(Result):
    """What `tools/call` answers when it made a task (SEP-2663)."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class TaskState(Result):
    """`tasks/get`'s answer: the task, with its result or error once ended."""

    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


async def get_task(client: Client | ClientSession, task_id: str) -> TaskState:
    session = client.session if isinstance(client, Client) else client
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)


async def until_ended(client: Client | ClientSession, task_id: str) -> TaskState:
    for _ in range(600):
        state = await get_task(client, task_id)
        if state.status not in ("working", "input_required"):
            return state
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never ended")


async def resolve_task(handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
    """`Client.call_tool` on a task: follows it to its end."""
    state = await until_ended(ctx.session, handle.task_id)
    if state.status != "completed":
        raise RuntimeError(f"task {handle.task_id} {state.status}: {state.error}")
    return CallToolResult.model_validate(state.result)


class Tasks(ClientExtension):
    """The tasks extension, declared in every request's capabilities."""

    identifier = "io.modelcontextprotocol/tasks"

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=resolve_task)]


def task_client(binary: str, journal: str, workspace: str) -> Client:
    return Client(server(binary, journal, workspace), mode="2026-07-28", extensions=[Tasks()])


async def start_task(client: Client) -> TaskHandle:
    handle = await client.session.call_tool("write_note", NOTE, allow_claimed=True)
    assert isinstance(handle, TaskHandle), handle
    return handle


async def awaiting(client: Client, task_id: str) -> str:
    """Polls the task until its status names the approval it waits on."""
    for _ in range(600):
        state = await get_task(client, task_id)
        message = state.status_message or ""
        found = re.search(r"apr_[0-9A-Za-z_]+", message)
        if found:
            assert state.status == "working", state
            assert "the call has not run" in message, state
            return found.group(0)
        assert state.status == "working", state
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never named its approval")


async def tasks(binary: str, approval_bin: str, journal: str, workspace: str) -> None:
    async with task_client(binary, journal, workspace) as client:
        print(f"protocol {client.protocol_version}")
        kept = await start_task(client)
        approval = await awaiting(client, kept.task_id)
        print(f"task {kept.task_id} {kept.status}, waiting on {approval}")
        refused = await start_task(client)
        other = await awaiting(client, refused.task_id)
        assert other != approval, (other, approval)
        decide(approval_bin, journal, "approve", approval)
        decide(approval_bin, journal, "deny", other, "not", "today")
    # The server process ended with the client; a new one opens the journal.
    async with task_client(binary, journal, workspace) as client:
        done = await until_ended(client, kept.task_id)
        assert done.status == "completed", done
        result = CallToolResult.model_validate(done.result)
        assert not result.is_error, result
        assert result.structured_content["title"] == "groceries", result
        again = await until_ended(client, kept.task_id)
        assert again.result == done.result, (again, done)
        print(f"after a restart: completed, {result.content[0].text}")
        failed = await until_ended(client, refused.task_id)
        assert failed.status == "failed", failed
        assert "not today" in failed.error["message"], failed
        print(f"denied: failed, {failed.error['message']}")


async def task_instances(binary: str, approval_bin: str, journal: str, workspace: str) -> None:
    async with task_client(binary, journal, workspace) as a, task_client(binary, journal, workspace) as b:
        handle = await start_task(a)
        approval = await awaiting(a, handle.task_id)
        seen = await awaiting(b, handle.task_id)
        assert seen == approval, (seen, approval)
        print(f"task {handle.task_id} waits on {approval}, on both instances")
        decide(approval_bin, journal, "approve", approval)
        on_a, on_b = await asyncio.gather(until_ended(a, handle.task_id), until_ended(b, handle.task_id))
        assert on_a.status == on_b.status == "completed", (on_a, on_b)
        assert on_a.result == on_b.result, (on_a, on_b)
        print(f"asked at once, both completed: {on_a.result['content'][0]['text']}")


SCENARIOS = {"session": session, "instances": instances, "tasks": tasks, "task_instances": task_instances}

if __name__ == "__main__":
    scenario, *args = sys.argv[1:]
    asyncio.run(SCENARIOS[scenario](*args))
    print("ok")
