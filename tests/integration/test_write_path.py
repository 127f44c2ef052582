"""Every writer goes through the one write policy (memory.writing): the same sentence added
twice through an entry point is one memory, and a changed goal replaces the old one, which is
kept as history. Real Redis and embedder; the chat and its tool through the fake Ollama, the
CLI's `main` as a subprocess would see it (tests/in_process.py), MCP through its service (the
protocol is tested in test_mcp.py). The sidebar and the Memories page:
tests/app/test_write_path.py."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.config import AgentSettings
from agent.loop import ChatAgent
from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolContext
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.models import MemoryType
from memory.queries import ListQuery
from memory.writing import WritePolicy
from tests.fakes.fake_ollama import FakeOllama
from tests.in_process import run_main

GOAL = "My goal is to run 5k in 25 minutes"
NEW_GOAL = "My goal is to run 5k in 23 minutes"


def goals(coord: MemoryCoordinator, user: str) -> tuple[list[str], list[str]]:
    """(active goal texts, replaced goal texts) of a user."""
    rows, _ = coord.list_memories(
        user, MemoryType.EPISODIC, ListQuery(event_types=["goal"], include_superseded=True)
    )
    active = [r["text"] for r in rows if not r.get("superseded_by")]
    replaced = [r["text"] for r in rows if r.get("superseded_by")]
    return active, replaced


def assert_one_goal_then_replaced(
    write: Callable[[str], object], coord: MemoryCoordinator, user: str
) -> None:
    write(GOAL)
    write(GOAL)
    assert goals(coord, user) == ([GOAL], [])
    write(NEW_GOAL)
    assert goals(coord, user) == ([NEW_GOAL], [GOAL])


@pytest.fixture
def agent(coordinator: MemoryCoordinator, settings: Settings, fake_ollama: FakeOllama):  # type: ignore[no-untyped-def]
    a = ChatAgent(
        settings.model_copy(update={"ollama_host": fake_ollama.url}),
        coordinator,
        toolkits=[],
        agent_settings=AgentSettings(_env_file=None, llm_extraction="off"),  # type: ignore[call-arg]
    )
    yield a
    a.close()


def test_chat_trigger_phrases(agent: ChatAgent, coordinator: MemoryCoordinator) -> None:
    assert_one_goal_then_replaced(
        lambda text: agent.chat("chat-user", "s1", f"Remember: {text}"), coordinator, "chat-user"
    )


def test_the_models_remember_tool(
    agent: ChatAgent, coordinator: MemoryCoordinator, fake_ollama: FakeOllama
) -> None:
    def write(text: str) -> None:
        fake_ollama.queue_tool_calls([("remember_information", {"content": text})])
        fake_ollama.queue_reply("Noted.")
        agent.chat("tool-user", "s1", f"Please keep this in mind: {text.lower()}")

    assert_one_goal_then_replaced(write, coordinator, "tool-user")


def test_mcp(coordinator: MemoryCoordinator, settings: Settings) -> None:
    mcp = MemoryToolkit(
        coordinator, WritePolicy(coordinator, dedup_threshold=settings.dedup_threshold)
    )
    assert_one_goal_then_replaced(
        lambda t: mcp.remember_information(ToolContext("mcp-user", "mcp"), t),
        coordinator,
        "mcp-user",
    )


def test_the_cli(
    coordinator: MemoryCoordinator, redis_url: str, namespace: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REDIS_"))}
    env.update(REDIS_URL=redis_url, MEMORY_NAMESPACE=namespace, PYTHONPATH=str(PROJECT_ROOT))
    outputs: list[dict] = []
    from memory.cli import main

    def write(text: str) -> None:
        args = ["add", "--user", "cli-user", "--text", text, "--json"]
        proc = run_main(main, args, env=env, cwd=tmp_path, prog="memory")
        assert proc.returncode == 0, proc.stderr
        outputs.append(json.loads(proc.stdout))

    assert_one_goal_then_replaced(write, coordinator, "cli-user")
    first, again, changed = outputs
    assert first["kind"] == "goal" and again["duplicate_of"] == first["id"]
    assert changed["replaced"] == first["id"]


def test_a_stated_fact_is_not_a_duplicate_of_its_own_logged_exchange(
    agent: ChatAgent, coordinator: MemoryCoordinator
) -> None:
    """The exchange is logged as an `interaction`; the fact stated in it is still stored."""
    coordinator.store_interaction("ana", "s1", "I sprained my left ankle on a trail run", "Ouch.")
    policy = WritePolicy(coordinator)
    from memory.writing import candidate_for

    res = policy.write(
        "ana", "s1", candidate_for("I sprained my left ankle on a trail run", how="llm")
    )
    assert res.stored is not None and res.stored.event_type == "health_event"


def test_chat_and_mcp_offer_the_same_tools_and_return_the_same_results(
    coordinator: MemoryCoordinator, settings: Settings
) -> None:
    """One definition per memory tool: the same arguments, descriptions and results, over MCP's
    protocol as in the chat."""
    import asyncio
    import concurrent.futures

    from agent.mcp_server import build_server
    from agent.tools.registry import ToolRegistry

    writer = WritePolicy(coordinator, dedup_threshold=settings.dedup_threshold)
    chat = ToolRegistry([MemoryToolkit(coordinator, writer)])
    server = build_server(MemoryToolkit(coordinator, writer), lambda: "both")

    def over_mcp(name: str, arguments: dict) -> dict:
        # In a thread of its own: the browser tests leave a running event loop in this one.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            got = pool.submit(asyncio.run, server.call_tool(name, arguments)).result()
        return json.loads(got.content[0].text)  # type: ignore[union-attr]

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        tools = pool.submit(asyncio.run, server.list_tools()).result()
    listed = {t.name: t for t in tools}
    assert set(listed) == set(chat.names())
    for name in chat.names():
        params = chat.get(name).schema["function"]["parameters"]  # type: ignore[union-attr]
        schema = listed[name].input_schema
        assert set(params["properties"]) == set(schema.get("properties", {})), name
        assert set(params["required"]) == set(schema.get("required", [])), name
        assert chat.get(name).description == listed[name].description  # type: ignore[union-attr]

    ctx = ToolContext(user_id="both", session_id="s1")
    chat_stored = chat.execute("remember_information", {"content": "I swim on Fridays"}, ctx)
    mcp_again = over_mcp("remember_information", {"content": "I swim on Fridays"})
    assert chat_stored.result["stored"] is True
    assert mcp_again["already_remembered_as"] == chat_stored.result["id"]
    via_chat = chat.execute("recall_information", {"query": "swimming"}, ctx).result
    via_mcp = over_mcp("recall_information", {"query": "swimming"})
    assert via_chat == via_mcp and via_chat["memories"][0]["band"] in {"high", "moderate", "low"}
