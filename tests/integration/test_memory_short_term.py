"""Short-term memory: per-session messages, bounded, expiring, last N, token-budget trimming."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError, NotFoundError
from memory.models import now_ms
from memory.queries import ListQuery, RecallOptions
from memory.tokens import message_tokens

U = "user-1"


@pytest.fixture
def small(
    redis_client: redis.Redis, embedder: object, settings: Settings
) -> Iterator[MemoryCoordinator]:
    """A coordinator with a 5-message window and a 100-token context (80-token budget)."""
    coord = MemoryCoordinator(
        redis_client,
        embedder,
        settings.model_copy(
            update={
                "short_term_max_messages": 5,
                "short_term_recall_tokens": 80,
                "short_term_ttl_s": 600,
            }
        ),
    )
    yield coord
    coord.close()


def test_messages_are_kept_in_order(coordinator: MemoryCoordinator) -> None:
    a = coordinator.add_message(U, "s1", "user", "Hi, I am Ada")
    b = coordinator.add_message(U, "s1", "assistant", "Hello Ada!")
    msgs = coordinator.recent_messages(U, "s1")
    assert [(m.id, m.role, m.content) for m in msgs] == [
        (a.id, "user", "Hi, I am Ada"),
        (b.id, "assistant", "Hello Ada!"),
    ]
    assert msgs[0].timestamp <= msgs[1].timestamp
    assert coordinator.recent_messages(U, "other-session") == []
    assert coordinator.short_term.sessions(U) == ["s1"]


def test_the_session_is_bounded(small: MemoryCoordinator) -> None:
    for i in range(8):
        small.add_message(U, "s1", "user", f"message {i}")
    assert [m.content for m in small.recent_messages(U, "s1", 50)] == [
        f"message {i}" for i in range(3, 8)
    ]
    assert small.get_memory_stats(U, "s1")["short_term"]["message_count"] == 5


def test_the_session_expires(small: MemoryCoordinator, redis_client: redis.Redis) -> None:
    small.add_message(U, "s1", "user", "hello")
    ttl = redis_client.ttl(small.keys.session(U, "s1"))
    assert 0 < ttl <= 600
    assert 0 < small.get_memory_stats(U, "s1")["short_term"]["ttl_seconds"] <= 600


def test_last_n(coordinator: MemoryCoordinator) -> None:
    for i in range(6):
        coordinator.add_message(U, "s1", "user", f"message {i}")
    assert [m.content for m in coordinator.recent_messages(U, "s1", 2)] == [
        "message 4",
        "message 5",
    ]
    ctx = coordinator.retrieve_all_context(
        U, "s1", "what did I say?", RecallOptions(k_short_term=3)
    )
    assert [m.content for m in ctx.short_term] == ["message 3", "message 4", "message 5"]


def test_recall_trims_to_the_token_budget_oldest_first(small: MemoryCoordinator) -> None:
    for i in range(5):
        small.add_message(U, "s1", "user", f"{i} " + "word " * 14)  # 18 + 4 tokens each
    ctx = small.retrieve_all_context(U, "s1", "what did I say?")
    kept = [m.content[0] for m in ctx.short_term]
    assert kept == ["2", "3", "4"]  # the newest that fit 80 tokens
    assert sum(message_tokens(m.content) for m in ctx.short_term) <= 80


def test_delete_a_message_and_clear_a_session(coordinator: MemoryCoordinator) -> None:
    keep = coordinator.add_message(U, "s1", "user", "keep me")
    drop = coordinator.add_message(U, "s1", "user", "drop me")
    coordinator.add_message(U, "s2", "user", "another session")
    assert coordinator.get_memory(U, "short_term", drop.id)["text"] == "drop me"
    coordinator.delete_memory(U, "short_term", drop.id)
    assert [m.id for m in coordinator.recent_messages(U, "s1")] == [keep.id]
    with pytest.raises(NotFoundError):
        coordinator.delete_memory(U, "short_term", drop.id)

    assert coordinator.clear_session_memories(U, "s1") == 1
    assert coordinator.recent_messages(U, "s1") == []
    assert [m.content for m in coordinator.recent_messages(U, "s2")] == ["another session"]
    assert coordinator.short_term.sessions(U) == ["s2"]


def test_list_short_term_across_sessions(coordinator: MemoryCoordinator) -> None:
    coordinator.add_message(U, "s1", "user", "first")
    stamped = now_ms()
    while now_ms() <= stamped:  # the next message gets a later millisecond timestamp
        time.sleep(0.001)
    coordinator.add_message(U, "s2", "user", "second")
    rows, total = coordinator.list_memories(U, "short_term")
    assert total == 2
    assert [(r["text"], r["session_id"]) for r in rows] == [("second", "s2"), ("first", "s1")]
    rows, total = coordinator.list_memories(U, "short_term", ListQuery(session_id="s1"))
    assert (total, [r["text"] for r in rows]) == (1, ["first"])


def test_bad_messages_are_refused(coordinator: MemoryCoordinator) -> None:
    with pytest.raises(InvalidInputError, match="role"):
        coordinator.add_message(U, "s1", "narrator", "Once upon a time")
    with pytest.raises(InvalidInputError, match="empty"):
        coordinator.add_message(U, "s1", "user", "   ")
    with pytest.raises(InvalidInputError, match="session id"):
        coordinator.add_message(U, "", "user", "hello")
    with pytest.raises(InvalidInputError, match="edited"):
        m = coordinator.add_message(U, "s1", "user", "hello")
        coordinator.update_memory(U, "short_term", m.id, text="changed")
    assert [m.content for m in coordinator.recent_messages(U, "s1")] == ["hello"]
