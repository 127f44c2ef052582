"""Forgetting a topic: after a forget, no search, no export and no scan of the
store finds the topic any more, whatever carried it (the chat's messages and details, the
extraction log, summaries, merges and supersessions, procedures, cached embeddings), and
everything else stays."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis

from agent.config import AgentSettings
from agent.loop import ChatAgent
from memory.admin.forget import TopicForget
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError
from memory.maintenance import Maintenance
from memory.queries import SearchFilter
from tests.fakes.fake_ollama import FakeOllama

TOPIC = "Okafor divorce lawyer"
WORDS = ("okafor", "divorce", "lawyer")


def _agent(coordinator: MemoryCoordinator, settings: Settings, url: str) -> ChatAgent:
    return ChatAgent(
        settings.model_copy(update={"ollama_host": url}),
        coordinator,
        agent_settings=AgentSettings(_env_file=None, ollama_model="qwen2.5:7b"),
    )


def _values(client: redis.Redis, key: bytes) -> list[Any]:
    """Every stored value of a key (and the fields of a hash), vectors left out."""
    kind = client.type(key)
    if kind == b"hash":
        raw = client.hgetall(key)
        return [*raw, *(v for k, v in raw.items() if k != b"embedding")]
    if kind == b"list":
        return list(client.lrange(key, 0, -1))
    if kind == b"set":
        return list(client.smembers(key))
    if kind == b"zset":
        return list(client.zrange(key, 0, -1))
    if kind == b"string":
        return [client.get(key) or b""]
    if kind == b"stream":
        return [repr(e).encode() for e in client.xrange(key) or []]
    return []


def _traces(client: redis.Redis, namespace: str) -> list[tuple[bytes, str]]:
    """(key, word) for every key of the namespace (the user's, the facts, the embedding cache,
    the metrics) holding a topic word in its name or values."""
    found = []
    for key in client.scan_iter(match=f"{namespace}*", count=1000):
        text = b" ".join([key, *_values(client, key)]).decode("utf-8", "ignore").lower()
        found += [(key, w) for w in WORDS if w in text]
    return found


@pytest.fixture
def chatted(coordinator: MemoryCoordinator, settings: Settings) -> dict[str, str]:
    """Ana talks about her divorce lawyer through the chat (messages, details, the extraction
    log, an interaction, an extracted memory, a summary), with a merge, a supersession, a
    procedure, a private fact and a cached search; and about other things that must stay."""
    c = coordinator
    keep = c.add_episodic("ana", "I am training for the Lisbon half marathon", event_type="goal")
    fact = c.add_semantic("Kefir is a fermented milk drink.", added_by="ana")
    c.add_semantic("Ms Okafor's office is on Elm Street.", added_by="ana")
    with FakeOllama() as fake:
        fake.queue_structured(
            {"memories": [{"text": "My divorce lawyer is Ms Okafor", "event_type": "fact"}]}
        )
        fake.queue_reply("Noted: Ms Okafor handles your divorce.")
        agent = _agent(c, settings, fake.url)
        try:
            told = agent.chat("ana", "s1", "My divorce lawyer is Ms Okafor and she is very good")
            assert agent.wait_for_background(timeout=60)
            fake.queue_reply("Well done on the run!")
            agent.chat("ana", "s1", "I ran ten km this morning")
            assert agent.wait_for_background(timeout=60)
        finally:
            agent.close()
    # A summary citing the topic's messages without naming it.
    maint = Maintenance(
        c.stores, c.embedder, settings.model_copy(update={"summary_min_messages": 2})
    )
    done = maint.summarise_session(
        "ana", "s1", lambda turns: "Ana shared some personal news and her running.", reason="idle"
    )
    assert done.status == "done"
    # A supersession whose earlier version does not name the topic, and a merge.
    old = c.add_episodic("ana", "Our court date is in May", event_type="milestone")
    c.add_episodic("ana", "Ms Okafor moved our court date to June", supersedes=old.id)
    for text in ("I trust Ms Okafor with my case", "With my case I trust Ms Okafor"):
        c.add_episodic("ana", text, event_type="preference")
    Maintenance.of(c).run(user_id="ana")
    assert len(Maintenance.of(c).merges("ana")) == 1
    c.record_procedure(
        "ana", "How many hours did Ms Okafor bill?", ["aggregate_metrics"],
        success_score=1.0, execution_time_ms=5.0,
    )  # fmt: skip
    c.search("ana", "what did my lawyer say")
    c.bookkeeping.drain()
    details = c.turn_details("ana", "s1")[told.turn_id]
    assert "extraction" in details  # the extraction log entry is kept beside the turn
    return {"keep": keep.id, "fact": fact.id, "old": old.id}


def test_a_forgotten_topic_leaves_no_trace_and_the_rest_stays(
    coordinator: MemoryCoordinator,
    chatted: dict[str, str],
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    c = coordinator
    assert _traces(redis_client, namespace)  # the topic is everywhere before
    forget = TopicForget.of(c)

    preview = forget.preview("ana", TOPIC)
    texts = [m.text for m in preview.matches]
    assert "My divorce lawyer is Ms Okafor and she is very good" in texts  # the message
    assert "Ms Okafor moved our court date to June" in texts
    assert "Ms Okafor's office is on Elm Street." in texts
    assert "How many hours did Ms Okafor bill?" in texts
    assert not any("marathon" in t or "ten km" in t for t in texts)

    report = forget.forget("ana", TOPIC)

    counts = report.counts
    assert counts["earlier_versions"] >= 2  # the superseded court date, the merged paraphrase
    assert counts["summaries"] == 1 and counts["merge_records"] == 1
    assert counts["facts"] == 1 and counts["procedures"] == 1
    assert counts["messages"] == 2  # the question and its answer (the turn)
    assert counts["extraction_log"] == 1 and counts["answer_details"] >= 1
    assert counts["cached_embeddings"] >= 1 and counts["recall_queries"] >= 1
    assert report.total == sum(counts.values())

    # No trace in a scan of every key (the user's, facts, the embedding cache, metrics)...
    assert _traces(redis_client, namespace) == []
    # ... nor in an export ...
    exported = json.dumps(c.export_user("ana")).lower()
    assert not [w for w in WORDS if w in exported]
    # ... nor in a search (superseded history included).
    hits = c.search("ana", TOPIC, k=50, where=SearchFilter(include_superseded=True))
    assert not [h for h in hits if any(w in h.text.lower() for w in WORDS)]
    with pytest.raises(Exception, match="No episodic memory"):
        c.get_memory("ana", "episodic", chatted["old"])

    # A preview after the forget leaves no trace either (its search is not kept in the cache).
    assert forget.preview("ana", TOPIC).matches == []
    assert _traces(redis_client, namespace) == []

    # Everything else stays.
    assert c.get_memory("ana", "episodic", chatted["keep"])["description"].startswith("I am")
    assert c.get_memory("ana", "semantic", chatted["fact"])
    messages = [m.content for m in c.recent_messages("ana", "s1")]
    assert messages == ["I ran ten km this morning", "Well done on the run!"]
    ran = [h.text for h in c.search("ana", "I ran ten km this morning")]
    assert "I ran ten km this morning" in ran


def test_unticked_matches_stay(
    coordinator: MemoryCoordinator, chatted: dict[str, str], redis_client: redis.Redis
) -> None:
    forget = TopicForget.of(coordinator)
    preview = forget.preview("ana", TOPIC)
    keep = [m for m in preview.matches if m.text == "Ms Okafor moved our court date to June"]
    report = forget.forget("ana", TOPIC, keep=[m.ref for m in keep])
    assert report.counts["memories"] >= 1
    kept_id = keep[0].ref.split(":", 1)[1]
    assert coordinator.get_memory("ana", "episodic", kept_id)["description"].startswith("Ms")
    # Its earlier version is its history: it stays with it.
    assert coordinator.get_memory("ana", "episodic", chatted["old"])
    remaining = [m.text for m in forget.preview("ana", TOPIC).matches]
    assert remaining == ["Ms Okafor moved our court date to June"]


def test_other_users_are_untouched(coordinator: MemoryCoordinator) -> None:
    coordinator.add_episodic("bob", "My divorce lawyer is Mr Adeyemi", event_type="fact")
    coordinator.add_episodic("ana", "My divorce lawyer is Ms Okafor", event_type="fact")
    TopicForget.of(coordinator).forget("ana", "divorce lawyer")
    assert TopicForget.of(coordinator).preview("ana", "divorce lawyer").matches == []
    bob = [m.text for m in TopicForget.of(coordinator).preview("bob", "divorce lawyer").matches]
    assert bob == ["My divorce lawyer is Mr Adeyemi"]


@pytest.mark.parametrize("query", ["", "   ", "my the", "2024"])
def test_a_topic_without_a_content_word_is_refused(
    coordinator: MemoryCoordinator, query: str
) -> None:
    with pytest.raises(InvalidInputError):
        TopicForget.of(coordinator).preview("ana", query)


def test_the_result_counts_in_the_previews_unit(coordinator: MemoryCoordinator) -> None:
    """The preview says "Forget N items"; the result says the same N first (the rows that went),
    then the records that came from them (issue 41: "9 memories" became "11 records")."""
    c, forget = coordinator, TopicForget.of(coordinator)
    c.add_episodic("units", "My lawyer Ms Okafor called", event_type="fact")
    c.add_episodic("units", "Ms Okafor sent the invoice", event_type="fact")
    c.store_interaction("units", "s1", "Did Ms Okafor call?", "Yes, on Monday.")
    matches = forget.preview("units", "Okafor").matches
    kept = [m.ref for m in matches if m.text == "Ms Okafor sent the invoice"]
    report = forget.forget("units", "Okafor", keep=kept)

    assert report.items == len(matches) - 1
    assert report.summary().startswith(f"{report.items} items and ")
    assert report.total > report.items  # the answer message and details followed


def test_a_text_with_only_part_of_the_topic_is_listed_as_partial(
    coordinator: MemoryCoordinator,
) -> None:
    """A code-naive walk forgot "trail mix" and lost "Sprained her ankle on a trail run": the
    preview lists such rows as holding part of the topic (the page leaves them unticked)."""
    c = coordinator
    c.add_episodic("maya", "I love trail mix after long runs", event_type="preference")
    c.add_episodic("maya", "Sprained her left ankle on a trail run", event_type="health_event")
    preview = TopicForget.of(c).preview("maya", "trail mix")
    partial = {m.text: m.partial for m in preview.matches}
    assert partial["I love trail mix after long runs"] is False
    assert partial["Sprained her left ankle on a trail run"] is True
    single = TopicForget.of(c).preview("maya", "trail")  # one word: nothing is partial
    assert not any(m.partial for m in single.matches) and len(single.matches) >= 2


def test_an_answers_record_goes_with_what_it_quotes_not_with_part_of_the_topic(
    coordinator: MemoryCoordinator,
) -> None:
    """A code-naive walk forgot "trail mix" and every answer lost its details: each record
    quoted "Loves running on trails along the river". A record goes when it names a forgotten
    memory or holds the whole topic; one holding part of it stays, as a partial row does."""
    c = coordinator
    mix = c.add_episodic("maya", "I love trail mix after long runs", event_type="preference")
    trails = c.add_episodic("maya", "Loves running on trails along the river")
    c.store_interaction("maya", "s1", "Where should I run on Sunday?", "By the river.")
    c.save_turn_details("maya", "s1", "t-trails", {"memory_block": f"- {trails.description}"})
    c.save_turn_details("maya", "s1", "t-mix", {"used": [mix.id]})  # names it by id only
    c.save_turn_details("maya", "s1", "t-said", {"reply": "Trail mix, then a nap."})
    forget = TopicForget.of(c)
    partial = [m.ref for m in forget.preview("maya", "trail mix").matches if m.partial]
    assert partial == [f"episodic:{trails.id}"]

    report = forget.forget("maya", "trail mix", keep=partial)  # as the page leaves them

    assert report.counts["answer_details"] == 2
    assert "t-trails" in c.turn_details("maya", "s1")
    assert not {"t-mix", "t-said"} & set(c.turn_details("maya", "s1"))
    assert c.get_memory("maya", "episodic", trails.id)
