"""Isolation between users whose ids look like query syntax, separators or each other.

Each user gets one memory of every kind; every read and write path must show a user exactly
their own memories, whatever characters their id holds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError, NotFoundError
from memory.queries import ListQuery, RecallOptions, SearchFilter

USERS = [
    "a|b",
    "a",
    "b",
    "x}",
    "x",
    "*",
    "-1",
    "1",
    "user with spaces",
    "user",
    "ü用户",
    "a,b",
    "@user_id:{x}",
    "user_id",
    "Alice",
    "alice",
    "a ",  # accepted by check_id, so a distinct user
]


def report(findings: list) -> str:
    return f"{len(findings)} finding(s):\n" + "\n".join(repr(f) for f in findings)


@dataclass
class Owned:
    episodic: str
    message: str
    procedure: str
    fact: str
    tool: str


@pytest.fixture
def crowd(coordinator: MemoryCoordinator) -> dict[str, Owned]:
    owned = {}
    for i, user in enumerate(USERS):
        mem = coordinator.add_episodic(user, f"Diary entry {i}: I like green tea with honey")
        msg = coordinator.add_message(user, "s", "user", f"Message {i} about green tea")
        proc = coordinator.record_procedure(
            user, "What tea do I like?", [f"tool_{i}"], success_score=1.0, execution_time_ms=1
        )
        fact = coordinator.add_semantic(f"Fact {i}: green tea contains caffeine", added_by=user)
        owned[user] = Owned(mem.id, msg.id, proc.id, fact.id, f"tool_{i}")
    return owned


def test_recall_shows_only_own_memories(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned]
) -> None:
    leaks = []
    for user, mine in crowd.items():
        for query in ("What tea do I like?", "Which kind of tea do I enjoy?"):
            ctx = coordinator.retrieve_all_context(user, "s", query, RecallOptions(k_episodic=50))
            if {h.id for h in ctx.episodic} != {mine.episodic}:
                leaks.append((user, "episodic", [h.text for h in ctx.episodic]))
            if [m.id for m in ctx.short_term] != [mine.message]:
                leaks.append((user, "short_term", [m.content for m in ctx.short_term]))
            if ctx.procedural is None or ctx.procedural.tool_sequence != [mine.tool]:
                leaks.append((user, "procedural", query, ctx.procedural))
    assert not leaks, report(leaks)


def test_search_shows_only_own_memories(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned]
) -> None:
    leaks = []
    for user, mine in crowd.items():
        hits = coordinator.search(user, "green tea honey", k=50, where=SearchFilter(min_score=0))
        if {h.id for h in hits} != {mine.episodic}:
            leaks.append((user, [h.text for h in hits]))
    assert not leaks, report(leaks)


def test_lists_show_only_own_memories(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned]
) -> None:
    leaks = []
    for user, mine in crowd.items():
        for mtype, expected in (
            ("episodic", mine.episodic),
            ("procedural", mine.procedure),
            ("short_term", mine.message),
        ):
            rows, total = coordinator.list_memories(user, mtype, ListQuery(page_size=100))
            if [r["id"] for r in rows] != [expected] or total != 1:
                leaks.append((user, mtype, total, [r["text"] for r in rows]))
        if coordinator.short_term.sessions(user) != ["s"]:
            leaks.append((user, "sessions", coordinator.short_term.sessions(user)))
    assert not leaks, report(leaks)


def test_nobody_can_get_or_delete_another_users_memory(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned]
) -> None:
    allowed = []
    for user in USERS:
        for other, theirs in crowd.items():
            if other == user:
                continue
            for mtype, mid in (
                ("episodic", theirs.episodic),
                ("short_term", theirs.message),
                ("semantic", theirs.fact),
            ):
                if mtype != "semantic":  # shared facts are readable, not deletable
                    try:
                        coordinator.get_memory(user, mtype, mid)
                        allowed.append((user, "get", other, mtype))
                    except NotFoundError:
                        pass
                try:
                    coordinator.delete_memory(user, mtype, mid)
                    allowed.append((user, "delete", other, mtype))
                except NotFoundError:
                    pass
            # A pattern id is the hash of the normalised question, the same for everyone who
            # asked it: asking for it gives the caller's own pattern, never the other's.
            got = coordinator.get_memory(user, "procedural", theirs.procedure)
            if got["tool_sequence"] != [crowd[user].tool] or got["user_id"] != user:
                allowed.append((user, "get", other, "procedural"))
    assert not allowed, report(allowed)
    for user, mine in crowd.items():  # everything is still there
        assert coordinator.get_memory(user, "episodic", mine.episodic)
        assert coordinator.get_memory(user, "procedural", mine.procedure)
        assert coordinator.get_memory(user, "short_term", mine.message)
        assert coordinator.get_memory(user, "semantic", mine.fact)["added_by"] == user


def test_export_holds_only_own_memories(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned]
) -> None:
    wrong = []
    for user, mine in crowd.items():
        try:
            data = coordinator.export_user(user)
        except Exception as e:  # noqa: BLE001 - any failure is a finding here
            wrong.append((user, f"{type(e).__name__}: {e}"))
            continue
        got = {
            "episodic": [m["id"] for m in data["episodic"]],
            "procedural": [p["id"] for p in data["procedural"]],
            "semantic": [f["id"] for f in data["semantic"]],
            "short_term": [m["id"] for msgs in data["short_term"].values() for m in msgs],
        }
        expected = {
            "episodic": [mine.episodic],
            "procedural": [mine.procedure],
            "semantic": [mine.fact],
            "short_term": [mine.message],
        }
        if got != expected or data["user_id"] != user:
            wrong.append((user, got))
    assert not wrong, report(wrong)


def test_purging_one_user_leaves_every_other_user_intact(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned]
) -> None:
    damage = []
    remaining = dict(crowd)
    for user in USERS:
        coordinator.clear_user_memories(user)
        del remaining[user]
        for other, theirs in remaining.items():
            for mtype, mid in (
                ("episodic", theirs.episodic),
                ("procedural", theirs.procedure),
                ("short_term", theirs.message),
                ("semantic", theirs.fact),
            ):
                try:
                    coordinator.get_memory(other, mtype, mid)
                except NotFoundError:
                    damage.append((f"purge of {user!r}", f"removed {other!r}'s {mtype}"))
        if damage:
            break
    assert not damage, report(damage)


@pytest.mark.parametrize("user", ["", "   ", "\t"])
def test_an_empty_user_id_is_refused_everywhere(
    coordinator: MemoryCoordinator, crowd: dict[str, Owned], user: str
) -> None:
    calls = [
        lambda: coordinator.retrieve_all_context(user, "s", "green tea"),
        lambda: coordinator.search(user, "green tea"),
        lambda: coordinator.list_memories(user, "episodic"),
        lambda: coordinator.list_memories(user, "procedural"),
        lambda: coordinator.list_memories(user, "short_term"),
        lambda: coordinator.get_memory(user, "episodic", crowd["a"].episodic),
        lambda: coordinator.delete_memory(user, "episodic", crowd["a"].episodic),
        lambda: coordinator.add_episodic(user, "I like tea"),
        lambda: coordinator.add_message(user, "s", "user", "hi"),
        lambda: coordinator.record_procedure(
            user, "q", ["t"], success_score=1.0, execution_time_ms=1
        ),
        lambda: coordinator.export_user(user),
        lambda: coordinator.clear_user_memories(user),
        lambda: coordinator.clear_session_memories(user, "s"),
    ]
    for call in calls:
        with pytest.raises(InvalidInputError, match="user id"):
            call()
    assert coordinator.get_memory("a", "episodic", crowd["a"].episodic)
    assert coordinator.get_memory_stats()["users"] == len(USERS)
