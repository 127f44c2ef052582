"""Forgetting a topic in the forms people write it, and only for the one who asks.

A topic is matched after one normalisation on both sides (`memory.text.fold`): so a word
joined by `_`, `@`, `.` or `-`, a soft hyphen or zero-width space pasted inside it, fullwidth
letters, and NFC against NFD spellings all count as the word; over texts, tags, metadata,
session ids and titles, procedure tool names and imported message ids.

The embedding cache is shared by every user of a namespace: a forget drops only the entries of
texts the asking user wrote (found from their own records), and what it reports counts only
their data, so it can neither delete another user's entries nor tell whether anyone else
typed a word.
"""

from __future__ import annotations

import json

import redis

from memory.admin.forget import TopicForget
from memory.coordinator import MemoryCoordinator
from memory.queries import SearchFilter
from memory.replies import as_str
from memory.text import fold
from tests.integration.test_forget import _values

SHY, ZWSP = "\u00ad", "\u200b"


def _cache_texts(client: redis.Redis, coordinator: MemoryCoordinator) -> set[str]:
    keys = client.scan_iter(match=coordinator.keys.embedding_cache_entries, count=500)
    return {as_str(client.hget(k, "content")) for k in keys}


def test_a_forget_neither_deletes_nor_reveals_another_users_cache_entries(
    coordinator: MemoryCoordinator, redis_client: redis.Redis
) -> None:
    c, forget = coordinator, TopicForget.of(coordinator)
    c.add_episodic("probe-x", "I want to visit Zanzibar", event_type="goal")
    alone = forget.forget("probe-x", "Zanzibar").counts

    # Another user searches for the word: their cache entry must survive the probe's forget,
    # and the probe's report must not change because of it.
    c.search("victim-a", "flights to Zanzibar in March")
    c.bookkeeping.drain()
    assert "flights to Zanzibar in March" in _cache_texts(redis_client, c)
    c.add_episodic("probe-x", "I want to visit Zanzibar", event_type="goal")
    again = forget.forget("probe-x", "Zanzibar").counts

    assert again == alone
    assert "flights to Zanzibar in March" in _cache_texts(redis_client, c)
    # The preview reveals nothing either: no match and no count of someone else's data.
    preview = forget.preview("probe-x", "Zanzibar")
    assert preview.matches == [] and preview.shared_facts == 0
    assert "flights to Zanzibar in March" in _cache_texts(redis_client, c)
    # The victim's own forget does find and drop it.
    assert forget.forget("victim-a", "Zanzibar").counts["cached_embeddings"] >= 1
    assert "flights to Zanzibar in March" not in _cache_texts(redis_client, c)


def _forms(c: MemoryCoordinator) -> list[str]:
    """One record per form the topic "Okafor" / "Gómez" takes; returns their texts."""
    c.add_episodic("ana", "Her address is okafor_law@example.com", event_type="fact")
    c.add_episodic("ana", "Booked a meeting", tags=["okafor_law"], event_type="milestone")
    c.add_episodic("ana", f"Call Mrs Oka{SHY}for on Monday", event_type="milestone")
    c.add_episodic("ana", f"Oka{ZWSP}for sent the papers", event_type="milestone")
    c.add_episodic("ana", "Ｏｋａｆｏｒ will call back", event_type="milestone")
    c.add_episodic("ana", "Signed the papers", session_id="okafor-case", event_type="milestone")
    c.add_episodic("ana", "Paid the retainer", metadata={"firm": "Okafor.Law"})
    c.add_episodic("ana", "Lunch with Go\u0301mez", event_type="milestone")  # NFD
    c.store_interaction("ana", "okafor-chat", "Any news today?", "None yet.", store_episode=False)
    c.store_interaction("ana", "s2", "What is on today?", "A run.", store_episode=False)
    c.set_session_title("ana", "s2", "Okafor_case questions")  # a title: a trace, not a match
    c.record_procedure(
        "ana", "who called?", ["lookup_okafor_calls"], success_score=1.0, execution_time_ms=1.0
    )
    # An imported message whose id names the topic.
    doc = c.export_user("ana")
    doc["short_term"]["imported"] = [
        {**doc["short_term"]["s2"][0], "id": "okafor-msg-1", "content": "Hello there"}
    ]
    c.import_user(doc, user_id="ana", mode="replace")
    c.add_episodic("ana", "I run on Sundays", event_type="preference")
    return [
        "Her address is okafor_law@example.com",
        "Booked a meeting",
        f"Call Mrs Oka{SHY}for on Monday",
        f"Oka{ZWSP}for sent the papers",
        "Ｏｋａｆｏｒ will call back",
        "Signed the papers",
        "Paid the retainer",
        "Any news today?",
        "None yet.",
        "who called?",
        "Hello there",
    ]


def test_the_forms_people_write_are_previewed_and_forgotten(
    coordinator: MemoryCoordinator, redis_client: redis.Redis, namespace: str
) -> None:
    c, forget = coordinator, TopicForget.of(coordinator)
    texts = _forms(c)

    listed = [m.text for m in forget.preview("ana", "Okafor").matches]
    assert sorted(listed) == sorted(texts)
    # NFC in the topic meets NFD in the text (and the other way round).
    assert [m.text for m in forget.preview("ana", "G\u00f3mez").matches] == [
        "Lunch with Go\u0301mez"
    ]

    forget.forget("ana", "Okafor")
    forget.forget("ana", "G\u00f3mez")

    assert forget.preview("ana", "Okafor").matches == []
    exported = fold(json.dumps(c.export_user("ana"), ensure_ascii=False))
    assert "okafor" not in exported and "gómez" not in exported
    for key in redis_client.scan_iter(match=f"{namespace}*", count=1000):
        stored = b" ".join([key, *_values(redis_client, key)]).decode("utf-8", "ignore")
        assert "okafor" not in fold(stored) and "gómez" not in fold(stored), key
    # (A search notes its query: after the scan.)
    hits = c.search("ana", "okafor", k=50, where=SearchFilter(include_superseded=True))
    assert [h.text for h in hits if h.text != "I run on Sundays"] == []
    # What does not mention it stays.
    assert [m["text"] for m in c.list_memories("ana", "episodic")[0]] == ["I run on Sundays"]
    assert [m.content for m in c.recent_messages("ana", "s2")] == ["What is on today?", "A run."]
