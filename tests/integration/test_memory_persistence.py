"""Memories survive a restart of the embedded Redis; while it is down, calls fail clearly.

Each test runs its own EmbeddedRedis (free port, temporary data dir), not the session server.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import StoreUnavailableError
from memory.runtime.server import EmbeddedRedis, pid_alive

U = "user-1"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    srv = EmbeddedRedis(tmp_path / "data", free_port(), PROJECT_ROOT)
    srv.start()
    yield srv
    pid = srv.status()["pid"]
    srv.stop()
    if pid is not None and pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


def open_coordinator(
    server: EmbeddedRedis, embedder: object, settings: Settings
) -> MemoryCoordinator:
    client = redis.Redis.from_url(server.url, decode_responses=False)
    return MemoryCoordinator(
        client, embedder, settings.model_copy(update={"redis_url": server.url})
    )


def test_memories_survive_a_server_restart(
    server: EmbeddedRedis, embedder: object, settings: Settings
) -> None:
    coord = open_coordinator(server, embedder, settings)
    mem = coord.add_episodic(
        U, "I am allergic to penicillin", event_type="health_event", tags=["allergy"]
    )
    fact = coord.add_semantic("Ginger may ease nausea.", added_by=U)
    coord.store_interaction(
        U, "s1", "How many steps today?", "About 6,000.", tools_used=["get_activity"]
    )
    coord.store_interaction(
        U, "s1", "How many steps today?", "About 6,500.", tools_used=["get_activity"]
    )
    facts = coord.semantic.count()
    coord.close()
    coord.redis.close()
    assert server.stop() is True

    server.start()
    again = open_coordinator(server, embedder, settings)
    try:
        assert again.get_memory(U, "episodic", mem.id)["tags"] == ["allergy"]
        assert again.get_memory(U, "semantic", fact.id)["text"] == "Ginger may ease nausea."
        assert again.semantic.count() == facts  # the knowledge file is not loaded twice
        assert [m.content for m in again.recent_messages(U, "s1")] == [
            "How many steps today?",
            "About 6,000.",
            "How many steps today?",
            "About 6,500.",
        ]
        hits = again.search(U, "Which medicines must I avoid?")
        assert hits[0].id == mem.id  # the vector index is back
        ctx = again.retrieve_all_context(U, "s1", "How many steps today?")
        assert ctx.procedural is not None
        assert ctx.procedural.executions == 2 and ctx.procedural.recommended is True
    finally:
        again.close()


def test_calls_fail_clearly_while_redis_is_down(
    server: EmbeddedRedis, embedder: object, settings: Settings
) -> None:
    coord = open_coordinator(server, embedder, settings)
    mem = coord.add_episodic(U, "I like rowing")
    server.stop()
    calls = {
        "add_episodic": lambda: coord.add_episodic(U, "I like kayaking"),
        "get_memory": lambda: coord.get_memory(U, "episodic", mem.id),
        "add_message": lambda: coord.add_message(U, "s1", "user", "hello"),
        "list_memories": lambda: coord.list_memories(U, "episodic"),
        "search": lambda: coord.search(U, "rowing"),
        "retrieve_all_context": lambda: coord.retrieve_all_context(U, "s1", "rowing"),
        "get_memory_stats": lambda: coord.get_memory_stats(U),
    }
    wrong = {}
    try:
        for name, call in calls.items():
            try:
                call()
                wrong[name] = "no error"
            except StoreUnavailableError as e:
                if "python -m memory redis start" not in str(e) and "REDIS_URL" not in str(e):
                    wrong[name] = f"unhelpful message: {e}"
            except Exception as e:  # noqa: BLE001 - anything else is the finding
                wrong[name] = f"{type(e).__module__}.{type(e).__name__}: {e}"
        health = coord.health()
        assert health["ok"] is False and health["checks"]["redis"]["ok"] is False
        assert "redis start" in health["checks"]["redis"]["error"]
    finally:
        coord.close()
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())
