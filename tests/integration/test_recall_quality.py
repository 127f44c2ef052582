"""What a new user notices first: recall finds what they told it, by meaning, not by one word."""

from __future__ import annotations

import pytest

from memory.coordinator import MemoryCoordinator
from memory.models import EventType
from memory.recall import scoring

U = "new-user"

# Five memories of a new user: preferences, goals and a health note.
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
    coord.bookkeeping.drain()  # the statement classifier is fitted there, at start


def test_when_do_i_like_to_exercise_finds_the_morning_workouts(
    coordinator: MemoryCoordinator,
) -> None:
    _five(coordinator)
    ctx = coordinator.retrieve_all_context(U, "s1", "When do I like to exercise?")
    top = ctx.episodic[0]
    assert top.text == "I prefer morning workouts before 7am"
    assert top.band in ("moderate", "high")
    # the memory that only shares the word "like" (a preference too) is ranked below and
    # banded lower
    order = ["low", "moderate", "high"]
    bullets = [h for h in ctx.episodic if "bullet" in h.text]
    assert all(h.score < top.score and order.index(h.band) < order.index(top.band) for h in bullets)


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


# Logged chat of a user: one standing constraint among plans and events on the same subject.
CHAT = [
    "I'm always on the lookout for nice places to eat when I travel.",
    "We're flying to Lisbon in May, first time there.",
    "I'm vegetarian, so no meat or fish for me.",
    "How do I convert euros to dollars quickly?",
    "Can you find me a cheap flight to Lisbon?",
    "I had a great pasta dinner yesterday.",
    "I'm cooking for six people on Saturday.",
]
VEGETARIAN = "I'm vegetarian, so no meat or fish for me."


def _chat(coord: MemoryCoordinator) -> None:
    for text in CHAT:
        coord.add_episodic(U, text, event_type=EventType.INTERACTION)
    coord.bookkeeping.drain()  # the statement classifier is fitted there, at start


