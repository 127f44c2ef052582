"""Bad input, unknown ids, an unreachable Redis and a changed embedding model: a clear error
that says what to do, and nothing written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import redis

from benchmarks.common import free_port
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.embeddings import OnnxMiniLMEmbedder, l2_normalise
from memory.embeddings.model_ids import PACKAGED_MODEL_ID, TOKEN_INT8_MODEL_ID
from memory.embeddings.token_int8 import int8_kernels_exact
from memory.errors import (
    EmbeddingModelMismatchError,
    InvalidInputError,
    NotFoundError,
    StoreUnavailableError,
)
from memory.models import MAX_TEXT_CHARS
from memory.replies import as_str


def index_models(coord: MemoryCoordinator) -> dict[str, dict[str, Any]]:
    """The model and dims each index was built with, as the stores' open reads them."""
    keys = coord.keys
    return {
        name: {as_str(k): as_str(v) for k, v in coord.redis.hgetall(keys.index_meta(name)).items()}
        for name in (keys.episodic_index, keys.semantic_index, keys.procedural_index)
    }


U = "user-1"
UNKNOWN = "01NOSUCHMEMORY0000000000000"


class OtherModelEmbedder:
    """A stand-in for another embedding model (say a 768-dimension Ollama model)."""

    def __init__(self, model_id: str = "ollama:nomic-embed-text", dims: int = 768) -> None:
        self.model_id = model_id
        self.dims = dims

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        return l2_normalise(rng.normal(size=(len(texts), self.dims)).astype(np.float32))


# --- bad input ----------------------------------------------------------------------------
BAD_EPISODIC = [
    pytest.param({"text": ""}, "empty", id="empty-text"),
    pytest.param({"text": "   \n"}, "empty", id="blank-text"),
    pytest.param({"text": "x" * (MAX_TEXT_CHARS + 1)}, "limit", id="over-long-text"),
    pytest.param({"text": "ok", "event_type": "dream"}, "Unknown event type", id="event-type"),
    pytest.param({"text": "ok", "metadata": "{oops"}, "not valid JSON", id="metadata-json"),
    pytest.param({"text": "ok", "metadata": "[1, 2]"}, "JSON object", id="metadata-list"),
    pytest.param({"text": "ok", "importance": 2}, "Importance", id="importance"),
    pytest.param({"text": "ok", "tags": ["x" * 80]}, "Tag", id="long-tag"),
    pytest.param({"text": "ok", "supersedes": UNKNOWN}, "No episodic memory", id="supersedes"),
]


@pytest.mark.parametrize(("fields", "message"), BAD_EPISODIC)
def test_bad_episodic_input_is_refused_and_writes_nothing(
    coordinator: MemoryCoordinator,
    snapshot,
    fields: dict,
    message: str,
) -> None:
    coordinator.add_episodic(U, "An existing memory")
    before = snapshot()
    with pytest.raises((InvalidInputError, NotFoundError), match=message):
        coordinator.add_episodic(U, **fields)
    assert snapshot() == before
    assert coordinator.list_memories(U, "episodic")[1] == 1


def test_bad_semantic_input_is_refused_and_writes_nothing(
    coordinator: MemoryCoordinator, snapshot
) -> None:
    before = snapshot()
    count = coordinator.semantic.count()
    for fields in (
        {"text": ""},
        {"text": "ok", "category": "c" * 60},
        {"text": "ok", "metadata": "nope"},
        {"text": "ok", "importance": -1},
    ):
        with pytest.raises(InvalidInputError):
            coordinator.add_semantic(**fields)
    assert coordinator.semantic.count() == count
    assert snapshot() == before


def test_bad_edits_are_refused_and_change_nothing(coordinator: MemoryCoordinator, snapshot) -> None:
    mem = coordinator.add_episodic(U, "I cycle to work", tags=["commute"])
    before = snapshot()
    for changes in (
        {"text": ""},
        {"event_type": "dream"},
        {"metadata": "[]"},
        {"importance": 7},
        {"owner": "x"},
        {},
    ):
        with pytest.raises(InvalidInputError):
            coordinator.update_memory(U, "episodic", mem.id, **changes)
    assert snapshot() == before
    assert coordinator.get_memory(U, "episodic", mem.id)["text"] == "I cycle to work"


def test_unknown_memory_type_is_refused(coordinator: MemoryCoordinator) -> None:
    for call in (
        lambda: coordinator.list_memories(U, "working"),
        lambda: coordinator.get_memory(U, "dreams", UNKNOWN),
        lambda: coordinator.delete_memory(U, "", UNKNOWN),
        lambda: coordinator.search(U, "tea", "imaginary"),
    ):
        with pytest.raises(InvalidInputError, match="Unknown memory type"):
            call()


def test_search_limits(coordinator: MemoryCoordinator) -> None:
    with pytest.raises(InvalidInputError, match="k must be"):
        coordinator.search(U, "tea", k=0)
    with pytest.raises(InvalidInputError, match="empty"):
        coordinator.search(U, "  ")


# --- unknown ids --------------------------------------------------------------------------
@pytest.mark.parametrize("mtype", ["episodic", "semantic", "procedural", "short_term"])
@pytest.mark.parametrize("memory_id", [UNKNOWN, "", "a:b", "x" * 100, "*"])
def test_unknown_ids_are_not_found(
    coordinator: MemoryCoordinator, mtype: str, memory_id: str
) -> None:
    coordinator.add_message(U, "s1", "user", "hello")
    with pytest.raises(NotFoundError):
        coordinator.get_memory(U, mtype, memory_id)
    with pytest.raises(NotFoundError):
        coordinator.delete_memory(U, mtype, memory_id)


