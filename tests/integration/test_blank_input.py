"""Blank input (spaces, line breaks, zero-width characters) at the entry points below the app:
the memory core, the CLI and the MCP tools refuse it with a sentence, and nothing is stored.
(The app's entry points: tests/app/test_blank_input.py.)"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from typing import Any

import pytest
from mcp import Client

from agent.mcp_server import build_server
from agent.tools.memory_tools import MemoryToolkit
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError
from memory.models import is_blank
from memory.writing import WritePolicy, candidate_for
from tests.integration.conftest import Run
from tests.integration.test_cli import assert_clean_failure

BLANKS = ("   ", "\n\n\t", "\u200b", "\u200b \u200d\ufeff\n", "\u2060\u200e")


def test_blank_means_nothing_visible() -> None:
    for text in BLANKS:
        assert is_blank(text), repr(text)
    for text in ("a", " x ", "\u200bhi", "🙂", "日本"):
        assert not is_blank(text), repr(text)


@pytest.mark.parametrize("text", BLANKS)
def test_the_write_policy_refuses_blank_text_and_stores_nothing(
    text: str, coordinator: MemoryCoordinator, settings: Settings
) -> None:
    policy = WritePolicy(coordinator, dedup_threshold=settings.dedup_threshold)
    with pytest.raises(InvalidInputError, match="empty"):
        policy.write("bea", "s1", candidate_for(text, "preference", [], how="user"))
    with pytest.raises(InvalidInputError, match="empty"):
        coordinator.add_episodic("bea", text)
    assert coordinator.list_memories("bea", "episodic")[1] == 0


def test_mcp_tools_refuse_blank_content_and_queries_with_a_sentence(
    coordinator: MemoryCoordinator, settings: Settings
) -> None:
    policy = WritePolicy(coordinator, dedup_threshold=settings.dedup_threshold)
    server = build_server(MemoryToolkit(coordinator, policy), lambda: "bea")
    errors: list[str] = []

    async def calls() -> None:
        async with Client(server) as client:
            for text in BLANKS:
                got: Any = await client.call_tool("remember_information", {"content": text})
                assert got.is_error, got.content
                errors.append(got.content[0].text)
                got = await client.call_tool("recall_information", {"query": text})
                assert got.is_error, got.content
                errors.append(got.content[0].text)
            stats = await client.call_tool("get_memory_stats", {})
            assert not stats.is_error
            assert json.loads(stats.content[0].text)["episodic"]["memory_count"] == 0

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright may own this loop
        pool.submit(asyncio.run, calls()).result()
    for msg in errors:  # ours, or the schema's for a text shorter than a word
        assert "empty" in msg or "at least 3 characters" in msg, msg
        assert "Traceback" not in msg


def test_cli_add_refuses_blank_text_with_a_sentence(
    cli: Run,  # noqa: F811 - the fixture
    coordinator: MemoryCoordinator,
) -> None:
    proc = cli("add", "--user", "bea", "--type", "episodic", "--text", "\u200b \n\u200d", ok=False)
    assert proc.returncode == 2
    assert_clean_failure(proc, "empty")
    proc = cli("add", "--type", "semantic", "--text", "  \n ", ok=False)
    assert_clean_failure(proc, "empty")
    assert coordinator.list_memories("bea", "episodic")[1] == 0
