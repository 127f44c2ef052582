"""The examples the consolidation threshold was chosen on (all-MiniLM-L6-v2 cosines in the
comments, measured with the project's ONNX embedder). Two different facts never merge; true
paraphrases above 0.85 do. The cosine half is checked on the real model in
tests/integration/test_maintenance.py."""

from __future__ import annotations

import pytest

from memory.maintenance import mergeable, same_fact

THRESHOLD = 0.85

SAME = [
    ("I prefer morning workouts", "Morning workouts are what I prefer", 0.961),
    ("I prefer morning workouts", "I prefer morning workouts.", 0.995),
    ("I like working out in the mornings", "I prefer to work out in the morning", 0.894),
    ("My dog is called Rex", "My dog's name is Rex", 0.939),
    ("My favourite workout is yoga", "Yoga is my favourite workout", 0.958),
    ("I want to run a marathon this year", "My goal is to run a marathon this year", 0.883),
]
DIFFERENT = [
    ("I prefer morning workouts", "I prefer evening workouts", 0.856),  # cosine passes
    ("My weight goal is 80 kg", "My weight goal is 75 kg", 0.936),  # cosine passes
    ("I am vegetarian", "I am vegan", 0.817),
    ("I live in Lisbon", "I live in Porto", 0.747),
    ("I like running", "I don't like running", 0.798),
    ("I love swimming", "I hate swimming", 0.786),
    ("I prefer workouts", "I prefer morning workouts", 0.742),
]


@pytest.mark.parametrize(("a", "b", "cosine"), SAME)
def test_paraphrases_merge(a: str, b: str, cosine: float) -> None:
    assert mergeable(a, b, cosine, THRESHOLD)


@pytest.mark.parametrize(("a", "b", "cosine"), DIFFERENT)
def test_different_facts_never_merge_even_at_a_high_cosine(a: str, b: str, cosine: float) -> None:
    assert not same_fact(a, b)
    assert not mergeable(a, b, 0.99, THRESHOLD)


def test_a_low_cosine_blocks_a_lexical_match() -> None:
    assert not mergeable("I prefer morning workouts", "Morning workouts I prefer", 0.8, THRESHOLD)
