"""Episodic memory on a real Redis Stack: write, read, edit, search, expiry, supersession."""

from __future__ import annotations

import time

import numpy as np
import pytest
import redis

from memory.admin.reembed import reembed_all
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError, NotFoundError
from memory.models import EventType, MemoryType, now_ms
from memory.queries import ListQuery, SearchFilter
from memory.stores.episodic import embedding_text
from memory.stores.records import bytes_vector, vector_bytes
from tests.integration.conftest import stored_vector

DAY = 86_400_000
U = "user-1"


def texts(hits: list) -> list[str]:
    return [h.text for h in hits]


def test_add_get_list(coordinator: MemoryCoordinator) -> None:
    mem = coordinator.add_episodic(
        U,
        "I am allergic to peanuts",
        event_type="health_event",
        context="told at dinner",
        tags=["Food", "allergy"],
        metadata={"severity": "high"},
        importance=0.9,
    )
    got = coordinator.get_memory(U, "episodic", mem.id)
    assert got["text"] == "I am allergic to peanuts"
    assert got["event_type"] == "health_event"
    assert got["context"] == "told at dinner"
    assert got["tags"] == ["food", "allergy"]
    assert got["metadata"] == {"severity": "high"}
    assert got["importance"] == 0.9
    assert got["pinned"] is False and got["superseded_by"] is None

    coordinator.add_episodic(
        U, "I want to run a marathon in October", event_type="goal", timestamp_ms=mem.timestamp + 1
    )
    rows, total = coordinator.list_memories(U, "episodic")
    assert total == 2
    assert [r["text"] for r in rows] == [
        "I want to run a marathon in October",
        "I am allergic to peanuts",
    ]  # newest first
    rows, total = coordinator.list_memories(U, "episodic", ListQuery(event_types=["goal"]))
    assert (total, [r["event_type"] for r in rows]) == (1, ["goal"])


def test_list_sorts_and_pages(coordinator: MemoryCoordinator) -> None:
    now = now_ms()
    for i in range(7):
        coordinator.add_episodic(
            U,
            f"Walked {i + 1} km today",
            event_type="milestone",
            timestamp_ms=now - (7 - i) * DAY,
            importance=i / 10,
        )
    page1, total = coordinator.list_memories(U, "episodic", ListQuery(page=1, page_size=3))
    page3, _ = coordinator.list_memories(U, "episodic", ListQuery(page=3, page_size=3))
    assert total == 7
    assert [r["text"] for r in page1] == [
        "Walked 7 km today",
        "Walked 6 km today",
        "Walked 5 km today",
    ]
    assert [r["text"] for r in page3] == ["Walked 1 km today"]
    by_importance, _ = coordinator.list_memories(
        U, "episodic", ListQuery(sort_by="importance", descending=False, page_size=2)
    )
    assert [r["importance"] for r in by_importance] == [0.0, 0.1]
    with pytest.raises(InvalidInputError, match="sort"):
        coordinator.list_memories(U, "episodic", ListQuery(sort_by="description"))


def test_update_text_re_embeds_and_search_finds_the_new_text(
    coordinator: MemoryCoordinator,
) -> None:
    mem = coordinator.add_episodic(U, "I drink green tea every morning", event_type="preference")
    before = stored_vector(coordinator, U, MemoryType.EPISODIC, mem.id)

    updated = coordinator.update_memory(
        U, "episodic", mem.id, text="I switched to espresso for breakfast"
    )
    after = stored_vector(coordinator, U, MemoryType.EPISODIC, mem.id)
    assert updated["text"] == "I switched to espresso for breakfast"
    assert before is not None and after is not None
    assert float(np.dot(before, after)) < 0.9  # a new vector, not the old one
    assert float(
        np.dot(after, coordinator.embedder.embed("I switched to espresso for breakfast"))
    ) == pytest.approx(1.0, abs=1e-4)

    hits = coordinator.search(U, "espresso")
    assert texts(hits) == ["I switched to espresso for breakfast"]
    assert hits[0].parts.text > 0
    assert "green tea" not in " ".join(texts(coordinator.search(U, "green tea")))
    _, total = coordinator.list_memories(U, "episodic")
    assert total == 1  # edited in place, not duplicated


def test_update_other_fields_keeps_the_vector(coordinator: MemoryCoordinator) -> None:
    mem = coordinator.add_episodic(U, "Knee hurts after long runs", event_type="health_event")
    before = stored_vector(coordinator, U, MemoryType.EPISODIC, mem.id)
    got = coordinator.update_memory(
        U, "episodic", mem.id, tags=["knee"], importance=0.8, event_type="correction"
    )
    assert (got["tags"], got["importance"], got["event_type"]) == (["knee"], 0.8, "correction")
    assert got["text"] == "Knee hurts after long runs"
    assert np.array_equal(before, stored_vector(coordinator, U, MemoryType.EPISODIC, mem.id))
    with pytest.raises(InvalidInputError, match="Cannot change"):
        coordinator.update_memory(U, "episodic", mem.id, session_id="another")


