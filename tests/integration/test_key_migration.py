"""A store written before the per-user hash tags (key layout 1) is renamed at open, concurrent-
safe, nothing lost, and every memory is found again.

The old store is made from a store of today's layout by renaming each key to the name the code
before the hash tags gave it (the f-strings of `memory/keys.py` of that version, written out
here, not taken from the migration), with the layout marker removed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import redis
from redis.client import Pipeline
from redis.crc import key_slot

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.keys import Keys, digest, owner_tag, user_tag
from memory.maintenance import Maintenance
from memory.models import MemoryType, now_ms
from memory.queries import ListQuery, SearchFilter
from memory.replies import as_str
from memory.stores.migrate import migrate_keys
from tests.integration.conftest import SessionEmbedder

USERS = {"ana": ["s1", "s2"], "Bob Smith": ["web"]}
TEXTS = {
    "ana": ["I prefer morning workouts", "My dog is called Rex", "My dog's name is Rex"],
    "Bob Smith": ["I am allergic to peanuts", "My sister lives in Oslo"],
}


def _fill(c: MemoryCoordinator) -> None:
    """Every kind of per-user key: memories (one superseded, one expiring), logged exchanges
    (timelines), procedures, sessions with turn details, a merge, decay state, reports."""
    for user, sessions in USERS.items():
        for text in TEXTS[user]:
            c.add_episodic(user, text)
        for s in sessions:
            c.store_interaction(user, s, f"What did I do in {s}?", "You ran.", tools_used=["runs"])
            c.save_turn_details(user, s, "t1", {"used": [s]})
        c.add_semantic(f"A fact {user} added", added_by=user)
        c.retrieve_all_context(user, sessions[0], "what do I prefer?")  # access counts, queries
    old = c.add_episodic("ana", "I live in Porto")
    c.add_episodic("ana", "I live in Braga", supersedes=old.id)
    c.add_episodic("ana", "Dentist on Friday", expires_at_ms=now_ms() + 3_600_000)
    c.bookkeeping.drain()
    Maintenance.of(c).run()  # merges Rex, keeps decay state, reports per user
    c.metrics_recorder.flush()


def _layout_1(keys: Keys, user: str, sessions: list[str]) -> dict[str, str]:
    """Today's name -> the name of layout 1, for one user's derived keys."""
    ns, d = keys.ns, digest(user)
    out = {
        keys.user_sessions(user): f"{ns}:user_sessions:{d}",
        keys.user_queries(user): f"{ns}:user_queries:{d}",
        keys.maintenance_last(user): f"{ns}:maintenance:last:{d}",
        keys.user_merges(user): f"{ns}:user_merges:{d}",
        keys.rejected_merges(user): f"{ns}:rejected_merges:{d}",
        keys.judged_apart(user): f"{ns}:judged_apart:{d}",
        keys.decay_state(user): f"{ns}:decay:{d}",
    }
    for s in sessions:
        ds, tag = digest(user, s), owner_tag(user, s)
        out[keys.session(user, s)] = f"{ns}:session:{ds}"
        out[keys.details(user, s)] = f"{ns}:turn_details:{ds}"
        out[keys.summary_state(user, s)] = f"{ns}:summary:{ds}"
        out[keys.timeline(user, tag)] = f"{ns}:timeline:{tag}"
    return out


def _downgrade(client: redis.Redis, keys: Keys) -> int:
    """Rename the store to layout 1; returns how many keys moved."""
    ns, moves = keys.ns, {}
    for user, sessions in USERS.items():
        moves.update(_layout_1(keys, user, sessions))
        tag = user_tag(user)
        for k in client.scan_iter(match=f"{ns}:episodic:{tag}:*"):
            moves[as_str(k)] = f"{ns}:episodic:{Keys.memory_id(k)}"
        for k in client.scan_iter(match=f"{ns}:procedure:{tag}:*"):
            moves[as_str(k)] = f"{ns}:procedure:{digest(user, length=16)}:{Keys.memory_id(k)}"
        for k in client.scan_iter(match=f"{ns}:merge:{tag}:*"):
            moves[as_str(k)] = f"{ns}:merge:{Keys.memory_id(k)}"
    moves[keys.metrics_latency] = f"{ns}:metrics:latency"
    moves[keys.metrics_counters] = f"{ns}:metrics:counters"
    moves[keys.metrics_counts_history] = f"{ns}:metrics:counts"
    n = sum(
        bool(client.exists(new)) and bool(client.rename(new, old)) for new, old in moves.items()
    )
    client.delete(keys.version)
    return n


def _contents(client: redis.Redis, ns: str) -> dict[str, tuple[bytes, bool]]:
    """Every key of the namespace (the query-embedding cache and the layout marker aside):
    its serialised value, and whether it expires."""
    out = {}
    for raw in client.scan_iter(match=f"{ns}:*", count=1000):
        key = as_str(raw)
        if key != f"{ns}:keys_version":
            out[key] = (client.dump(raw) or b"", client.pttl(raw) > 0)
    return out


def _found_by_recall(c: MemoryCoordinator) -> None:
    for user, texts in TEXTS.items():
        rows, total = c.list_memories(user, MemoryType.EPISODIC, ListQuery(page_size=100))
        for text in texts:
            assert text in {r["text"] for r in rows}
            assert text in [
                h.text
                for h in c.search(user, text, k=5, where=SearchFilter(include_superseded=True))
            ]
        for row in rows:  # every memory is read by its (user, id) again
            assert c.get_memory(user, "episodic", row["id"])["text"] == row["text"]
        ctx = c.retrieve_all_context(user, USERS[user][0], texts[0])
        assert texts[0] in [h.text for h in ctx.episodic]
        assert c.list_memories(user, MemoryType.PROCEDURAL)[1] == 1
        for s in USERS[user]:
            assert len(c.recent_messages(user, s)) == 2
            assert c.turn_details(user, s)["t1"][""] == {"used": [s]}
    assert Maintenance.of(c).merges("ana")  # the merge record, through the user's merge list


@pytest.fixture
def old_store(
    redis_client: redis.Redis, embedder: SessionEmbedder, settings: Settings
) -> tuple[dict[str, tuple[bytes, bool]], Callable[[], MemoryCoordinator]]:
    """(every key with its content in today's layout, a way to open the store again), the
    store left in layout 1."""
    c = MemoryCoordinator(redis_client, embedder, settings)
    _fill(c)
    c.close()
    before = _contents(redis_client, settings.memory_namespace)
    assert _downgrade(redis_client, c.keys) > 30
    left = [k for k in _contents(redis_client, settings.memory_namespace) if "{u" in k]
    assert left == []  # nothing of a user's is in today's layout any more
    return before, lambda: MemoryCoordinator(redis_client, embedder, settings)


def test_an_old_store_is_renamed_at_open_and_every_memory_is_found_again(
    old_store: tuple[dict[str, tuple[bytes, bool]], Callable[[], MemoryCoordinator]],
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    before, reopen = old_store
    c = reopen()
    try:
        assert _contents(redis_client, settings.memory_namespace) == before
        assert as_str(redis_client.get(c.keys.version) or b"") == str(Keys.VERSION)
        _found_by_recall(c)
        assert migrate_keys(redis_client, c.keys) is None  # done once
    finally:
        c.close()


def test_two_migrations_at_once_lose_nothing(
    old_store: tuple[dict[str, tuple[bytes, bool]], Callable[[], MemoryCoordinator]],
    redis_url: str,
    settings: Settings,
    redis_client: redis.Redis,
) -> None:
    before, reopen = old_store
    keys = Keys(settings.memory_namespace)
    start = threading.Barrier(2)
    results: list[Any] = []

    def migrate() -> None:
        client = redis.Redis.from_url(redis_url)
        start.wait()
        try:
            results.append(migrate_keys(client, keys))
        except Exception as e:  # noqa: BLE001 - the assertion below shows it
            results.append(e)
        finally:
            client.close()

    threads = [threading.Thread(target=migrate) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert not [r for r in results if isinstance(r, Exception)], results
    assert sum(r.renamed for r in results if r is not None) == len(
        [k for k in before if "{u" in k or ":metrics:" in k]
    )
    assert _contents(redis_client, settings.memory_namespace) == before
    c = reopen()
    try:
        _found_by_recall(c)
    finally:
        c.close()


class _ShardedPipeline(Pipeline):
    """What a sharded database answers a pipelined RENAMENX across slots: CROSSSLOT."""

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        stack = list(self.command_stack)
        refused = [
            str(args[0]).upper() == "RENAMENX" and key_slot(_b(args[1])) != key_slot(_b(args[2]))
            for args, _ in stack
        ]
        self.command_stack = [c for c, r in zip(stack, refused, strict=True) if not r]
        out = iter(super().execute(raise_on_error=False) if self.command_stack else [])
        return [redis.ResponseError("CROSSSLOT") if r else next(out) for r in refused]


class _ShardedRedis(redis.Redis):
    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        return _ShardedPipeline(self.connection_pool, self.response_callbacks, transaction, None)


def _b(key: Any) -> bytes:
    return key if isinstance(key, bytes) else str(key).encode()


def test_where_a_rename_across_slots_is_refused_keys_are_copied(
    old_store: tuple[dict[str, tuple[bytes, bool]], Callable[[], MemoryCoordinator]],
    redis_url: str,
    settings: Settings,
    redis_client: redis.Redis,
) -> None:
    before, _ = old_store
    client = _ShardedRedis.from_url(redis_url)
    try:
        done = migrate_keys(client, Keys(settings.memory_namespace))
    finally:
        client.close()
    assert done is not None and done.renamed > 30 and not done.conflicts
    assert _contents(redis_client, settings.memory_namespace) == before
