"""A store of float32 vectors is converted to float16 at open: its indexes are rebuilt with
FLOAT16 vector fields, every vector takes half the bytes, recall finds the same memories in
the same order, a second open does nothing, two at once corrupt nothing.

The old store is written by today's code with the one dtype constant set back to float32
(index schema and every vector written or queried), and without the marker the old code
never set."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import redis

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.keys import Keys
from memory.models import MemoryType
from memory.replies import as_str
from memory.stores import schema
from memory.stores.migrate_vectors import migrate_vectors
from tests.integration.conftest import SessionEmbedder

DIMS = 384
TEXTS = {
    "ana": [
        "I prefer morning workouts before work",
        "My dog is called Rex and he loves the beach",
        "I am allergic to peanuts",
        "My sister lives in Oslo",
        "I started learning Portuguese last spring",
        "My knee hurts after long runs",
    ],
    "bob": ["I play the cello in a quartet", "I drive an old blue Volvo"],
}
QUERIES = {
    "ana": ["what exercise do I like?", "tell me about my pet", "food allergies", "family"],
    "bob": ["which instrument do I play?", "my car"],
}
PROCEDURE = ("what is the weather in Lisbon tomorrow", ["get_weather"])
SIMILAR_QUESTION = "weather forecast for Lisbon tomorrow please"

Answers = dict[str, Any]


def _fill(c: MemoryCoordinator) -> None:
    for user, texts in TEXTS.items():
        for text in texts:
            c.add_episodic(user, text)
        c.add_semantic(f"{user.title()} works as a nurse in Porto", added_by=user)
    c.record_procedure("ana", PROCEDURE[0], PROCEDURE[1], success_score=1.0, execution_time_ms=5)
    c.bookkeeping.drain()


def _answers(c: MemoryCoordinator) -> Answers:
    """What recall finds, in order: hybrid search of both types, vector-only neighbours, the
    full context's semantic hits and its (vector-matched) procedure."""
    out: Answers = {}
    for user, queries in QUERIES.items():
        for q in queries:
            out[f"{user}/{q}/episodic"] = [h.id for h in c.search(user, q, k=4)]
            out[f"{user}/{q}/semantic"] = [
                h.id for h in c.search(user, q, MemoryType.SEMANTIC, k=3)
            ]
            out[f"{user}/{q}/similar"] = [h.id for h in c.find_similar_episodic(user, q, k=3)]
    ctx = c.retrieve_all_context("ana", "s1", SIMILAR_QUESTION, include_short_term=False)
    assert ctx.procedural is not None and ctx.procedural.match == "similar"
    out["procedure"] = ctx.procedural.pattern_id
    c.bookkeeping.drain()
    return out


def _index_dtypes(client: redis.Redis, keys: Keys) -> dict[str, str]:
    out = {}
    for name in (keys.episodic_index, keys.semantic_index, keys.procedural_index):
        for attr in client.ft(name).info()["attributes"]:
            items = [as_str(a) if isinstance(a, bytes) else a for a in attr]
            if items[1] == schema.VECTOR_FIELD:
                out[name] = str(items[items.index("data_type") + 1])
    return out


def _indexed(client: redis.Redis, keys: Keys) -> None:
    """Wait until the rebuilt indexes have scanned the existing hashes (Redis indexes them in
    the background after FT.CREATE)."""
    names = (keys.episodic_index, keys.semantic_index, keys.procedural_index)
    for _ in range(500):
        if not any(int(client.ft(n).info().get("indexing", 0)) for n in names):
            return
        time.sleep(0.01)
    raise AssertionError("the rebuilt indexes are still indexing")


def _vector_lengths(client: redis.Redis, keys: Keys) -> dict[str, int]:
    """Every memory, fact and procedure hash -> the byte length of its vector."""
    out = {}
    for prefix in (keys.episodic_prefix, keys.semantic_prefix, keys.procedural_prefix):
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            raw = client.hget(key, schema.VECTOR_FIELD)
            out[as_str(key)] = len(raw or b"")
    return out


@pytest.fixture
def old_store(
    redis_client: redis.Redis,
    embedder: SessionEmbedder,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Answers, Callable[[], MemoryCoordinator]]:
    """(what recall found in the float32 store, a way to open it again with today's code)."""
    with monkeypatch.context() as m:
        m.setattr(schema, "VECTOR_DTYPE", "float32")
        c = MemoryCoordinator(redis_client, embedder, settings)
        try:
            _fill(c)
            before = _answers(c)
            assert _answers(c) == before  # recall's own bookkeeping changes no order
        finally:
            c.close()
    keys = Keys(settings.memory_namespace)
    redis_client.delete(keys.vector_dtype)  # the code of float32 had no marker
    assert set(_index_dtypes(redis_client, keys).values()) == {"FLOAT32"}
    lengths = _vector_lengths(redis_client, keys)
    assert len(lengths) > len(TEXTS["ana"]) + 3  # memories, facts (+ knowledge file), procedure
    assert set(lengths.values()) == {DIMS * 4}
    return before, lambda: MemoryCoordinator(redis_client, embedder, settings)


