"""The Stats page's maintenance chart data: runs summed per day (ui/charts.py)."""

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
    mf = charts.maintenance_frame(history)
    rows = {(str(r.day.date()), r.series): (r.count, r.runs) for r in mf.itertuples(index=False)}
    assert rows == {
        ("2023-11-14", "Consolidated"): (3, 2),
        ("2023-11-14", "Expired"): (1, 2),
        ("2023-11-16", "Consolidated"): (0, 1),
        ("2023-11-16", "Expired"): (4, 1),
    }
    fig = charts.maintenance_figure(mf)
    assert {t.name for t in fig.data} == {"Consolidated", "Expired"}


def test_no_history_is_an_empty_frame() -> None:
    assert charts.maintenance_frame([]).empty
