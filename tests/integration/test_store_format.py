"""A store of the current format opens and answers as before; another format is refused at open
with what to do, and nothing is written to it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import StoreFormatError

U = "ada"
WHAT_TO_DO = "export them with the version that wrote them"


def recall_of(coord: MemoryCoordinator) -> tuple[list[str], list[str], list[str]]:
    ctx = coord.retrieve_all_context(U, "s1", "Which medicines must I avoid?")
    return (
        [m.id for m in ctx.episodic],
        [f.id for f in ctx.semantic],
        [m.content for m in ctx.short_term],
    )


def test_a_store_of_the_current_format_opens_and_answers_as_before(
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
