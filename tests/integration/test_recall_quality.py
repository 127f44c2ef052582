"""What a new user notices first: recall finds what they told it, by meaning, not by one word."""

from __future__ import annotations

from memory.coordinator import MemoryCoordinator
from memory.models import EventType

U = "new-user"

# The five memories of issue 9: a new user's preferences, goals and a health note.
FIVE = [
    ("I prefer morning workouts before 7am", EventType.PREFERENCE),
    ("I like concise answers in bullet points", EventType.PREFERENCE),
    ("My goal is to bring my BMI under 25 by summer", EventType.GOAL),
    ("My left knee hurts after long runs", EventType.HEALTH_EVENT),
    ("I signed up for a half marathon in October", EventType.GOAL),
]


def _five(coord: MemoryCoordinator) -> None:
    for text, kind in FIVE:
        coord.add_episodic(U, text, event_type=kind)


def test_when_do_i_like_to_exercise_finds_the_morning_workouts(
    coordinator: MemoryCoordinator,
) -> None:
    _five(coordinator)
    ctx = coordinator.retrieve_all_context(U, "s1", "When do I like to exercise?")
    top = ctx.episodic[0]
    assert top.text == "I prefer morning workouts before 7am"
    assert top.band in ("moderate", "high")
    # the memory that only shares the word "like" is ranked below and banded lower
    bullets = [h for h in ctx.episodic if "bullet" in h.text]
    assert all(h.score < top.score and h.band == "low" for h in bullets)


def test_a_common_shared_word_does_not_outrank_meaning(coordinator: MemoryCoordinator) -> None:
    _five(coordinator)
    hits = coordinator.search(U, "What do I like to do about my sore joints?", k=5)
    assert hits[0].text == "My left knee hurts after long runs"


def test_every_recalled_hit_shows_the_parts_of_its_score(coordinator: MemoryCoordinator) -> None:
    _five(coordinator)
    for hit in coordinator.search(U, "half marathon training", k=5):
        assert hit.parts.final == hit.score
        assert 0 <= hit.parts.vector <= 1 and 0 <= hit.parts.text <= 1
    top = coordinator.search(U, "half marathon training", k=1)[0]
    assert "marathon" in top.text and top.parts.text > 0
