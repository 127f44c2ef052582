"""The coordinator as the agent and the UI use it: recall, storing a turn, stats, purges,
metrics and health."""

from __future__ import annotations

import pytest
import redis
from redisvl.extensions.cache.embeddings import EmbeddingsCache

from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError, NotFoundError
from memory.models import BAND_HIGH, BAND_MODERATE
from memory.queries import RecallOptions
from memory.stores.procedural import normalize_query

U = "user-1"
OTHER = "user-2"
STAGES = {"embed", "short_term", "episodic", "semantic", "procedural", "hydrate", "total"}


@pytest.fixture
def populated(coordinator: MemoryCoordinator) -> MemoryCoordinator:
    coordinator.add_episodic(
        U, "I am training for a half marathon in September", event_type="goal", importance=0.8
    )
    coordinator.add_episodic(
        U, "My resting heart rate is usually around 52", importance=0.6, event_type="health_event"
    )
    coordinator.add_episodic(U, "I dislike coriander", event_type="preference")
    coordinator.add_message(U, "s1", "user", "I ran 10 km this morning")
    coordinator.add_message(U, "s1", "assistant", "Great run! How did your heart rate look?")
    for _ in range(2):
        coordinator.record_procedure(
            U,
            "What was my heart rate during my run?",
            ["get_heart_rate", "summarise"],
            success_score=1.0,
            execution_time_ms=80,
        )
    return coordinator


def test_retrieve_all_context_returns_every_type(populated: MemoryCoordinator) -> None:
    ctx = populated.retrieve_all_context(U, "s1", "Is my heart rate during runs normal?")
    assert "resting heart rate is usually around 52" in ctx.episodic[0].text
    assert any("heart rate" in h.text for h in ctx.semantic)
    assert ctx.procedural is not None
    assert ctx.procedural.tool_sequence == ["get_heart_rate", "summarise"]
    assert ctx.procedural.recommended is True
    assert [m.content for m in ctx.short_term] == [
        "I ran 10 km this morning",
        "Great run! How did your heart rate look?",
    ]
    assert ctx.hits == {
        "episodic": len(ctx.episodic),
        "semantic": len(ctx.semantic),
        "procedural": 1,
        "short_term": 2,
    }
    assert ctx.user_id == U and ctx.session_id == "s1"


def test_every_hit_says_why_it_was_recalled(populated: MemoryCoordinator) -> None:
    ctx = populated.retrieve_all_context(U, "s1", "Is my heart rate during runs normal?")
    for hit in [*ctx.episodic, *ctx.semantic]:
        p = hit.parts
        assert 0 <= p.vector <= 1 and 0 <= p.text <= 1
        assert 0 <= p.recency <= 1 and 0 <= p.importance <= 1
        assert p.final == hit.score >= populated.settings.recall_min_score
        assert hit.band == (
            "high"
            if hit.score >= BAND_HIGH
            else "moderate"
            if hit.score >= BAND_MODERATE
            else "low"
        )
    top = ctx.episodic[0]
    assert top.parts.vector > 0 and top.parts.text > 0  # found by meaning and by words
    scores = [h.score for h in ctx.episodic]
    assert scores == sorted(scores, reverse=True)


def test_unrelated_memories_stay_below_the_threshold(populated: MemoryCoordinator) -> None:
    ctx = populated.retrieve_all_context(U, "s1", "Is my heart rate during runs normal?")
    assert "I dislike coriander" not in [h.text for h in ctx.episodic]


def test_timings_cover_every_stage(populated: MemoryCoordinator) -> None:
    ctx = populated.retrieve_all_context(U, "s1", "heart rate")
    assert STAGES <= set(ctx.timings_ms)
    assert all(v >= 0 for v in ctx.timings_ms.values())
    assert ctx.timings_ms["total"] >= ctx.timings_ms["episodic"]


