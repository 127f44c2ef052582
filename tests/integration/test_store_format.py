"""A store of the current format opens and answers as before (one written by b72d341's code,
`data/store_b72d341.json`); another format is refused at open with what to do, and nothing is
written to it."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import StoreFormatError

U = "ada"
WHAT_TO_DO = "export them with the version that wrote them"
B72D341 = json.loads((Path(__file__).parent / "data" / "store_b72d341.json").read_text())


def _load(client: redis.Redis, store: dict[str, Any], namespace: str) -> None:
    """The store's keys, under `namespace` (its name is in index names too, `ns_episodic`)."""
    pipe = client.pipeline(transaction=False)
    for item in store["keys"]:
        key = item["key"].replace(store["namespace"], namespace)
        value: Any = item["value"]
        if item["type"] == "hash":
            pipe.hset(
                key, mapping={base64.b64decode(f): base64.b64decode(v) for f, v in value.items()}
            )
        elif item["type"] == "list":
            pipe.rpush(key, *map(base64.b64decode, value))
        elif item["type"] == "set":
            pipe.sadd(key, *map(base64.b64decode, value))
        elif item["type"] == "zset":
            pipe.zadd(key, {base64.b64decode(m): score for m, score in value})
        else:
            pipe.set(key, base64.b64decode(value))
        if item["ttl_ms"] > 0:
            pipe.pexpire(key, item["ttl_ms"])
    pipe.execute()


def _indexed(client: redis.Redis, namespace: str) -> None:
    """Wait until the indexes created at open have scanned the loaded hashes."""
    deadline = time.monotonic() + 60
    for kind in ("episodic", "semantic", "procedural"):
        while int(client.ft(f"{namespace}_{kind}").info()["indexing"]):
            assert time.monotonic() < deadline, f"{kind} index still indexing"
            time.sleep(0.05)


def test_a_store_written_at_b72d341_opens_and_answers_as_it_did(
    redis_client: redis.Redis, embedder: object, settings: Settings, namespace: str
) -> None:
    _load(redis_client, B72D341, namespace)
    coord = MemoryCoordinator(redis_client, embedder, settings)
    try:
        _indexed(redis_client, namespace)
        ids, session = B72D341["ids"], B72D341["session"]
        for query, first in B72D341["first"].items():
            ctx = coord.retrieve_all_context(U, session, query)
            then = B72D341["recall"][query]
            assert [h.id for h in ctx.episodic] == then["episodic"] == [ids[first]]
            assert [m.content for m in ctx.short_term] == then["short_term"]
        ctx = coord.retrieve_all_context(U, session, "Which medicines must I avoid?")
        assert ctx.semantic[0].id == ids["fact"]  # the user's fact, with the knowledge file's
        assert coord.get_memory(U, "episodic", ids["paused"])["paused"] is True
        assert coord.get_memory(U, "episodic", ids["superseded"])["superseded_by"] == ids["locker"]
    finally:
        coord.close()


def recall_of(coord: MemoryCoordinator) -> tuple[list[str], list[str], list[str]]:
    ctx = coord.retrieve_all_context(U, "s1", "Which medicines must I avoid?")
    return (
        [m.id for m in ctx.episodic],
        [f.id for f in ctx.semantic],
        [m.content for m in ctx.short_term],
    )


def test_a_new_store_gets_the_markers_b72d341_wrote_and_reopens_as_it_was(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    embedder: object,
    settings: Settings,
    namespace: str,
) -> None:
    allergy = coordinator.add_episodic(U, "I am allergic to penicillin", event_type="health_event")
    coordinator.add_episodic(U, "My sister lives in Lyon")
    coordinator.add_semantic("Ginger may ease nausea.", added_by=U)
    coordinator.store_interaction(U, "s1", "Can I take amoxicillin?", "Ask your doctor first.")
    before = recall_of(coordinator)
    assert before[0][0] == allergy.id
    # The markers as b72d341 wrote them at a store's first open: an older store carries these.
    assert [redis_client.get(f"{namespace}:{m}") for m in ("keys_version", "vector_dtype")] == [
        b"2",
        b"float16",
    ]
    assert redis_client.get(f"{namespace}:live_tags") == b"1"
    coordinator.close()

    again = MemoryCoordinator(redis_client, embedder, settings)
    try:
        assert recall_of(again) == before
        assert again.get_memory(U, "episodic", allergy.id)["text"] == "I am allergic to penicillin"
    finally:
        again.close()


@pytest.mark.parametrize(
    "marker, value",
    [
        ("keys_version", None),  # the layout before the per-user hash tags had no marker
        ("keys_version", "3"),  # a newer version's store
        ("vector_dtype", None),  # float32 vectors, before FLOAT16
        ("live_tags", None),  # memories without the recall tag
    ],
)
def test_a_store_of_another_format_is_refused_with_what_to_do(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    embedder: object,
    settings: Settings,
    namespace: str,
    snapshot: Callable[[], dict[bytes, bytes]],
    marker: str,
    value: str | None,
) -> None:
    coordinator.add_episodic(U, "I am allergic to penicillin")
    coordinator.close()
    if value is None:
        redis_client.delete(f"{namespace}:{marker}")
    else:
        redis_client.set(f"{namespace}:{marker}", value)
    before = snapshot()

    with pytest.raises(StoreFormatError, match=WHAT_TO_DO) as refused:
        MemoryCoordinator(redis_client, embedder, settings)
    assert "MEMORY_NAMESPACE" in str(refused.value)
    assert snapshot() == before  # nothing converted, nothing marked
