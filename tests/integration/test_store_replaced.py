"""Another Redis on the configured port (restarted on another data folder): the first call
says so in words and writes nothing, what was missing is recreated, reads work; writes are
refused (in every process) until an operator confirms the new server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from benchmarks.common import free_port
from memory.cli import main
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import StoreReplacedError, StoreUnavailableError
from memory.runtime.server import EmbeddedRedis
from tests.in_process import run_main
from tests.integration.conftest import cli_env

U, S = "swap-user", "s1"


class Swapped:
    def __init__(self, coord: MemoryCoordinator, new: redis.Redis, url: str, cwd: Path) -> None:
        self.coord = coord
        self.new = new  # a client of the server that now answers on the port
        self._env, self._cwd = cli_env(url, coord.keys.ns), cwd

    def confirm(self) -> bool:
        """`python -m memory redis confirm`, the operator's word: writes resume."""
        proc = run_main(
            main, ["redis", "confirm", "--json"], env=self._env, cwd=self._cwd, prog="memory"
        )
        assert proc.returncode == 0, proc.stderr
        return bool(json.loads(proc.stdout)["confirmed"])

    def user_keys(self) -> list[bytes]:
        """Keys on the new server that hold something of the user (not indexes' meta,
        the marker, the knowledge facts, caches or metrics)."""
        ns = self.coord.keys.ns
        parts = (":session:", ":episodic:", ":procedure:", ":user_sessions:", ":user_queries:")
        return [
            k
            for k in self.new.scan_iter(match=f"{ns}:*")
            if any(p.encode() in k for p in parts) or k == f"{ns}:users".encode()
        ]

    def indexes(self) -> set[str]:
        return {n.decode() for n in self.new.execute_command("FT._LIST")}


@pytest.fixture
def swapped(tmp_path: Path, embedder: Any, settings: Settings) -> Iterator[Swapped]:
    """A coordinator with memories on one Redis, which is then stopped; another Redis, with an
    empty data folder of its own, is started on the same port."""
    port = free_port()
    first = EmbeddedRedis(tmp_path / "first", port, PROJECT_ROOT)
    first.start()
    try:
        own = settings.model_copy(update={"redis_url": first.url})
        coord = MemoryCoordinator(redis.Redis.from_url(first.url), embedder, own)
        coord.store_interaction(U, S, "I run every morning", "Noted!")
        coord.add_episodic(U, "My weight goal is 70 kg", event_type="goal")
    finally:
        first.stop()
    second = EmbeddedRedis(tmp_path / "second", port, PROJECT_ROOT)
    second.start()
    new = redis.Redis.from_url(second.url)
    try:
        swap = Swapped(coord, new, second.url, tmp_path)
        # really another server (only buffered metrics of the first may have flushed to it)
        assert swap.user_keys() == [] and swap.indexes() == set()
        yield swap
    finally:
        coord.close()
        new.close()
        second.stop()


def _says_what_happened(err: StoreReplacedError, coord: MemoryCoordinator) -> None:
    text = str(err)
    assert "is not the one your memories were on" in text
    assert "another data folder" in text and "REDIS_URL" in text
    assert coord.keys.episodic_index in text  # what was recreated
    assert "facts of the knowledge file" in text
    assert "Nothing of this action was saved" in text


def test_the_first_recall_says_so_then_recall_and_store_work(swapped: Swapped) -> None:
    coord = swapped.coord
    with pytest.raises(StoreReplacedError) as err:
        coord.retrieve_all_context(U, S, "when do I run?")
    assert isinstance(err.value, StoreUnavailableError)  # callers that catch it still do
    _says_what_happened(err.value, coord)
    assert swapped.user_keys() == [], "something was written before the user was told"
    keys = coord.keys
    assert {keys.episodic_index, keys.semantic_index, keys.procedural_index} <= swapped.indexes()
    _, facts = coord.list_memories(U, "semantic")
    assert facts > 0, "the knowledge file was not loaded again"

    ctx = coord.retrieve_all_context(U, S, "when do I run?")
    assert ctx.short_term == [] and ctx.episodic == []  # the earlier memories are elsewhere
    assert ctx.semantic, "the recreated knowledge is recalled"
    # Writes wait for the operator: before, they went to the replacement and said "stored".
    coord.bookkeeping.drain()  # recall's own notes (the user's queries) land first
    before = swapped.user_keys()
    with pytest.raises(StoreReplacedError, match="python -m memory redis confirm"):
        coord.store_interaction(U, S, "I swim on Sundays", "Noted!")
    coord.bookkeeping.drain()
    assert swapped.user_keys() == before and not any(b":session:" in k for k in before)
    assert swapped.confirm() is True
    coord.store_interaction(U, S, "I swim on Sundays", "Noted!")
    assert [m.content for m in coord.recent_messages(U, S)] == ["I swim on Sundays", "Noted!"]
    hits = coord.search(U, "swimming on Sunday")
    assert hits and "I swim on Sundays" in hits[0].text


