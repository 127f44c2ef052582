"""One error boundary without gaps: with Redis gone, every public coordinator method raises
`StoreUnavailableError` (a message saying what to run), never a driver exception; the CLI prints
that message, not a traceback."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import StoreUnavailableError
from memory.runtime.server import EmbeddedRedis
from tests.in_process import run_main

U, S = "boundary-user", "s1"
MID = "01JCBOUNDARY00000000000000"
EXPORT = {"format": "coala-memory-export", "version": 1, "user_id": U, "exported_at": 0}

#: One call per public method, with valid arguments: only the missing server can fail them.
CALLS: dict[str, Callable[[MemoryCoordinator], Any]] = {
    "retrieve_all_context": lambda c: c.retrieve_all_context(U, S, "when do I run?"),
    "search": lambda c: c.search(U, "running"),
    "find_similar_episodic": lambda c: c.find_similar_episodic(U, "I like running"),
    "add_episodic": lambda c: c.add_episodic(U, "I like running"),
    "add_episodic_many": lambda c: c.add_episodic_many(U, [{"text": "I like running"}]),
    "add_semantic": lambda c: c.add_semantic("Zone 2 is easy running", added_by=U),
    "record_procedure": lambda c: c.record_procedure(
        U, "how far did I run?", ["search_workouts"], success_score=1.0, execution_time_ms=5
    ),
    "rescore_last_procedure": lambda c: c.rescore_last_procedure(
        U, "how far did I run?", ["search_workouts"], 0.5
    ),
    "store_interaction": lambda c: c.store_interaction(U, S, "hello", "hi"),
    "add_message": lambda c: c.add_message(U, S, "user", "hello"),
    "recent_messages": lambda c: c.recent_messages(U, S),
    "save_turn_details": lambda c: c.save_turn_details(U, S, "t1", {"reply": "hi"}),
    "turn_details": lambda c: c.turn_details(U, S),
    "list_memories": lambda c: c.list_memories(U, "episodic"),
    "get_memory": lambda c: c.get_memory(U, "episodic", MID),
    "update_memory": lambda c: c.update_memory(U, "episodic", MID, text="new text"),
    "delete_memory": lambda c: c.delete_memory(U, "episodic", MID),
    "user_profile": lambda c: c.user_profile(U),
    "gone_memories": lambda c: c.gone_memories(U, [MID]),
    "list_users": lambda c: c.list_users(),
    "set_session_title": lambda c: c.set_session_title(U, S, "Running plans"),
    "store_stopped_exchange": lambda c: c.store_stopped_exchange(U, S, "hello", "hi [stopped]"),
    "get_memory_stats": lambda c: c.get_memory_stats(U, S),
    "stats_version": lambda c: c.stats_version(U),
    "clear_session_memories": lambda c: c.clear_session_memories(U, S),
    "clear_user_memories": lambda c: c.clear_user_memories(U),
    "export_user": lambda c: c.export_user(U),
    "sweep_secrets": lambda c: c.sweep_secrets(U),
    "import_user": lambda c: c.import_user(json.dumps(EXPORT)),
    "load_knowledge": lambda c: c.load_knowledge(),
    "from_settings": lambda c: MemoryCoordinator.from_settings(c.settings),
}


def public_methods(obj: Any) -> list[str]:
    """Names of the public methods the boundary covers."""
    return [
        n
        for n, v in inspect.getmembers(type(obj))
        if not n.startswith("_") and (inspect.isfunction(v) or inspect.ismethod(v))
    ]


#: Methods that must work without Redis: closing never fails.
#: count_event: buffered, flushed later; text_similarity: the embedder alone (its Redis cache
#: is skipped when Redis is down).
WITHOUT_REDIS = {"close", "health", "count_event", "text_similarity"}


def test_text_similarity_needs_only_the_embedder(stopped: MemoryCoordinator) -> None:
    same = stopped.text_similarity("I like running", "I like running")
    other = stopped.text_similarity("I like running", "The invoice is overdue")
    assert same > 0.99 and other < same


@pytest.fixture
def stopped(tmp_path: Path, embedder: Any, settings: Settings) -> Iterator[MemoryCoordinator]:
    """A coordinator whose own Redis was stopped after it opened its indexes."""
    server = EmbeddedRedis(tmp_path / "redis", free_port(), PROJECT_ROOT)
    server.start()
    try:
        own = settings.model_copy(update={"redis_url": server.url})
        coord = MemoryCoordinator(redis.Redis.from_url(server.url), embedder, own)
    finally:
        server.stop()
    try:
        yield coord
    finally:
        coord.close()


def test_every_public_method_is_covered_by_this_test(stopped: MemoryCoordinator) -> None:
    assert set(public_methods(stopped)) == set(CALLS) | WITHOUT_REDIS


@pytest.mark.parametrize("method", sorted(CALLS))
def test_with_redis_down_every_method_raises_store_unavailable(
    stopped: MemoryCoordinator, method: str
) -> None:
    with pytest.raises(StoreUnavailableError) as err:
        CALLS[method](stopped)
    assert "python -m memory redis start" in str(err.value) or "REDIS_URL" in str(err.value)


#: The parts the UI reads without the coordinator passing the call on (`memory.service`).
PART_READS: dict[str, Callable[[MemoryCoordinator], Any]] = {
    "metrics.latency_samples": lambda c: c.metrics.latency_samples(),
    "metrics.counters": lambda c: c.metrics.counters(),
    "short_term.sessions": lambda c: c.short_term.sessions(U),
    "short_term.titles": lambda c: c.short_term.titles(U),
    "usage.of": lambda c: c.usage.of(U),
    "usage.answers": lambda c: c.usage.answers(U, MID),
}


@pytest.mark.parametrize("read", sorted(PART_READS))
def test_the_parts_the_ui_reads_raise_store_unavailable(
    stopped: MemoryCoordinator, read: str
) -> None:
    with pytest.raises(StoreUnavailableError, match="python -m memory redis start"):
        PART_READS[read](stopped)


def test_health_reports_redis_down_instead_of_raising(stopped: MemoryCoordinator) -> None:
    report = stopped.health()
    assert report["ok"] is False
    assert "python -m memory redis start" in report["checks"]["redis"]["error"]


def test_the_cli_says_what_to_run_instead_of_a_traceback(tmp_path: Path) -> None:
    from memory.cli import main

    env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{free_port()}"}
    for args in (["export", "--user", U, "-o", str(tmp_path / "x.json")], ["stats", "--json"]):
        # in this process, as a subprocess would see it (tests/in_process.py)
        proc = run_main(main, args, env=env, cwd=PROJECT_ROOT, prog="memory")
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "REDIS_URL" in proc.stderr
