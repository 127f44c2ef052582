"""The Stats page's frames: p95 only where it is measured, activity said in words for a
single day, each memory by its own date."""

from __future__ import annotations

import pandas as pd

from memory.activity import per_day
from ui import activity_chart, charts

DAY = 86_400_000


def _recall(ms: list[float], every_s: int) -> pd.DataFrame:
    t0 = pd.Timestamp("2026-11-26 10:00")
    return pd.DataFrame(
        {"when": [t0 + pd.Timedelta(seconds=i * every_s) for i in range(len(ms))], "ms": ms}
    )


def test_p95_is_drawn_only_where_a_bucket_has_enough_samples() -> None:
    few = charts.recall_points(_recall([5.0, 9.0, 40.0], every_s=1))
    assert few["p50"].notna().all() and few["p95"].isna().all()
    burst = [5.0] * 36 + [50.0] * 4
    t0 = pd.Timestamp("2026-11-26 10:00")
    two = pd.DataFrame({"when": [t0] * 40 + [t0 + pd.Timedelta(hours=1)] * 40, "ms": burst + burst})
    many = charts.recall_points(two)
    assert len(many) == 2 and (many["p95"] > many["p50"]).all()


def test_own_date_wins_over_the_write_time() -> None:
    assert charts.own_date_ms({"timestamp": 5, "created_at": 9}) == 5
    assert charts.own_date_ms({"created_at": 9}) == 9


def test_activity_per_day_counts_only_and_dates_replacements_by_the_new_memory() -> None:
    june, aug = 1_780_000_000_000, 1_780_000_000_000 + 70 * DAY
    rows = per_day(
        [
            {"id": "a", "timestamp": june, "superseded_by": "b", "event_type": "goal"},
            {"id": "b", "timestamp": aug, "superseded_by": "", "event_type": "goal"},
            {"id": "c", "timestamp": aug, "superseded_by": "", "event_type": "interaction"},
        ],
        [
            {"at_ms": aug, "member_ids": ["x", "y"], "undone": False},
            {"at_ms": aug, "member_ids": ["z"], "undone": True},
        ],  # fmt: skip
        __import__("collections").Counter({("2026-11-26", "forgotten"): 3}),
    )
    got = {(r["day"], r["event"]): r["count"] for r in rows}
    assert got == {
        (charts_day(june), "created"): 1,
        (charts_day(aug), "created"): 1,
        (charts_day(aug), "replaced"): 1,
        (charts_day(aug), "merged"): 2,
        ("2026-11-26", "forgotten"): 3,
    }
    one_day = activity_chart.activity_frame([r for r in rows if r["day"] == "2026-11-26"])
    assert activity_chart.activity_sentence(one_day) == "On 26 Nov 2026: 3 forgotten."


def charts_day(ms: int) -> str:
    from memory.activity import day_of

    return day_of(ms)