def test_a_write_first_is_refused_before_anything_lands(swapped: Swapped) -> None:
    coord = swapped.coord
    with pytest.raises(StoreReplacedError) as err:
        coord.store_interaction(U, S, "I swim on Sundays", "Noted!")
    _says_what_happened(err.value, coord)
    assert swapped.user_keys() == []
    with pytest.raises(StoreReplacedError):  # every kind of write waits for the confirmation
        coord.add_message(U, S, "user", "hi")
    assert swapped.user_keys() == []
    swapped.confirm()
    swapped.new.delete(coord.keys.store_id)  # replaced again (as an emptied store would be)
    with pytest.raises(StoreReplacedError):
        coord.add_message(U, S, "user", "hi")
    assert swapped.user_keys() == []

    swapped.confirm()
    coord.store_interaction(U, S, "I swim on Sundays", "Noted!")
    assert len(coord.recent_messages(U, S)) == 2


def test_a_failing_read_no_such_index_recovers(swapped: Swapped) -> None:
    coord = swapped.coord
    with pytest.raises(StoreReplacedError):
        coord.list_memories(U, "episodic")  # FT.SEARCH: "no such index" on the new server
    assert coord.list_memories(U, "episodic") == ([], 0)
    assert coord.get_memory_stats(U)  # and the rest works


def test_the_same_server_keeps_working_without_a_word(
    coordinator: MemoryCoordinator, embedder: Any
) -> None:
    """The marker is claimed once and shared: a second coordinator (another process) on the
    same Redis sees the same store, and errors that are not a swap stay what they were."""
    again = MemoryCoordinator(coordinator.redis, embedder, coordinator.settings)
    try:
        assert again.identity.token == coordinator.identity.token
        coordinator.store_interaction(U, S, "hello", "hi")
        assert len(again.recent_messages(U, S)) == 2
    finally:
        again.close()


def test_the_original_redis_coming_back_is_not_flagged(
    tmp_path: Path, embedder: Any, settings: Settings
) -> None:
    """A temporary Redis stood in, then the original one (the memories' store) came back on
    the same port: a long-lived process switches back without flagging it, writes go on there
    without `memory redis confirm`, and the memories stored before are found again."""
    port = free_port()
    first = EmbeddedRedis(tmp_path / "first", port, PROJECT_ROOT)
    first.start()
    own = settings.model_copy(update={"redis_url": first.url})
    coord = MemoryCoordinator(redis.Redis.from_url(first.url), embedder, own)
    try:
        coord.add_episodic(U, "My weight goal is 70 kg", event_type="goal")
        coord.bookkeeping.drain()
        first.stop()
        second = EmbeddedRedis(tmp_path / "second", port, PROJECT_ROOT)
        second.start()
        try:
            with pytest.raises(StoreReplacedError):
                coord.list_memories(U, "episodic")  # the stand-in is noticed and flagged
        finally:
            second.stop()
        first.start()  # the original, on its own data folder
        back = redis.Redis.from_url(first.url)
        try:
            rows, total = coord.list_memories(U, "episodic")
            assert total == 1 and rows[0]["text"] == "My weight goal is 70 kg"
            coord.add_episodic(U, "I swim on Sundays")  # no confirmation needed
            assert back.get(coord.keys.store_unconfirmed) is None
            assert coord.list_memories(U, "episodic")[1] == 2
        finally:
            back.close()
    finally:
        coord.close()
        first.stop()
