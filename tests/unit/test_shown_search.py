"""What search shows people: the floor under the hits."""

from __future__ import annotations

from memory.models import BAND_MODERATE, SHOWN_FLOOR, MemoryType, RecallHit, ScoreParts, shown_hits


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


def test_the_floor_sits_below_the_moderate_band() -> None:
    # a moderate hit is always shown; the floor only cuts low ones
    assert 0 < SHOWN_FLOOR < BAND_MODERATE
    assert shown_hits([hit("m", BAND_MODERATE)])[1] == 0
