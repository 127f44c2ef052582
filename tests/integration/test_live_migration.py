"""Memories written before recall's one filter tag (`live`) get it at open: recall finds the
same memories in the same order, a superseded one stays out, a pass cut short is done again,
a second open does nothing (the tag replaced owner AND status in the KNN).

The old store is written by today's code, then made as the old code left it: no `live` field
in any hash, an index without the field, no marker."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis
from redisvl.index import SearchIndex
from redisvl.schema import IndexSchema

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.keys import Keys, owner_tag
from memory.models import MemoryType
from memory.queries import ListQuery
from memory.replies import as_str
from memory.stores import schema
from memory.stores.migrate_live import _SET_LIVE, migrate_live
from tests.integration.conftest import SessionEmbedder

TEXTS = {
    "ana": [
        "I prefer morning workouts before work",
        "My dog is called Rex and he loves the beach",
        "I am allergic to peanuts",
        "My sister lives in Oslo",
        "My knee hurts after long runs",
    ],
    "bob": ["I play the cello in a quartet", "I drive an old blue Volvo"],
}
QUERIES = {
    "ana": [
        "what exercise do I like?",
        "tell me about my pet",
        "food allergies",
        "where is my dog",
    ],
    "bob": ["which instrument do I play?", "my car"],
}
OLD_DOG = "My dog is called Max"  # superseded by the Rex memory: history, never recalled

Answers = dict[str, list[str]]


def _answers(c: MemoryCoordinator) -> Answers:
    out: Answers = {}
    for user, queries in QUERIES.items():
        for q in queries:
            out[f"{user}/{q}"] = [h.id for h in c.search(user, q, k=4)]
            out[f"{user}/{q}/similar"] = [h.id for h in c.find_similar_episodic(user, q, k=3)]
        out[f"{user}/listed"] = sorted(
            m["id"]
            for m in c.list_memories(user, "episodic", ListQuery(include_superseded=False))[0]
        )
    c.bookkeeping.drain()
    return out


def _live_values(client: redis.Redis, keys: Keys) -> dict[str, str | None]:
    return {
        as_str(k): (None if v is None else as_str(v))
        for k in client.scan_iter(match=f"{keys.episodic_prefix}:*", count=1000)
        for v in [client.hget(k, schema.LIVE_FIELD)]
    }


def _index_fields(client: redis.Redis, name: str) -> set[str]:
    out = set()
    for attr in client.ft(name).info()["attributes"]:
        items = [as_str(a) if isinstance(a, bytes) else a for a in attr]
        out.add(str(items[1]))
    return out


def _indexed(client: redis.Redis, name: str) -> None:
    for _ in range(500):
        if not int(client.ft(name).info().get("indexing", 0)):
            return
        time.sleep(0.01)
    raise AssertionError(f"{name} is still indexing")


@pytest.fixture
def old_store(
    redis_client: redis.Redis, embedder: SessionEmbedder, settings: Settings
) -> tuple[Answers, str, Callable[[], MemoryCoordinator]]:
    """(what recall found before, the superseded memory's id, a way to open it again)."""
    keys = Keys(settings.memory_namespace)
    c = MemoryCoordinator(redis_client, embedder, settings)
    try:
        for user, texts in TEXTS.items():
            for text in texts:
                c.add_episodic(user, text)
        old = c.add_episodic("ana", OLD_DOG).id
        rex = next(h.id for h in c.search("ana", "dog called Rex", k=1))
        c.supersede("ana", old, rex)
        c.bookkeeping.drain()
        before = _answers(c)
        index_schema = c.stores.episodic.index.schema
    finally:
        c.close()
    assert all(old not in ids for ids in before.values())  # today's code keeps it out
    # as the old code left the store: no tag, an index without the field, no marker
    for key in _live_values(redis_client, keys):
        redis_client.hdel(key, schema.LIVE_FIELD)
    redis_client.ft(keys.episodic_index).dropindex(delete_documents=False)
    old_schema = IndexSchema.from_dict(index_schema.to_dict())
    old_schema.remove_field(schema.LIVE_FIELD)
    SearchIndex(old_schema, redis_client=redis_client).create(overwrite=False)
    redis_client.delete(keys.live_tags)
    _indexed(redis_client, keys.episodic_index)
    assert schema.LIVE_FIELD not in _index_fields(redis_client, keys.episodic_index)
    assert set(_live_values(redis_client, keys).values()) == {None}
    return before, old, lambda: MemoryCoordinator(redis_client, embedder, settings)


def test_an_old_store_gets_the_tag_at_open_and_recall_finds_the_same(
    old_store: tuple[Answers, str, Callable[[], MemoryCoordinator]],
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    before, old, reopen = old_store
    keys = Keys(settings.memory_namespace)
    c = reopen()
    try:
        assert schema.LIVE_FIELD in _index_fields(redis_client, keys.episodic_index)
        live = _live_values(redis_client, keys)
        superseded = keys.episodic("ana", old)
        assert live.pop(superseded) == ""
        assert set(live.values()) == {owner_tag("ana"), owner_tag("bob")}
        _indexed(redis_client, keys.episodic_index)
        assert _answers(c) == before
        # the superseded memory is still there, as history, and listed with superseded ones
        assert c.get_memory("ana", MemoryType.EPISODIC, old)["superseded_by"]
        assert redis_client.get(keys.live_tags) == b"1"
        assert migrate_live(redis_client, keys) is None  # a second open does nothing
    finally:
        c.close()


def test_a_pass_cut_short_is_done_again(
    old_store: tuple[Answers, str, Callable[[], MemoryCoordinator]],
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    """Some hashes tagged, the index not yet altered, no marker: the next open finishes."""
    before, _, reopen = old_store
    keys = Keys(settings.memory_namespace)
    first = sorted(_live_values(redis_client, keys))[::2]
    for key in first:
        redis_client.hset(key, schema.LIVE_FIELD, "stale")  # rewritten from owner and status
    c = reopen()
    try:
        assert "stale" not in set(_live_values(redis_client, keys).values())
        _indexed(redis_client, keys.episodic_index)
        assert _answers(c) == before
    finally:
        c.close()


def test_a_memory_deleted_during_the_pass_is_not_recreated(
    redis_client: redis.Redis, settings: Settings
) -> None:
    """A key scanned, then deleted before its script ran, stays gone (no stub hash that
    search would return); an empty store is done at once."""
    keys = Keys(settings.memory_namespace)
    gone = keys.episodic("ana", "01J0000000000000000000GONE")
    assert redis_client.eval(_SET_LIVE, 1, gone) == 0
    assert not redis_client.exists(gone)
    redis_client.delete(keys.live_tags)
    assert migrate_live(redis_client, keys) == 0
    assert migrate_live(redis_client, keys) is None