def test_unknown_ids_cannot_be_edited(coordinator: MemoryCoordinator) -> None:
    with pytest.raises(NotFoundError):
        coordinator.update_memory(U, "episodic", UNKNOWN, text="new")
    with pytest.raises(NotFoundError):
        coordinator.update_memory(U, "semantic", UNKNOWN, text="new")
    with pytest.raises(NotFoundError):
        coordinator.update_memory(U, "procedural", "0123456789abcdef", pinned=True)


# --- Redis unreachable --------------------------------------------------------------------
def test_no_redis_at_redis_url(settings: Settings) -> None:
    dead = f"redis://127.0.0.1:{free_port()}"
    with pytest.raises(StoreUnavailableError) as err:
        MemoryCoordinator.from_settings(settings.model_copy(update={"redis_url": dead}))
    message = str(err.value)
    assert dead in message
    assert "REDIS_URL" in message


def test_a_client_pointed_at_a_dead_port(embedder: object, settings: Settings) -> None:
    client = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=2)
    with pytest.raises(StoreUnavailableError, match="not reachable"):
        MemoryCoordinator(client, embedder, settings)


def test_not_a_redis_url(settings: Settings) -> None:
    with pytest.raises(StoreUnavailableError, match="not a valid Redis URL"):
        MemoryCoordinator.from_settings(settings.model_copy(update={"redis_url": "http://x"}))


# --- embedding model mismatch ----------------------------------------------------------
@pytest.mark.parametrize(
    ("model_id", "dims"),
    [
        ("ollama:nomic-embed-text", 768),
        ("all-MiniLM-L6-v2-int8-onnx", 512),
        ("another-384-model", 384),
    ],
)
def test_another_embedding_model_is_refused(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    settings: Settings,
    snapshot,
    model_id: str,
    dims: int,
) -> None:
    coordinator.add_episodic(U, "Stored with MiniLM")
    before = snapshot()
    with pytest.raises(EmbeddingModelMismatchError) as err:
        MemoryCoordinator(redis_client, OtherModelEmbedder(model_id, dims), settings)
    message = str(err.value)
    assert "python -m memory reembed" in message
    assert model_id in message and coordinator.embedder.model_id in message
    assert snapshot() == before


UPGRADE_MEMORIES = [
    "I sprained my left ankle on the trail last Saturday",
    "My partner and I are saving for a trip to Lisbon",
    "I switched to decaf coffee after lunch",
    "My sister is getting married in June",
    "I want to finish a half marathon this spring",
    "The dentist said my teeth look fine",
    "I started learning Portuguese on my phone",
    "Our landlord is raising the rent in March",
]


def test_a_store_of_the_packaged_graph_opens_and_recalls_after_the_upgrade(
    redis_client: redis.Redis, settings: Settings
) -> None:
    """The packaged graph multiplies in fp32; the embedder rewrites it to multiply in int8
    under another model id (where the CPU's int8 kernels are exact). A store written by the
    packaged graph opens without a re-embed (the same weights: `memory.embeddings.model_ids`),
    finds its memories, names the model that built it and records the one that joined; the
    old graph opens the mixed store again (a downgrade) and finds the new writes."""
    new_id = TOKEN_INT8_MODEL_ID if int8_kernels_exact() else PACKAGED_MODEL_ID
    old = MemoryCoordinator(redis_client, OnnxMiniLMEmbedder(int8_inputs=False), settings)
    try:
        for text in UPGRADE_MEMORIES:
            old.add_episodic(U, text)
    finally:
        old.close()
    new = MemoryCoordinator(redis_client, OnnxMiniLMEmbedder(), settings)
    try:
        assert new.embedder.model_id == new_id
        hits = new.search(U, "How is my ankle injury?", k=3)
        assert [h.record.get("description") for h in hits][:1] == [UPGRADE_MEMORIES[0]]
        new.add_episodic(U, "I bought new trail shoes with a wider toe box")
        metas = index_models(new).values()
        assert {m["model_id"] for m in metas} == {PACKAGED_MODEL_ID}
        joined = {new_id} - {PACKAGED_MODEL_ID}
        assert all(set(filter(None, m.get("written_by", "").split(","))) == joined for m in metas)
    finally:
        new.close()
    again = MemoryCoordinator(redis_client, OnnxMiniLMEmbedder(int8_inputs=False), settings)
    try:
        hits = again.search(U, "Which shoes did I buy for the trail?", k=1)
        assert [h.record.get("description") for h in hits] == [
            "I bought new trail shoes with a wider toe box"
        ]
    finally:
        again.close()


def test_a_store_that_another_rewrite_joined_is_refused(
    coordinator: MemoryCoordinator, redis_client: redis.Redis, settings: Settings
) -> None:
    """The same space is granted model by model: a store a later rewrite wrote into (say
    `-tok8v9`, not yet measured against this one) is refused, naming every writer."""
    coordinator.add_episodic(U, "Stored with MiniLM")
    for meta in index_models(coordinator):
        redis_client.hset(
            coordinator.keys.index_meta(meta), "written_by", f"{PACKAGED_MODEL_ID}-tok8v9"
        )
    with pytest.raises(EmbeddingModelMismatchError, match="also written by .*tok8v9"):
        MemoryCoordinator(redis_client, OtherModelEmbedder(PACKAGED_MODEL_ID, 384), settings)


def test_each_index_records_its_model(coordinator: MemoryCoordinator) -> None:
    models = index_models(coordinator)
    assert len(models) == 3
    for meta in models.values():
        assert meta == {"model_id": coordinator.embedder.model_id, "dims": "384"}