def test_delete(coordinator: MemoryCoordinator) -> None:
    keep = coordinator.add_episodic(U, "I like swimming")
    gone = coordinator.add_episodic(U, "I like cycling")
    coordinator.delete_memory(U, "episodic", gone.id)
    with pytest.raises(NotFoundError):
        coordinator.get_memory(U, "episodic", gone.id)
    assert [r["id"] for r in coordinator.list_memories(U, "episodic")[0]] == [keep.id]
    assert texts(coordinator.search(U, "cycling")) in ([], ["I like swimming"])
    with pytest.raises(NotFoundError):
        coordinator.delete_memory(U, "episodic", gone.id)


def test_pin(coordinator: MemoryCoordinator) -> None:
    mem = coordinator.add_episodic(
        U, "My doctor said: no more than 3 coffees a day", importance=0.2
    )
    coordinator.add_episodic(U, "Coffee tastes better with oat milk", importance=0.2)
    coordinator.update_memory(U, "episodic", mem.id, pinned=True)
    assert coordinator.get_memory(U, "episodic", mem.id)["pinned"] is True
    pinned, total = coordinator.list_memories(U, "episodic", ListQuery(pinned=True))
    assert (total, [r["id"] for r in pinned]) == (1, [mem.id])
    hit = next(h for h in coordinator.search(U, "coffee") if h.id == mem.id)
    assert hit.parts.importance == 1.0  # pinned memories count as most important
    coordinator.update_memory(U, "episodic", mem.id, pinned=False)
    assert coordinator.get_memory(U, "episodic", mem.id)["pinned"] is False


@pytest.fixture
def diary(coordinator: MemoryCoordinator) -> dict[str, str]:
    now = now_ms()
    items = {
        "peanuts": dict(
            text="I am allergic to peanuts",
            event_type="health_event",
            tags=["food", "allergy"],
            timestamp_ms=now - 40 * DAY,
        ),
        "marathon": dict(
            text="My goal is to run a marathon in under four hours",
            event_type="goal",
            tags=["running"],
            timestamp_ms=now - 10 * DAY,
        ),
        "vegetarian": dict(
            text="I became vegetarian last year",
            event_type="preference",
            tags=["food"],
            timestamp_ms=now - 2 * DAY,
        ),
        "knee": dict(
            text="Sprained my left knee while hiking",
            event_type="health_event",
            tags=["injury"],
            timestamp_ms=now - 1 * DAY,
        ),
    }
    return {name: coordinator.add_episodic(U, **fields).id for name, fields in items.items()}


def test_search_by_meaning(coordinator: MemoryCoordinator, diary: dict[str, str]) -> None:
    hits = coordinator.search(U, "Which foods make me sick?", k=3)
    assert hits[0].id == diary["peanuts"]
    assert hits[0].parts.vector > 0.3
    assert hits[0].band in ("high", "moderate", "low")


def test_search_by_words(coordinator: MemoryCoordinator, diary: dict[str, str]) -> None:
    hits = coordinator.search(U, "hiking", k=3)
    assert hits[0].id == diary["knee"]
    assert hits[0].parts.text == 1.0
    assert all(h.parts.final == h.score for h in hits)


def test_search_filtered_by_event_type(
    coordinator: MemoryCoordinator, diary: dict[str, str]
) -> None:
    hits = coordinator.search(
        U, "health and food", where=SearchFilter(event_types=["health_event"], min_score=0)
    )
    assert {h.id for h in hits} == {diary["peanuts"], diary["knee"]}
    hits = coordinator.search(
        U, "health and food", where=SearchFilter(event_types=[EventType.GOAL], min_score=0)
    )
    assert [h.id for h in hits] == [diary["marathon"]]
    with pytest.raises(InvalidInputError, match="Unknown event type"):
        coordinator.search(U, "food", where=SearchFilter(event_types=["dream"]))


def test_search_filtered_by_time_window(
    coordinator: MemoryCoordinator, diary: dict[str, str]
) -> None:
    now = now_ms()
    recent = coordinator.search(
        U, "food running knee", where=SearchFilter(since_ms=now - 5 * DAY, min_score=0)
    )
    assert {h.id for h in recent} == {diary["vegetarian"], diary["knee"]}
    older = coordinator.search(
        U, "food running knee", where=SearchFilter(until_ms=now - 5 * DAY, min_score=0)
    )
    assert {h.id for h in older} == {diary["peanuts"], diary["marathon"]}
    window = coordinator.search(
        U,
        "food running knee",
        where=SearchFilter(since_ms=now - 20 * DAY, until_ms=now - 5 * DAY, min_score=0),
    )
    assert [h.id for h in window] == [diary["marathon"]]


