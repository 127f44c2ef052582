"""Bad input, unknown ids, an unreachable Redis and a changed embedding model: a clear error
that says what to do, and nothing written."""

from __future__ import annotations

import numpy as np
import pytest
import redis

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.embeddings import OnnxMiniLMEmbedder, l2_normalise
from memory.embeddings.model_ids import PACKAGED_MODEL_ID, TOKEN_INT8_MODEL_ID
from memory.errors import (
    EmbeddingModelMismatchError,
    InvalidInputError,
    NotFoundError,
    StoreUnavailableError,
)
from memory.models import MAX_TEXT_CHARS
from memory.runtime.server import free_port

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
        coordinator.pin(U, "procedural", "0123456789abcdef")


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


def test_a_store_of_the_packaged_graph_opens_and_recalls_after_the_upgrade(
    redis_client: redis.Redis, settings: Settings
) -> None:
    """Until the sixth pass of issue 19 the embedder ran the packaged graph in fp32; it now
    multiplies in int8 under another model id. A store written before opens without a
    re-embed (the same weights: `memory.embeddings.model_ids`), finds its memories, and
    keeps naming the model that wrote it."""
    old = MemoryCoordinator(redis_client, OnnxMiniLMEmbedder(int8_inputs=False), settings)
    try:
        old.add_episodic(U, "I sprained my left ankle on the trail last Saturday")
        old.add_episodic(U, "My partner and I are saving for a trip to Lisbon")
    finally:
        old.close()
    new = MemoryCoordinator(redis_client, OnnxMiniLMEmbedder(), settings)
    try:
        assert new.embedder.model_id == TOKEN_INT8_MODEL_ID
        hits = new.search(U, "How is my ankle injury?", k=2)
        assert hits and "ankle" in str(hits[0].record.get("description"))
        assert {m["model_id"] for m in new.index_models().values()} == {PACKAGED_MODEL_ID}
    finally:
        new.close()


def test_each_index_records_its_model(coordinator: MemoryCoordinator) -> None:
    models = coordinator.index_models()
    assert len(models) == 3
    for meta in models.values():
        assert meta == {"model_id": coordinator.embedder.model_id, "dims": "384"}