def test_include_flags_and_k(populated: MemoryCoordinator) -> None:
    ctx = populated.retrieve_all_context(
        U,
        "s1",
        "heart rate",
        RecallOptions(
            include_semantic=False, include_procedural=False, include_short_term=False, k_episodic=1
        ),
    )
    assert len(ctx.episodic) == 1
    assert ctx.semantic == [] and ctx.procedural is None and ctx.short_term == []
    assert {"semantic", "procedural", "short_term"}.isdisjoint(ctx.timings_ms)


def test_recall_needs_a_user_and_a_query(coordinator: MemoryCoordinator) -> None:
    for user, session, query in [("", "s", "q"), (U, "", "q"), (U, "s", " ")]:
        with pytest.raises(InvalidInputError):
            coordinator.retrieve_all_context(user, session, query)


def test_store_interaction_writes_every_type(coordinator: MemoryCoordinator) -> None:
    result = coordinator.store_interaction(
        U,
        "s1",
        "How many steps did I walk yesterday?",
        "You walked 8,400 steps.",
        tools_used=["get_activity"],
        execution_time_ms=250,
        success_score=1.0,
    )

    msgs = coordinator.recent_messages(U, "s1")
    assert [(m.role, m.content) for m in msgs] == [
        ("user", "How many steps did I walk yesterday?"),
        ("assistant", "You walked 8,400 steps."),
    ]
    assert result["short_term"] == [m.id for m in msgs]

    episode = coordinator.get_memory(U, "episodic", result["episodic"])
    assert episode["event_type"] == "interaction"
    assert episode["text"] == "How many steps did I walk yesterday?"
    assert "8,400 steps" in episode["context"]
    assert episode["session_id"] == "s1"

    pattern = coordinator.get_memory(U, "procedural", result["procedural"])
    assert pattern["tool_sequence"] == ["get_activity"]
    assert pattern["executions"] == 1 and pattern["avg_time_ms"] == 250
    ctx = coordinator.retrieve_all_context(U, "s2", "How many steps did I walk yesterday?")
    assert ctx.procedural is not None and ctx.procedural.match == "exact"
    assert result["episodic"] in {h.id for h in ctx.episodic}


def test_store_interaction_without_tools_or_episode(coordinator: MemoryCoordinator) -> None:
    result = coordinator.store_interaction(U, "s1", "Hello!", "Hi there.", store_episode=False)
    assert result["episodic"] is None and result["procedural"] is None
    assert len(coordinator.recent_messages(U, "s1")) == 2
    assert coordinator.list_memories(U, "episodic") == ([], 0)
    assert coordinator.list_memories(U, "procedural") == ([], 0)


@pytest.mark.parametrize(
    ("question", "tools", "score"),
    [
        ("   ", ["get_activity"], 1.0),  # empty question
        ("How far did I run?", ["get_activity"], 2.0),  # success score out of 0..1
        ("How far did I run?", [""], 1.0),  # a nameless tool
    ],
    ids=["empty-question", "bad-score", "bad-tool"],
)
def test_a_bad_interaction_writes_nothing(
    coordinator: MemoryCoordinator,
    snapshot,
    question: str,
    tools: list[str],
    score: float,
) -> None:
    before = snapshot()
    with pytest.raises(InvalidInputError):
        coordinator.store_interaction(
            U, "s1", question, "You ran 5 km.", tools_used=tools, success_score=score
        )
    assert coordinator.recent_messages(U, "s1") == []
    assert coordinator.list_memories(U, "episodic") == ([], 0)
    assert snapshot() == before


def test_stats(populated: MemoryCoordinator) -> None:
    stats = populated.get_memory_stats(U, "s1")
    assert stats["episodic"]["memory_count"] == 3
    assert stats["procedural"]["total_procedures"] == 1
    assert stats["procedural"]["total_executions"] == 2
    assert stats["procedural"]["recommended"] == 1
    assert stats["short_term"]["sessions"] == 1
    assert stats["short_term"]["message_count"] == 2
    assert "users" not in stats  # how many others use the store is not one user's business
    assert populated.get_memory_stats()["users"] == 1
    assert populated.list_users() == [U]