def test_search_filtered_by_tags(coordinator: MemoryCoordinator, diary: dict[str, str]) -> None:
    hits = coordinator.search(U, "what do I eat", where=SearchFilter(tags=["FOOD"], min_score=0))
    assert {h.id for h in hits} == {diary["peanuts"], diary["vegetarian"]}
    hits = coordinator.search(
        U, "what do I eat", where=SearchFilter(tags=["injury", "running"], min_score=0)
    )
    assert {h.id for h in hits} == {diary["knee"], diary["marathon"]}  # any of the tags
    assert (
        coordinator.search(
            U, "what do I eat", where=SearchFilter(tags=["no-such-tag"], min_score=0)
        )
        == []
    )


def test_adversarial_tags_do_not_widen_the_filter(
    coordinator: MemoryCoordinator, diary: dict[str, str]
) -> None:
    for tag in ["food|injury", "food}", "*", "-food", "food allergy", "@tags:{food}"]:
        # A tag that cannot be stored is refused as a filter too; it never matches more.
        try:
            hits = coordinator.search(
                U, "what do I eat", where=SearchFilter(tags=[tag], min_score=0)
            )
        except InvalidInputError as e:
            assert "one word per tag" in str(e), tag
            continue
        assert hits == [], tag
    # Such tags are not stored at all: a tag is one word of letters, digits and _ - . / & +
    with pytest.raises(InvalidInputError, match="one word per tag"):
        coordinator.add_episodic(U, "Tagged oddly", tags=["a|b", "x}"])


def test_expiry_sets_a_key_ttl_and_the_memory_disappears(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
) -> None:
    later = coordinator.add_episodic(
        U, "Remind me: dentist on Friday", expires_at_ms=now_ms() + 3_600_000
    )
    ttl = redis_client.pttl(coordinator.keys.episodic(U, later.id))
    assert 0 < ttl <= 3_600_000
    assert coordinator.get_memory(U, "episodic", later.id)["expires_at"] == later.expires_at
    forever = coordinator.add_episodic(U, "My birthday is in June")
    assert redis_client.pttl(coordinator.keys.episodic(U, forever.id)) == -1

    soon = coordinator.add_episodic(U, "Parking ticket expires soon", expires_at_ms=now_ms() + 300)
    deadline = time.monotonic() + 10
    soon_key = coordinator.keys.episodic(U, soon.id)
    while redis_client.exists(soon_key) and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(NotFoundError):
        coordinator.get_memory(U, "episodic", soon.id)
    assert soon.id not in {r["id"] for r in coordinator.list_memories(U, "episodic")[0]}


def test_removing_an_expiry_makes_the_memory_permanent(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
) -> None:
    mem = coordinator.add_episodic(U, "Temporary note", expires_at_ms=now_ms() + 3_600_000)
    coordinator.update_memory(U, "episodic", mem.id, expires_at=None)
    assert redis_client.pttl(coordinator.keys.episodic(U, mem.id)) == -1
    assert coordinator.get_memory(U, "episodic", mem.id)["expires_at"] is None


def test_supersede_hides_from_recall_but_keeps_history(coordinator: MemoryCoordinator) -> None:
    old = coordinator.add_episodic(U, "I live in Berlin", event_type="preference")
    new = coordinator.add_episodic(
        U, "I moved from Berlin to Munich", event_type="correction", supersedes=old.id
    )
    assert coordinator.get_memory(U, "episodic", old.id)["superseded_by"] == new.id

    hits = coordinator.search(U, "Where do I live? Berlin", where=SearchFilter(min_score=0))
    assert old.id not in {h.id for h in hits}
    assert new.id in {h.id for h in hits}
    ctx = coordinator.retrieve_all_context(U, "s1", "Where do I live? Berlin")
    assert old.id not in {h.id for h in ctx.episodic}

    history, total = coordinator.list_memories(U, "episodic")
    assert total == 2 and {r["id"] for r in history} == {old.id, new.id}
    active, total = coordinator.list_memories(U, "episodic", ListQuery(include_superseded=False))
    assert (total, [r["id"] for r in active]) == (1, [new.id])
    with_history = coordinator.search(
        U, "Berlin", where=SearchFilter(include_superseded=True, min_score=0)
    )
    assert old.id in {h.id for h in with_history}


