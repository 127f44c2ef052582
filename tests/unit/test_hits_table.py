"""The recalled-memories table shows every part of a score, the stated preference included."""

from __future__ import annotations

from ui.details import HIT_COLUMNS, hits_frame


def test_every_score_part_has_a_column() -> None:
    hit = {
        "text": "I'm vegetarian",
        "score": 0.26,
        "band": "moderate",
        "parts": {
            "vector": 0.31,
            "text": 0.0,
            "recency": 0.9,
            "importance": 0.5,
            "time": 0.0,
            "stated": 0.71,
            "own": 1.0,
            "neighbour": 0.0,
            "final": 0.26,
        },
    }
    row = hits_frame([hit]).iloc[0]
    assert row["Preference"] == 0.71 and row["Vector"] == 0.31 and row["Score"] == 0.26
    assert row["Your fact"] == 1.0
    assert set(hits_frame([hit]).columns) <= set(HIT_COLUMNS)


def test_a_hit_from_before_the_part_existed_shows_zero() -> None:
    row = hits_frame([{"text": "old", "score": 0.2, "band": "moderate", "parts": {}}]).iloc[0]
    assert row["Preference"] == 0.0
