"""The Stats page's maintenance charts: runs summed per day (ui/charts.py)."""

from __future__ import annotations

from ui import charts

DAY_MS = 86_400_000
T0 = 1_700_000_000_000  # 2023-11-14 22:13 UTC


def test_runs_of_one_day_are_summed_and_days_stay_apart() -> None:
    history = [
        {"at_ms": T0, "consolidated": 2, "expired": 1, "decayed": 5, "summarised": 0},
        {"at_ms": T0 + 60_000, "consolidated": 1, "expired": 0, "decayed": 0, "summarised": 0},
        {"at_ms": T0 + 2 * DAY_MS, "consolidated": 0, "expired": 4},
    ]
    days = charts.maintenance_days(history)
    rows = {str(r.day.date()): (r.Merged, r.Expired, r.runs) for r in days.itertuples()}
    assert rows == {"2023-11-14": (3, 1, 2), "2023-11-16": (0, 4, 1)}
    fig = charts.maintenance_figure(days)
    bars = {t.name: [int(v) for v in t.y] for t in fig.data}
    assert bars == {"Merged": [3, 0], "Expired": [1, 4]}


def test_no_history_is_an_empty_frame() -> None:
    assert charts.maintenance_days([]).empty


def test_storage_saved_per_day_is_merged_plus_expired_as_a_share_of_the_active_memories() -> None:
    history = [
        {"at_ms": T0, "consolidated": 3, "expired": 1, "active_before": 20, "active_after": 16},
        {"at_ms": T0 + 60_000, "consolidated": 1, "expired": 0, "active_before": 16},
        {"at_ms": T0 + DAY_MS, "consolidated": 2, "expired": 0},  # before active counts existed
    ]
    sf = charts.maintenance_days(history)
    rows = [(str(r.day.date()), r.saved, r.runs) for r in sf.itertuples(index=False)]
    assert rows == [("2023-11-14", 5, 2), ("2023-11-15", 2, 1)]
    assert sf["share"].iloc[0] == 0.25  # 5 of the 20 active before the day's first run
    assert sf["share"].isna().iloc[1]
    fig = charts.savings_figure(sf)
    assert list(fig.data[0].text) == ["25%", ""]


def test_growth_per_day_counts_new_memories_per_type_and_day() -> None:
    rows_by_type = {
        "episodic": [{"created_at": T0}, {"created_at": T0 + 1000}, {"created_at": T0 + DAY_MS}],
        "semantic": [{"timestamp": T0}],
    }
    gd = charts.growth_per_day_frame(rows_by_type)
    got = {(str(r.day.date()), r.type): r.new for r in gd.itertuples(index=False)}
    assert got == {
        ("2023-11-14", "episodic"): 2,
        ("2023-11-14", "semantic"): 1,
        ("2023-11-15", "episodic"): 1,
    }
    assert charts.growth_per_day_figure(gd).data
    assert charts.growth_per_day_frame({}).empty