def test_clear_session_keeps_long_term_memory(populated: MemoryCoordinator) -> None:
    populated.add_message(U, "s2", "user", "other session")
    assert populated.clear_session_memories(U, "s1") == 2
    assert populated.recent_messages(U, "s1") == []
    assert [m.content for m in populated.recent_messages(U, "s2")] == ["other session"]
    assert populated.get_memory_stats(U)["episodic"]["memory_count"] == 3
    assert populated.retrieve_all_context(U, "s1", "heart rate").short_term == []


def test_clear_user_removes_everything_of_that_user_only(
    populated: MemoryCoordinator,
    redis_client: redis.Redis,
) -> None:
    fact = populated.add_semantic("Beetroot juice may improve endurance.", added_by=U)
    kept_fact = populated.add_semantic("Tart cherry juice may aid recovery.", added_by=OTHER)
    other = populated.add_episodic(OTHER, "I dislike coriander too")
    populated.add_message(OTHER, "s1", "user", "hello from the other user")
    populated.record_procedure(
        OTHER,
        "What was my heart rate during my run?",
        ["x"],
        success_score=1.0,
        execution_time_ms=1,
    )
    populated.retrieve_all_context(U, "s1", "private question about my knees")
    populated.retrieve_all_context(OTHER, "s1", "other user's own question")
    knowledge = populated.semantic.count() - 2

    removed = populated.clear_user_memories(U)
    assert removed == {"episodic": 3, "semantic": 1, "procedural": 1, "sessions": 1}
    assert populated.list_memories(U, "episodic") == ([], 0)
    assert populated.list_memories(U, "procedural") == ([], 0)
    assert populated.list_memories(U, "short_term") == ([], 0)
    assert populated.recent_messages(U, "s1") == []
    with pytest.raises(NotFoundError):
        populated.get_memory(U, "semantic", fact.id)
    ctx = populated.retrieve_all_context(U, "s1", "What was my heart rate during my run?")
    assert ctx.episodic == [] and ctx.procedural is None and ctx.short_term == []
    assert U not in populated.list_users()

    # The other user and the shared knowledge are untouched.
    assert [r["id"] for r in populated.list_memories(OTHER, "episodic")[0]] == [other.id]
    assert populated.list_memories(OTHER, "procedural")[1] == 1
    assert len(populated.recent_messages(OTHER, "s1")) == 1
    assert populated.get_memory(OTHER, "semantic", kept_fact.id)["added_by"] == OTHER
    assert populated.semantic.count() == knowledge + 1
    assert OTHER in populated.list_users()


def test_clear_user_drops_their_cached_query_embeddings(
    populated: MemoryCoordinator,
    redis_client: redis.Redis,
) -> None:
    cache = EmbeddingsCache(name=populated.keys.embedding_cache_name, redis_client=redis_client)
    model = populated.embedder.model_id
    mine = ["private question about my knees", "What was my heart rate during my run?"]
    for q in mine:
        populated.retrieve_all_context(U, "s1", q)
    populated.store_interaction(U, "s1", "Do I sleep enough?", "About 7 hours a night.")
    populated.retrieve_all_context(OTHER, "s1", "other user's own question")
    assert all(cache.exists(q, model) for q in [*mine, "Do I sleep enough?"])

    populated.clear_user_memories(U)
    assert [q for q in [*mine, "Do I sleep enough?"] if cache.exists(q, model)] == []
    assert cache.exists("other user's own question", model)