def test_a_request_for_advice_recalls_the_stated_diet(
    coordinator: MemoryCoordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    _chat(coordinator)
    question = "Can you suggest a recipe for dinner?"
    ctx = coordinator.retrieve_all_context(U, "s1", question)
    by_text = {h.text: h for h in ctx.episodic}
    diet = by_text[VEGETARIAN]
    assert diet.parts.stated > 0.5 and diet.band in ("moderate", "high")
    # what happened (a dinner, a plan) is not scored as a preference
    assert by_text["I had a great pasta dinner yesterday."].parts.stated < 0.5
    # without the stated part the diet falls out of the prompt's moderate band
    monkeypatch.setattr(scoring, "W_STATED", 0.0)
    again = {h.text: h for h in coordinator.retrieve_all_context(U, "s1", question).episodic}
    assert VEGETARIAN not in again or again[VEGETARIAN].band == "low"


def test_a_question_about_what_happened_does_not_weigh_preferences(
    coordinator: MemoryCoordinator,
) -> None:
    _chat(coordinator)
    hits = coordinator.search(U, "When are we flying to Lisbon?", k=5)
    assert hits[0].text == "We're flying to Lisbon in May, first time there."
    assert all(h.parts.stated == 0.0 for h in hits)


def test_preferences_are_told_apart_from_goals_and_events(coordinator: MemoryCoordinator) -> None:
    _five(coordinator)
    hits = coordinator.search(U, "Any tips for my training plan?", k=5)
    stated = {h.text: h.parts.stated for h in hits}
    assert stated["I prefer morning workouts before 7am"] > 0.5
    assert hits[0].text == "I prefer morning workouts before 7am"
    events = [t for t, kind in FIVE if kind is not EventType.PREFERENCE and t in stated]
    assert events and all(stated[t] < 0.5 for t in events)


def test_a_diet_told_in_a_logged_exchange_comes_first_for_a_recipe_request(
    coordinator: MemoryCoordinator,
) -> None:
    """Through the app's write path: each message stored with the assistant's reply."""
    exchanges = [
        (
            "I'm always on the lookout for nice places to eat when I travel.",
            "That sounds fun! Trying local food is one of the best parts of travelling.",
        ),
        (VEGETARIAN, "Got it, I'll keep that in mind and suggest vegetarian dishes from now on."),
        (
            "I had a great pasta dinner yesterday.",
            "Nice! Pasta is always a good choice for a relaxed evening.",
        ),
        (
            "I'm cooking for six people on Saturday.",
            "That's a nice gathering. Plan the menu a day ahead so you have time to shop.",
        ),
    ]
    for message, reply in exchanges:
        coordinator.store_interaction(U, "s1", message, reply)
    coordinator.bookkeeping.drain()  # vectors of record with the reply; the classifier's fit
    ctx = coordinator.retrieve_all_context(U, "s2", "Can you suggest a recipe for dinner?")
    top = ctx.episodic[0]
    assert top.text == VEGETARIAN
    assert top.parts.stated > 0.5 and top.band in ("moderate", "high")


# --- The user's own facts first on the main use -----------------------------
# Written for these tests, in other words than the case (half marathon, vegetarian,
# sprained ankle, "draft my weekly schedule"): the signal is the kind of memory (a fact the user
# stated) and the kind of request (a plan or advice), not these words.
OWN_FACTS = [
    ("User is preparing for a 100 km cycling tour in June.", EventType.GOAL),
    ("User is allergic to tree nuts.", EventType.PREFERENCE),
    ("User had knee surgery in February and is still recovering.", EventType.HEALTH_EVENT),
]
LOGGED = [
    ("Can you organise my training week", "Sure, here is a first outline: Monday rest, ..."),
    ("What's the capital of Australia?", "Canberra."),
    ("Recommend a podcast about history", "Try 'The Rest Is History'."),
]
PLAN_REQUESTS = [
    "Can you organise my training week",
    "Put together my rides for next week",
    "Make me a shopping list for the weekend",
    "What should I do to get ready for the summer?",
    "Help me build a morning routine",
]


def _own_facts_and_chat(coord: MemoryCoordinator) -> None:
    for text, kind in OWN_FACTS:
        coord.add_episodic(U, text, event_type=kind)
    for message, reply in LOGGED:
        coord.store_interaction(U, "s0", message, reply)
    coord.bookkeeping.drain()


@pytest.mark.parametrize("request_text", PLAN_REQUESTS)
def test_a_plan_or_advice_request_recalls_every_stated_fact_at_least_moderate(
    coordinator: MemoryCoordinator, request_text: str
) -> None:
    _own_facts_and_chat(coordinator)
    hits = coordinator.retrieve_all_context(U, "s1", request_text).episodic
    by_text = {h.text: h for h in hits}
    for text, _ in OWN_FACTS:
        assert text in by_text, (request_text, [h.text for h in hits])
        assert by_text[text].band in ("moderate", "high"), (request_text, by_text[text])
        assert by_text[text].parts.own == 1.0
    # a logged exchange that only shares words ranks below every one of the user's facts
    # (an earlier request in the very same words may still come first: it holds its answer)
    lowest_fact = min(by_text[t].score for t, _ in OWN_FACTS)
    for h in hits:
        if h.record.get("event_type") == "interaction" and h.text != request_text:
            assert h.parts.neighbour > 0 or h.score < lowest_fact, (request_text, h)


def test_the_kind_of_memory_is_what_lifts_the_facts(
    coordinator: MemoryCoordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    _own_facts_and_chat(coordinator)
    request_text = "Put together my rides for next week"
    # no memory kind counts as the user's own fact: the prior and the calibration go
    monkeypatch.setattr("memory.recall.fusion.OWN_FACT_KINDS", frozenset())
    hits = coordinator.retrieve_all_context(U, "s1", request_text).episodic
    bands = {h.text: h.band for h in hits}
    assert all(h.parts.own == 0.0 for h in hits)
    assert any(bands.get(t) in (None, "low") for t, _ in OWN_FACTS), bands


def test_a_question_about_what_happened_gets_no_own_fact_part(
    coordinator: MemoryCoordinator,
) -> None:
    _own_facts_and_chat(coordinator)
    hits = coordinator.search(U, "When was the knee surgery?", k=5)
    assert hits[0].text == OWN_FACTS[2][0]
    assert all(h.parts.own == 0.0 for h in hits)


def test_a_search_for_a_general_word_finds_the_specific_health_event(
    coordinator: MemoryCoordinator,
) -> None:
    _own_facts_and_chat(coordinator)
    hits = coordinator.search(U, "operation", k=5)
    assert hits and hits[0].text == OWN_FACTS[2][0]
