"""Semantic memory: the shipped knowledge file (loaded once) and facts that users add."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import redis

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import NotFoundError
from memory.models import MemoryType
from memory.queries import ListQuery, SearchFilter
from tests.integration.conftest import stored_vector

KNOWLEDGE = json.loads(Settings(_env_file=None).knowledge_file.read_text())["facts"]


def test_knowledge_file_is_loaded_on_first_start(coordinator: MemoryCoordinator) -> None:
    rows, total = coordinator.list_memories("anyone", "semantic", ListQuery(page_size=200))
    assert sorted(r["text"] for r in rows) == sorted(f["fact"] for f in KNOWLEDGE)
    assert total == len(KNOWLEDGE) > 10
    assert coordinator.semantic.count() == len(KNOWLEDGE)
    assert coordinator.get_memory_stats()["semantic"]["fact_count"] == len(KNOWLEDGE)
    first = next(r for r in rows if r["text"] == KNOWLEDGE[0]["fact"])
    assert first["category"] == KNOWLEDGE[0]["category"]
    assert first["added_by"] == ""


def test_knowledge_loading_is_idempotent(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    embedder: object,
    settings: Settings,
) -> None:
    before = coordinator.semantic.count()
    again = MemoryCoordinator(redis_client, embedder, settings)  # e.g. the app restarted
    try:
        assert again.load_knowledge() == 0
        assert again.semantic.count() == before
    finally:
        again.close()


def test_facts_added_to_the_file_are_loaded_at_the_next_start(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    embedder: object,
    settings: Settings,
    tmp_path: Path,
) -> None:
    edited = tmp_path / "knowledge.json"
    new_fact = {
        "fact": "Sauna bathing after exercise may help relaxation.",
        "category": "recovery",
        "fact_type": "tip",
    }
    edited.write_text(json.dumps({"facts": [*KNOWLEDGE, new_fact]}))
    before = coordinator.semantic.count()
    restarted = MemoryCoordinator(
        redis_client, embedder, settings.model_copy(update={"knowledge_file": edited})
    )
    try:
        assert restarted.semantic.count() == before + 1
        assert restarted.load_knowledge() == 0
        hits = restarted.search("anyone", "Is sauna good after a workout?", "semantic", k=1)
        assert hits[0].text == new_fact["fact"]
        assert hits[0].record["category"] == "recovery"
    finally:
        restarted.close()


def test_search_by_meaning_and_by_category(coordinator: MemoryCoordinator) -> None:
    hits = coordinator.search("u", "What is a normal pulse when resting?", "semantic", k=3)
    assert "resting heart rate" in hits[0].text
    assert hits[0].record["category"] == "cardio"
    assert hits[0].parts.vector > 0.5
    cats = {
        h.record["category"]
        for h in coordinator.search(
            "u", "sleep and heart", "semantic", where=SearchFilter(category="cardio", min_score=0)
        )
    }
    assert cats == {"cardio"}


def test_user_added_fact_lifecycle(coordinator: MemoryCoordinator) -> None:
    before = coordinator.semantic.count()
    fact = coordinator.add_semantic(
        "Kombucha contains small amounts of alcohol.",
        category="Nutrition",
        fact_type="fact",
        added_by="u1",
        context="from a label",
    )
    got = coordinator.get_memory("u1", "semantic", fact.id)
    assert (got["text"], got["category"], got["added_by"]) == (
        "Kombucha contains small amounts of alcohol.",
        "nutrition",
        "u1",
    )
    assert coordinator.semantic.count() == before + 1
    hits = coordinator.search("u1", "kombucha", "semantic", k=1)
    assert hits[0].id == fact.id and hits[0].parts.text == 1.0

    old_vec = stored_vector(coordinator, "u1", MemoryType.SEMANTIC, fact.id)
    coordinator.update_memory(
        "u1", "semantic", fact.id, text="Water kefir is a fermented, fizzy drink."
    )
    new_vec = stored_vector(coordinator, "u1", MemoryType.SEMANTIC, fact.id)
    assert float(np.dot(old_vec, new_vec)) < 0.9
    assert coordinator.search("u1", "kefir", "semantic", k=1)[0].id == fact.id

    coordinator.update_memory("u1", "semantic", fact.id, pinned=True)
    assert coordinator.get_memory("u1", "semantic", fact.id)["pinned"] is True

    with pytest.raises(NotFoundError):
        coordinator.delete_memory("u2", "semantic", fact.id)  # not theirs
    coordinator.delete_memory("u1", "semantic", fact.id)
    with pytest.raises(NotFoundError):
        coordinator.get_memory("u1", "semantic", fact.id)
    assert coordinator.semantic.count() == before


def test_a_deleted_file_fact_is_not_reloaded(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    embedder: object,
    settings: Settings,
) -> None:
    before = coordinator.semantic.count()
    (hit,) = coordinator.search("u", "resting heart rate", "semantic", k=1)
    coordinator.delete_memory("u", "semantic", hit.id, as_admin=True)
    again = MemoryCoordinator(redis_client, embedder, settings)
    try:
        assert again.semantic.count() == before - 1
        assert hit.id not in {h.id for h in again.search("u", "resting heart rate", "semantic")}
    finally:
        again.close()
