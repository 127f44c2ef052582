"""Procedural memory: learned tool sequences, exact and similar lookup, confidence over runs."""

from __future__ import annotations

import pytest

from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError, NotFoundError
from memory.queries import ListQuery, RecallOptions
from memory.stores.procedural import SIMILAR_MIN

U = "user-1"
Q = "How many steps did I walk on 3 May?"
TOOLS = ["get_activity", "summarise"]


def suggestion(coordinator: MemoryCoordinator, query: str, user: str = U):
    ctx = coordinator.retrieve_all_context(
        user,
        "s",
        query,
        RecallOptions(include_episodic=False, include_semantic=False, include_short_term=False),
    )
    return ctx.procedural


def test_a_new_pattern_is_not_yet_recommended(coordinator: MemoryCoordinator) -> None:
    p = coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=120)
    assert p.executions == 1 and p.successes == 1 and p.failures == 0
    assert p.confidence == pytest.approx(2 / 3, abs=1e-3)
    assert p.recommended is False
    assert p.tool_sequence == TOOLS
    assert p.avg_time_ms == 120


def test_confidence_rises_with_successes_and_falls_with_failures(
    coordinator: MemoryCoordinator,
) -> None:
    seen = [
        coordinator.record_procedure(
            U, Q, TOOLS, success_score=1.0, execution_time_ms=100
        ).confidence
        for _ in range(3)
    ]
    assert seen[0] < seen[1] < seen[2] < 1.0
    stored = coordinator.get_memory(
        U, "procedural", coordinator.list_memories(U, "procedural")[0][0]["id"]
    )
    assert stored["recommended"] is True
    assert stored["executions"] == 3

    failed = coordinator.record_procedure(U, Q, TOOLS, success_score=0.0, execution_time_ms=300)
    assert failed.confidence < seen[2]
    assert failed.failures == 1 and failed.executions == 4
    assert failed.avg_time_ms == pytest.approx(150)
    again = coordinator.record_procedure(U, Q, TOOLS, success_score=0.0, execution_time_ms=100)
    assert again.confidence < failed.confidence
    assert again.recommended is False  # 3 successes, 2 failures: 4/7 < 0.7


def test_the_best_sequence_wins_and_each_has_its_statistics(
    coordinator: MemoryCoordinator,
) -> None:
    coordinator.record_procedure(U, Q, ["search_web"], success_score=0.0, execution_time_ms=900)
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    p = coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    assert p.tool_sequence == TOOLS
    assert p.executions == 3
    stats = {s.tools[0]: s for s in p.sequences.values()}
    assert stats["search_web"].failures == 1 and stats["search_web"].executions == 1
    assert stats["get_activity"].successes == 2 and stats["get_activity"].avg_time_ms == 100


def test_exact_lookup_of_the_same_question(coordinator: MemoryCoordinator) -> None:
    assert suggestion(coordinator, Q) is None
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    s = suggestion(coordinator, "how many steps did I walk on 14 may")  # same normalised form
    assert s is not None
    assert s.match == "exact" and s.similarity == 1.0
    assert s.tool_sequence == TOOLS
    assert s.recommended is True and s.confidence == pytest.approx(0.75)
    assert s.executions == 2


def test_lookup_of_a_similar_question(coordinator: MemoryCoordinator) -> None:
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    s = suggestion(coordinator, "How many steps did I take on the 3rd of May?")
    assert s is not None
    assert s.match == "similar"
    assert SIMILAR_MIN <= s.similarity < 1.0
    assert s.query_pattern == Q and s.tool_sequence == TOOLS
    assert suggestion(coordinator, "What is my favourite pizza topping?") is None


def test_similar_lookup_follows_the_confidence(coordinator: MemoryCoordinator) -> None:
    similar = "How many steps did I take on the 3rd of May?"
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    first = suggestion(coordinator, similar)
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    risen = suggestion(coordinator, similar)
    coordinator.record_procedure(U, Q, TOOLS, success_score=0.0, execution_time_ms=100)
    fallen = suggestion(coordinator, similar)
    assert first.confidence < risen.confidence
    assert fallen.confidence < risen.confidence
    assert (first.recommended, risen.recommended, fallen.recommended) == (False, True, False)


def test_rescoring_the_last_run(coordinator: MemoryCoordinator) -> None:
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    p = coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    coordinator.rescore_last_procedure(U, Q, TOOLS, 0.0)  # the user corrected the answer
    s = suggestion(coordinator, Q)
    assert s.confidence < p.confidence
    assert s.recommended is False


def test_list_get_pin_delete(coordinator: MemoryCoordinator) -> None:
    coordinator.record_procedure(U, Q, TOOLS, success_score=1.0, execution_time_ms=100)
    coordinator.record_procedure(
        U, "How did I sleep last night?", ["get_sleep"], success_score=1.0, execution_time_ms=50
    )
    rows, total = coordinator.list_memories(
        U, "procedural", ListQuery(sort_by="created_at", descending=False)
    )
    assert total == 2
    assert [r["text"] for r in rows] == [Q, "How did I sleep last night?"]
    pid = rows[0]["id"]
    got = coordinator.get_memory(U, "procedural", pid)
    assert (got["text"], got["tool_sequence"]) == (Q, TOOLS)

    coordinator.update_memory(U, "procedural", pid, pinned=True)
    assert coordinator.get_memory(U, "procedural", pid)["pinned"] is True
    with pytest.raises(InvalidInputError, match="learned"):
        coordinator.update_memory(U, "procedural", pid, tool_sequence=["x"])

    coordinator.delete_memory(U, "procedural", pid)
    with pytest.raises(NotFoundError):
        coordinator.get_memory(U, "procedural", pid)
    assert suggestion(coordinator, Q) is None or suggestion(coordinator, Q).query_pattern != Q


def test_bad_procedures_are_refused(coordinator: MemoryCoordinator) -> None:
    for tools, score in [([], 1.0), ([""], 1.0), (TOOLS, 1.5), (TOOLS, -0.1)]:
        with pytest.raises(InvalidInputError):
            coordinator.record_procedure(U, Q, tools, success_score=score, execution_time_ms=1)
    with pytest.raises(InvalidInputError):
        coordinator.record_procedure(U, "  ", TOOLS, success_score=1.0, execution_time_ms=1)
    assert coordinator.list_memories(U, "procedural") == ([], 0)
