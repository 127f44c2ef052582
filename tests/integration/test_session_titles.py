"""Chat sessions in Redis: titles per user and session (set once from the first message,
renamed, cleared with their session, purged with their user), and a stopped answer kept."""

from __future__ import annotations

import pytest

from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError
from ui.stopping import StreamGuard


def test_titles_are_kept_per_user_and_go_with_their_session(
    coordinator: MemoryCoordinator,
) -> None:
    coordinator.store_interaction("ana", "s1", "Plan my week", "Sure.", store_episode=False)
    assert coordinator.set_session_title("ana", "s1", "Plan my week", only_if_missing=True)
    # the first message names it once; a later one does not rename it
    assert not coordinator.set_session_title("ana", "s1", "Other", only_if_missing=True)
    assert coordinator.set_session_title("bo", "s1", "Bo's chat")
    assert coordinator.short_term.titles("ana") == {"s1": "Plan my week"}
    assert coordinator.set_session_title("ana", "s1", "  Week\nplan ")
    assert coordinator.short_term.titles("ana") == {"s1": "Week plan"}
    with pytest.raises(InvalidInputError):
        coordinator.set_session_title("ana", "s1", "   ")

    coordinator.clear_session_memories("ana", "s1")
    assert coordinator.short_term.titles("ana") == {}
    coordinator.clear_user_memories("bo")
    assert coordinator.short_term.titles("bo") == {}


def test_a_title_expires_with_its_session(coordinator: MemoryCoordinator) -> None:
    coordinator.store_interaction("ana", "s1", "Plan my week", "Sure.", store_episode=False)
    coordinator.set_session_title("ana", "s1", "Plan my week", only_if_missing=True)
    r, keys = coordinator.redis, coordinator.keys
    titles = keys.session_titles("ana")

    def field_ttl() -> int:
        return int(r.httl(titles, "s1")[0])

    # a field TTL like the messages' own (not the whole hash: other chats keep theirs)
    assert 0 < field_ttl() <= r.ttl(keys.session("ana", "s1"))
    r.hexpire(titles, 60, "s1")  # as if time had passed; a new message refreshes it
    coordinator.store_interaction("ana", "s1", "And my meals?", "Sure.", store_episode=False)
    assert field_ttl() > 60


class _Ev:
    def __init__(self, kind: str, text: str = "", mode: str | None = None) -> None:
        self.kind, self.text, self.mode = kind, text, mode


def test_a_stopped_answer_is_kept_with_its_mark_and_flag(coordinator: MemoryCoordinator) -> None:
    guard = StreamGuard(coordinator, "ana", "s1", "Plan my week")
    events = guard.watch(
        iter(
            [
                _Ev("status", mode="llm"),
                _Ev("token", text="Monday: easy run. "),
                _Ev("token", text="Tuesday: "),
                _Ev("token", text="never shown"),
            ]
        )
    )
    next(events), next(events), next(events)
    events.close()  # the page stopped reading: ⏹ Stop
    guard.keep_partial()
    user, answer = coordinator.recent_messages("ana", "s1")
    assert (user.content, answer.content) == (
        "Plan my week",
        "Monday: easy run. Tuesday: [stopped]",
    )
    assert answer.metadata == {"stopped": True} and guard.stopped
    # short-term only: no episode of an exchange that never finished
    assert coordinator.list_memories("ana", "episodic")[1] == 0


def test_a_memory_only_turn_stored_by_the_agent_is_not_stored_twice(
    coordinator: MemoryCoordinator,
) -> None:
    guard = StreamGuard(coordinator, "ana", "s1", "Hello")
    events = guard.watch(
        iter([_Ev("status", mode="memory-only"), _Ev("token", text="I saved your message.")])
    )
    next(events), next(events)
    events.close()
    guard.keep_partial()
    assert coordinator.recent_messages("ana", "s1") == [] and not guard.stopped
