"""Search shown to people on the demo persona: a clear match is at least moderate, the
search stops at what is relevant, and a question about nothing stored shows nothing; the
prompt's recall keeps its weaker candidates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agent.replies import answer_hits
from memory.coordinator import MemoryCoordinator
from memory.demo import load_demo
from memory.models import SHOWN_FLOOR, EventType, RecallHit, shown_hits

U = "maya"
ALLERGY = "I'm allergic to peanuts"
SISTER = "My sister Jana lives in Brno"


@pytest.fixture
def persona(coordinator: MemoryCoordinator) -> MemoryCoordinator:
    """The demo persona with an allergy and a sister of her own (the demo has neither)."""
    load_demo(coordinator, U)
    coordinator.add_episodic(U, ALLERGY, event_type=EventType.HEALTH_EVENT)
    coordinator.add_episodic(U, SISTER, event_type=EventType.FACT)
    coordinator.bookkeeping.drain()
    return coordinator


def searched(coord: MemoryCoordinator, query: str) -> tuple[list[RecallHit], int]:
    """Both types, as the sidebar searches them."""
    hits = [h for t in ("episodic", "semantic") for h in coord.search(U, query, t, k=10)]
    return shown_hits(hits)


@pytest.mark.parametrize(
    ("query", "expected"), [("nut allergy", ALLERGY), ("where does my sister live", SISTER)]
)
def test_a_clear_match_is_shown_alone_and_at_least_moderate(
    persona: MemoryCoordinator, query: str, expected: str
) -> None:
    kept, weaker = searched(persona, query)
    assert [h.text for h in kept] == [expected], [(h.text, h.score) for h in kept]
    assert kept[0].band in ("moderate", "high")
    assert weaker > 0  # there was noise below the floor, and it is not shown


def test_what_she_cannot_eat_shows_her_allergy_at_least_moderate(
    persona: MemoryCoordinator,
) -> None:
    """No shared word: it is found as one of her stated constraints (memory.recall.statements)."""
    kept, _ = searched(persona, "what can't I eat")
    allergy = [h for h in kept if h.text == ALLERGY]
    assert allergy and allergy[0].band in ("moderate", "high"), [(h.text, h.score) for h in kept]


@pytest.mark.parametrize(
    "query", ["swimming pool opening hours", "What is my blood type?", "Who cuts my hair?"]
)
def test_a_question_about_nothing_she_told_shows_nothing(
    persona: MemoryCoordinator, query: str
) -> None:
    kept, weaker = searched(persona, query)
    assert kept == [], [(h.text, h.score) for h in kept]
    assert weaker > 0  # there were candidates, none relevant enough to show


def test_search_finds_a_memory_by_its_tag(persona: MemoryCoordinator) -> None:
    """Tags count as words of the memory: "swimming" finds the pool she tagged so, whose
    text never says the word."""
    pool = persona.add_episodic(U, "Pool on Mondays", event_type=EventType.FACT, tags=["swimming"])
    persona.bookkeeping.drain()
    kept, _ = searched(persona, "swimming")
    assert pool.id in [h.id for h in kept], [(h.text, h.score) for h in kept]


def test_which_days_she_swims_is_answered_without_a_model(persona: MemoryCoordinator) -> None:
    """ "swim" and "swimming" are one word to recall's word score: the memory-only answer
    lists her cross-training days."""
    ctx = persona.retrieve_all_context(U, "s-check", "Which days do I swim?")
    listed = [h.text for h in answer_hits(ctx, [])]
    assert any(t.startswith("Cross-training while") for t in listed), listed


def test_the_prompt_recall_is_not_floored(persona: MemoryCoordinator) -> None:
    ctx = persona.retrieve_all_context(U, "s-check", "nut allergy")
    assert ALLERGY in [h.text for h in ctx.episodic]
    # the facts below the floor still reach the prompt's candidates (the floor is for people)
    assert any(h.score < SHOWN_FLOOR for h in ctx.semantic), [h.score for h in ctx.semantic]


def test_cli_search_stops_at_what_is_relevant(
    cli: Callable[..., Any], persona: MemoryCoordinator
) -> None:
    out = cli("search", "--user", U, "--query", "nut allergy", "--type", "semantic").stdout
    assert out.startswith("no relevant memories (")  # only the hint: every fact is below
    found = cli("search", "--user", U, "--query", "nut allergy").stdout.splitlines()
    assert len(found) in (1, 2) and ALLERGY in found[0], found
    assert " moderate " in found[0] or " high " in found[0]
    assert all(line.startswith("no more relevant memories") for line in found[1:]), found
    nothing = cli("search", "--user", U, "--query", "swimming pool opening hours").stdout
    assert nothing.startswith("no relevant memories ("), nothing