def test_an_old_store_is_converted_at_open_and_recall_finds_the_same(
    old_store: tuple[Answers, Callable[[], MemoryCoordinator]],
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    before, reopen = old_store
    keys = Keys(settings.memory_namespace)
    count = len(_vector_lengths(redis_client, keys))
    c = reopen()
    try:
        assert set(_index_dtypes(redis_client, keys).values()) == {"FLOAT16"}
        lengths = _vector_lengths(redis_client, keys)
        assert len(lengths) == count and set(lengths.values()) == {DIMS * 2}
        _indexed(redis_client, keys)
        assert _answers(c) == before
        assert redis_client.get(keys.vector_dtype) == b"float16"
        # a second open does nothing: no index dropped, no vector rewritten
        assert migrate_vectors(redis_client, keys, _schemas(keys, settings)) is None
    finally:
        c.close()


def test_a_pass_cut_short_resumes(
    old_store: tuple[Answers, Callable[[], MemoryCoordinator]],
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    """Indexes already rebuilt and some vectors converted, marker unset: the next open
    converts the rest (their length tells them apart) and rebuilds nothing."""
    before, reopen = old_store
    keys = Keys(settings.memory_namespace)
    reopen().close()
    _indexed(redis_client, keys)
    converted = _vector_lengths(redis_client, keys)
    half = sorted(converted)[::2]
    with redis_client.pipeline(transaction=False) as pipe:
        for key in half:  # back to float32, as if the pass had stopped before them
            raw = redis_client.hget(key, schema.VECTOR_FIELD) or b""
            vec = np.frombuffer(raw, np.float16).astype(np.float32)
            pipe.hset(key, schema.VECTOR_FIELD, vec.tobytes())
        pipe.delete(keys.vector_dtype)
        pipe.execute()
    done = migrate_vectors(redis_client, keys, _schemas(keys, settings))
    assert done is not None and done.converted == len(half) and done.rebuilt == []
    assert _vector_lengths(redis_client, keys) == converted
    c = reopen()
    try:
        assert _answers(c) == before
    finally:
        c.close()


def _schemas(keys: Keys, settings: Settings) -> list[Any]:
    """The schemas `Stores.open` migrates (today's, for the configured embedder)."""
    algo = settings.vector_algorithm
    return [
        schema.episodic_schema(keys, DIMS, algo),
        schema.semantic_schema(keys, DIMS, algo),
        schema.procedural_schema(keys, DIMS, algo),
    ]


def test_two_opens_at_once_convert_everything_once(
    old_store: tuple[Answers, Callable[[], MemoryCoordinator]],
    redis_url: str,
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    before, reopen = old_store
    keys = Keys(settings.memory_namespace)
    count = len(_vector_lengths(redis_client, keys))
    start = threading.Barrier(2)
    results: list[Any] = []

    def migrate() -> None:
        client = redis.Redis.from_url(redis_url)
        start.wait()
        try:
            results.append(migrate_vectors(client, keys, _schemas(keys, settings)))
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
    # each vector converted by exactly one of them (the other's swap found it changed)
    assert sum(r.converted for r in results if r is not None) == count
    assert set(_index_dtypes(redis_client, keys).values()) == {"FLOAT16"}
    assert set(_vector_lengths(redis_client, keys).values()) == {DIMS * 2}
    _indexed(redis_client, keys)
    c = reopen()
    try:
        assert _answers(c) == before
    finally:
        c.close()


def test_an_index_an_old_process_made_again_after_the_conversion_is_converted(
    old_store: tuple[Answers, Callable[[], MemoryCoordinator]],
    redis_client: redis.Redis,
    embedder: SessionEmbedder,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process of the older version opens the converted store after the marker was set:
    it finds no index (say one was dropped meanwhile), creates a FLOAT32 one and writes a
    float32 vector. The next open of today's code sees the index type, not just the marker."""
    _, reopen = old_store
    keys = Keys(settings.memory_namespace)
    reopen().close()
    _indexed(redis_client, keys)
    redis_client.ft(keys.episodic_index).dropindex(delete_documents=False)
    with monkeypatch.context() as m:
        m.setattr(schema, "VECTOR_DTYPE", "float32")
        old = MemoryCoordinator(redis_client, embedder, settings)
        try:
            late = old.add_episodic("ana", "I switched to a standing desk in March")
        finally:
            old.close()
    # the older code knows no marker: it stays as the conversion left it
    redis_client.set(keys.vector_dtype, "float16")
    assert _index_dtypes(redis_client, keys)[keys.episodic_index] == "FLOAT32"
    c = reopen()
    try:
        assert set(_index_dtypes(redis_client, keys).values()) == {"FLOAT16"}
        assert set(_vector_lengths(redis_client, keys).values()) == {DIMS * 2}
        _indexed(redis_client, keys)
        assert late.id in [h.id for h in c.search("ana", "standing desk", k=3)]
    finally:
        c.close()


def test_a_resp3_client_converts_too(
    old_store: tuple[Answers, Callable[[], MemoryCoordinator]],
    redis_url: str,
    redis_client: redis.Redis,
    settings: Settings,
) -> None:
    # FT.INFO's attributes are maps under RESP3 (REDIS_URL=...?protocol=3)
    keys = Keys(settings.memory_namespace)
    client = redis.Redis.from_url(redis_url, protocol=3)
    try:
        done = migrate_vectors(client, keys, _schemas(keys, settings))
    finally:
        client.close()
    assert done is not None and not done.skipped and len(done.rebuilt) == 3
    assert set(_index_dtypes(redis_client, keys).values()) == {"FLOAT16"}
    assert set(_vector_lengths(redis_client, keys).values()) == {DIMS * 2}
