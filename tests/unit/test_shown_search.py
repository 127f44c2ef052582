"""What search shows people: the floor under the hits, and the bands table of `bench bands`."""

from __future__ import annotations

from memory.bench.bands import band_of, band_table, fit_floor
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


def test_fit_floor_keeps_the_asked_share_of_the_evidence() -> None:
    scores = [i / 100 for i in range(1, 101)]  # 0.01 .. 1.00
    floor = fit_floor(scores, keep=0.95)
    kept = sum(1 for s in scores if s >= floor)
    assert kept == 95 and floor == 0.06
    assert fit_floor([0.3], keep=0.95) == 0.3
    assert fit_floor([]) == 0.0


def test_band_table_counts_precision_and_share_per_band() -> None:
    scored = [(0.5, True), (0.4, False), (0.2, True), (0.05, False), (0.01, True), (0.02, False)]
    table = band_table(scored, floor=0.04)
    assert table["high"] == {"hits": 2, "evidence": 1, "precision": 0.5, "share": round(1 / 3, 4)}
    assert table["moderate"]["hits"] == 1 and table["moderate"]["precision"] == 1.0
    assert table["low"] == {"hits": 1, "evidence": 0, "precision": 0.0, "share": 0.0}
    assert table["below floor"]["hits"] == 2 and table["below floor"]["evidence"] == 1
    assert sum(b["hits"] for b in table.values()) == len(scored)


def test_band_of_names_the_floor() -> None:
    assert band_of(0.3, 0.04) == "high"
    assert band_of(0.1, 0.04) == "moderate"
    assert band_of(0.04, 0.04) == "low"
    assert band_of(0.039, 0.04) == "below floor"