def test_superseding_a_missing_memory_writes_nothing(coordinator: MemoryCoordinator) -> None:
    with pytest.raises(NotFoundError):
        coordinator.add_episodic(U, "I now sleep 8", supersedes="01NOSUCHMEMORY0000000000000")
    assert coordinator.list_memories(U, "episodic")[1] == 0


def test_recall_counts_accesses(coordinator: MemoryCoordinator) -> None:
    mem = coordinator.add_episodic(U, "I prefer running in the early morning")
    coordinator.retrieve_all_context(U, "s", "When do I like to run?")
    coordinator.close()  # waits for the background bookkeeping
    got = coordinator.get_memory(U, "episodic", mem.id)
    assert got["access_count"] == 1
    assert got["last_accessed"] > 0


def test_an_access_indexes_a_memory_once_and_never_revives_a_deleted_one(
    coordinator: MemoryCoordinator,
) -> None:
    kept = coordinator.add_episodic(U, "I keep a training diary")
    gone = coordinator.add_episodic(U, "I used to swim on Sundays")
    coordinator.delete_memory(U, "episodic", gone.id)
    store = coordinator.stores.episodic
    info = coordinator.redis.ft(store.index.name).info
    before = int(info()["max_doc_id"])
    store.touch(U, [kept.id, gone.id])
    store.touch(U, [kept.id])
    # RediSearch gives a hash a new document id each time a write indexes it again: two
    # accesses of one memory, two ids (was four: HINCRBY and HSET each indexed it)
    assert int(info()["max_doc_id"]) - before == 2
    got = coordinator.get_memory(U, "episodic", kept.id)
    assert got["access_count"] == 2 and got["last_accessed"] > 0
    assert not coordinator.redis.exists(coordinator.keys.episodic(U, gone.id))


def test_a_logged_exchange_gets_its_vector_of_record_off_the_answer_path(
    coordinator: MemoryCoordinator,
) -> None:
    """store_interaction writes at once with the question's cached vector, then (in the
    background) the vector every other write path uses: `description (context)`, the
    assistant's reply included, so recall finds an exchange by what was answered too."""
    result = coordinator.store_interaction(
        "ana", "s1", "Any tips for my knees?", "Try cycling: low impact on the joints."
    )
    coordinator.bookkeeping.drain()
    mem = coordinator.episodic.get("ana", str(result["episodic"]))
    expected = coordinator.embedder.embed(embedding_text(mem.description, mem.context))
    stored = stored_vector(coordinator, "ana", MemoryType.EPISODIC, mem.id)
    # exactly the stored form (half precision) of the model's vector
    assert stored is not None and np.array_equal(stored, bytes_vector(vector_bytes(expected)))
    assert "cycling" in mem.context


def test_the_logged_exchange_keeps_the_answer_it_is_given_the_chat_the_whole_reply(
    coordinator: MemoryCoordinator,
) -> None:
    """The agent leaves its own notices out of the exchange it logs (`episode_answer`); the
    chat's message keeps what was shown."""
    shown = "Rest two days. (No answer: the model went on; this part is the app's.)"
    result = coordinator.store_interaction(
        "ana", "s1", "My knee hurts", shown, episode_answer="Rest two days."
    )
    mem = coordinator.episodic.get("ana", str(result["episodic"]))
    assert "Rest two days." in mem.context and "No answer" not in mem.context
    assert coordinator.recent_messages("ana", "s1")[-1].content == shown


def test_refining_a_deleted_memory_does_not_bring_it_back(coordinator: MemoryCoordinator) -> None:
    mem = coordinator.add_episodic("ana", "I like rowing")
    coordinator.delete_memory("ana", "episodic", mem.id)
    assert coordinator.episodic.replace_vector("ana", mem.id, np.ones(4, dtype=np.float32)) is False
    assert not coordinator.redis.exists(coordinator.keys.episodic("ana", mem.id))


def test_reembed_gives_episodic_memories_the_same_vector_as_the_write_path(
    coordinator: MemoryCoordinator, settings: Settings
) -> None:
    """`python -m memory reembed` recomputes `description (context)` for episodic memories,
    the text every write path embeds (it used to embed the description alone)."""
    mem = coordinator.add_episodic(
        "ana", "Yes, three years now!", context="replying to Bo: how long have you been running?"
    )
    with_context = coordinator.embedder.embed(embedding_text(mem.description, mem.context))
    alone = coordinator.embedder.embed(mem.description)
    coordinator.episodic.replace_vector("ana", mem.id, alone)  # as an older reembed left it

    reembed_all(settings)

    stored = stored_vector(coordinator, "ana", MemoryType.EPISODIC, mem.id)
    assert stored is not None
    assert float(np.dot(stored, with_context)) > 0.999 > float(np.dot(stored, alone))
