"""lab/page_times.py: the figures a browser run records, as the report shows them."""

from __future__ import annotations

from benchmarks import report, results
from lab import page_times


def test_page_times_are_the_median_of_the_runs_and_meet_or_miss_their_goals() -> None:
    bench = {
        "bench": "pages",
        "commit": "abc1234",
        "load_average": [1.5, 1.0, 0.5],
        "cold_open": {"median_s": 3.0, "max_s": 4.0, "runs_s": [2.0, 3.0, 4.0]},
        "warm_open": {"median_s": 1.0, "max_s": 1.0, "runs_s": [1.0, 1.0, 1.0]},
        "stats": {"median_s": 1.2, "max_s": 1.4, "runs_s": [1.4, 1.2, 1.0]},
        "answer": {"median_s": 0.6, "max_s": 0.9, "runs_s": [0.6, 0.9, 0.4]},
        "cold_answer": {"median_s": 3.5, "max_s": 4.5, "runs_s": [3.5, 4.5, 2.5]},
    }
    figures = page_times.figures(bench)
    assert figures == {
        "cold_open_s": [2.0, 3.0, 4.0],
        "warm_open_s": [1.0, 1.0, 1.0],
        "stats_s": [1.4, 1.2, 1.0],
        "answer_s": [0.6, 0.9, 0.4],
        "cold_answer_s": [3.5, 4.5, 2.5],
        "load_average_1m": 1.5,
    }
    record = results.make_record(
        "pages",
        figures,
        command="python -m lab.page_times browser",
        commit="abc1234",
        embedder="e1",
    )
    text = report.render_report([record], [])
    assert "| chat page usable ≤ 2.5 s after a cold first open | 3.0 s | **no** |" in text
    assert "| the same plus its first answer, sent at once, ≤ 3.0 s | 3.5 s | **no** |" in text
    assert "| Stats page usable ≤ 1.5 s | 1.2 s | yes |" in text
    assert "| Chat page usable, cold first open (browser) | 3.0 s |" in text
    assert "| a memory-only turn, Enter to answer ≤ 0.5 s | 0.6 s | **no** |" in text
    assert "| A memory-only turn, Enter to answer (browser) | 0.6 s |" in text