def test_latency_metrics_per_type_and_operation(populated: MemoryCoordinator) -> None:
    populated.metrics.flush()  # a store with no metrics yet
    populated.redis.delete(populated.keys.metrics_latency, populated.keys.metrics_counters)
    populated.retrieve_all_context(U, "s1", "heart rate during my run")
    populated.retrieve_all_context(
        U, "s-empty", "zzzz qqqq xxxx", RecallOptions(include_semantic=False)
    )
    populated.add_episodic(U, "New memory")
    samples = populated.metrics.latency_samples()
    by = {(s["type"], s["op"]) for s in samples}
    assert {
        ("episodic", "recall"),
        ("semantic", "recall"),
        ("procedural", "recall"),
        ("short_term", "recall"),
        ("all", "retrieve_all_context"),
        ("episodic", "add"),
    } <= by
    assert all(s["ms"] >= 0 and s["ts"] > 0 for s in samples)
    short_term = [s["hit"] for s in samples if (s["type"], s["op"]) == ("short_term", "recall")]
    assert short_term == [True, False]  # s1 has messages, s-empty has none
    procedural = [s["hit"] for s in samples if (s["type"], s["op"]) == ("procedural", "recall")]
    assert procedural == [True, False]


def test_embedding_cache_hits_and_misses_are_counted(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    embedder: object,
    settings,
) -> None:
    coordinator.metrics.flush()  # a store with no metrics yet
    coordinator.redis.delete(coordinator.keys.metrics_latency, coordinator.keys.metrics_counters)
    coordinator.retrieve_all_context(U, "s1", "How did I sleep?")
    coordinator.retrieve_all_context(U, "s1", "How did I sleep?")
    counters = coordinator.metrics.counters()
    assert counters.get("embed_cache_miss") == 1
    assert counters.get("embed_cache_local_hit") == 1

    fresh = MemoryCoordinator(redis_client, embedder, settings)  # another process, same Redis
    try:
        fresh.retrieve_all_context(U, "s1", "How did I sleep?")
        assert fresh.metrics.counters().get("embed_cache_redis_hit") == 1
    finally:
        fresh.close()
    embeds = [s for s in coordinator.metrics.latency_samples() if s["type"] == "embedding"]
    assert [s["hit"] for s in embeds][:2] == [False, True]


def test_health(coordinator: MemoryCoordinator) -> None:
    report = coordinator.health()
    assert report["ok"] is True
    checks = report["checks"]
    assert checks["redis"]["ok"] and checks["modules"]["ok"]
    assert {"search", "ReJSON"} <= set(checks["modules"]["loaded"])
    for name in ("index_episodic", "index_semantic", "index_procedural"):
        assert checks[name]["ok"], name
    assert checks["embedder"]["ok"] and checks["embedder"]["dims"] == 384
    assert checks["embedder"]["model"] == coordinator.embedder.model_id


def test_health_names_a_missing_index_and_a_failing_embedder_without_raising(
    coordinator: MemoryCoordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    coordinator.stores.procedural.index.delete(drop=False)

    def broken(text: str) -> object:
        raise RuntimeError("model file unreadable")

    monkeypatch.setattr(coordinator.embedder, "embed", broken)
    report = coordinator.health()
    assert report["ok"] is False
    checks = report["checks"]
    assert checks["index_procedural"]["ok"] is False and checks["index_procedural"]["error"]
    assert checks["index_episodic"]["ok"] and checks["redis"]["ok"]
    assert checks["embedder"] == {"ok": False, "error": "model file unreadable"}


def test_a_failed_tool_lesson_does_not_unsave_the_exchange(
    coordinator: MemoryCoordinator, redis_client: redis.Redis
) -> None:
    """store_interaction commits the messages first; when only recording the tool sequence
    fails afterwards, the exchange is reported stored (the agent would say "not saved")."""
    question = "How far did I run this week?"
    key = coordinator.procedural.key(U, normalize_query(question))
    redis_client.set(key, "not a hash")  # recording the pattern now fails (WRONGTYPE)
    result = coordinator.store_interaction(U, "s1", question, "12 km.", tools_used=["search"])
    assert result["procedural"] is None
    assert [m.content for m in coordinator.recent_messages(U, "s1")] == [question, "12 km."]
