"""What search shows people: the floor under the hits."""

from __future__ import annotations

from memory.models import (
    BAND_HIGH,
    BAND_MODERATE,
    SHOWN_FLOOR,
    MemoryType,
    RecallHit,
    ScoreParts,
    shown_hits,
)


def hit(text: str, score: float) -> RecallHit:
    return RecallHit(
        id=text,
        memory_type=MemoryType.EPISODIC,
        text=text,
        score=score,
        band="low",
        parts=ScoreParts(final=score),
    )


def test_the_floor_keeps_the_relevant_hits_best_first_and_counts_the_rest() -> None:
    hits = [hit("noise a", 0.012), hit("allergy", 0.19), hit("noise b", 0.025), hit("edge", 0.04)]
    kept, weaker = shown_hits(hits, floor=0.04)
    assert [h.text for h in kept] == ["allergy", "edge"]
    assert weaker == 2


def test_nothing_below_the_floor_means_no_hint() -> None:
    kept, weaker = shown_hits([hit("a", 0.5), hit("b", 0.2)])
    assert [h.text for h in kept] == ["a", "b"] and weaker == 0
    assert shown_hits([]) == ([], 0)


def test_the_floor_shows_every_high_hit_and_no_low_one() -> None:
    # fitted on answerable and unanswerable questions (benchmarks/floor.py): a low hit is never
    # shown, a high one always
    assert BAND_MODERATE <= SHOWN_FLOOR < BAND_HIGH
    assert shown_hits([hit("h", BAND_HIGH), hit("l", BAND_MODERATE - 0.01)]) == (
        [hit("h", BAND_HIGH)],
        1,
    )
