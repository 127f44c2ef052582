"""Trigger phrases, #tags, typing, slots, and structured LLM extraction with its retry."""

from __future__ import annotations

import pytest

from agent.errors import ExtractionError
from agent.extraction import LLMExtractor, is_correction
from agent.llm import OllamaLLM
from memory.writing import extract_triggers
from tests.fakes.fake_ollama import FakeOllama

# Until tests/conftest.py lists it for the whole suite.


def _one(message: str) -> tuple[str, str, str | None, list[str]]:
    cands = extract_triggers(message)
    assert len(cands) == 1, cands
    c = cands[0]
    return c.text, c.event_type.value, c.slot, c.tags


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "remember: I prefer morning workouts",
            ("I prefer morning workouts", "preference", "preference:workout_time", []),
        ),
        (
            "Important: my goal is to weigh 75 kg by June. How did I sleep?",
            ("My goal is to weigh 75 kg by June", "goal", "goal:weight", []),
        ),
        (
            "My preference is concise answers.",
            ("My preference is concise answers", "preference", "preference:response_style", []),
        ),
        (
            "Note this: my left knee hurts after long runs",
            ("My left knee hurts after long runs", "health_event", None, []),
        ),
        ("New goal: 10000 steps a day", ("Goal: 10000 steps a day", "goal", "goal:steps", [])),
        (
            "Ran my first half marathon today! #milestone",
            ("Ran my first half marathon today!", "milestone", None, ["milestone"]),
        ),
        (
            "remember:\nI use miles, not kilometers",
            ("I use miles, not kilometers", "preference", "preference:units", []),
        ),
    ],
)
def test_trigger_phrases_and_tags_become_typed_memories(message: str, expected: tuple) -> None:
    assert _one(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "How did I sleep last week?",
        "Why do I always feel tired?",
        "What is my #sleep score?",
        "Can you remember what I said?",
        "remember:",
    ],
)
def test_questions_and_bare_triggers_store_nothing(message: str) -> None:
    assert extract_triggers(message) == []


def test_an_ambiguous_goal_gets_no_slot_so_it_never_replaces_another() -> None:
    # Mentions running and weight: superseding either goal would lose a fact.
    assert _one("My goal is to run 5k to lose weight")[2] is None


def test_corrections_are_recognised() -> None:
    assert is_correction("No, that's wrong: I ran twice")
    assert is_correction("That's not right")
    assert not is_correction("Nothing else, thanks")
    assert not is_correction("How did I sleep?")


def test_llm_extraction_returns_typed_candidates(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_structured(
        {
            "memories": [
                {
                    "text": "I am vegetarian",
                    "event_type": "fact",
                    "slot": "none",
                    "tags": ["#Diet"],
                },
                {"text": "I want to weigh 72 kg", "event_type": "goal", "slot": "goal:weight"},
            ]
        }
    )
    cands, attempts = LLMExtractor(OllamaLLM(fake_ollama.url)).extract(
        "qwen2.5:7b", "I'm vegetarian and want 72 kg"
    )
    assert attempts == 1
    assert [(c.text, c.event_type.value, c.slot, c.tags, c.how) for c in cands] == [
        ("I am vegetarian", "fact", None, ["diet"], "llm"),
        ("I want to weigh 72 kg", "goal", "goal:weight", [], "llm"),
    ]
    req = fake_ollama.chat_requests(structured=True)[0]
    assert req.body["format"]["properties"]["memories"]["type"] == "array"
    assert "I'm vegetarian and want 72 kg" in req.prompt_text


def test_malformed_extraction_json_is_retried_once_with_the_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_structured('{"memories": [{"text": "I like tea", "event_type": ')
    fake_ollama.queue_structured(
        {"memories": [{"text": "I like tea", "event_type": "preference", "slot": "none"}]}
    )
    cands, attempts = LLMExtractor(OllamaLLM(fake_ollama.url)).extract("qwen2.5:7b", "I like tea")
    assert attempts == 2 and [c.text for c in cands] == ["I like tea"]
    retry = fake_ollama.chat_requests(structured=True)[1]
    assert "That answer was invalid" in retry.body["messages"][-1]["content"]


def test_two_invalid_answers_raise_an_error_naming_the_problem(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_structured("not json at all")
    fake_ollama.queue_structured(
        {"memories": [{"text": "x y z", "event_type": "mood", "slot": "none"}]}
    )
    with pytest.raises(ExtractionError, match="event_type"):
        LLMExtractor(OllamaLLM(fake_ollama.url)).extract("qwen2.5:7b", "I feel great")
