"""lab/latency_pairs.py: the table of before/after runs of the latency bench."""

from __future__ import annotations

from types import ModuleType

import pytest

from lab import latency_pairs


@pytest.fixture(scope="module")
def lp() -> ModuleType:
    return latency_pairs


def fake_run(warm: float, ingest: float) -> dict:
    size = {"retrieve_warm_ms": {"p50": warm / 2, "p95": warm}, "retrieve_cold_ms": {"p95": 9}}
    sizes = [{"user_memories": n, "bytes_per_memory": 3117, **size} for n in (100, 1000, 10000)]
    return {"sizes": sizes, "ingest": {"per_second": ingest}}


def test_each_figure_lists_every_run_and_the_median(lp: ModuleType) -> None:
    runs = {
        "before": [fake_run(4.0, 400), fake_run(6.0, 410), fake_run(5.0, 390)],
        "after": [fake_run(3.0, 700), fake_run(2.0, 690), fake_run(4.0, 710)],
    }
    table = {line.split(" | ")[0].lstrip("| "): line for line in lp.rows(runs)}
    assert table["warm p95 at 1k (100 per user)"] == (
        "| warm p95 at 1k (100 per user) | 4 / 6 / 5 | 5 | 3 / 2 / 4 | 3 |"
    )
    assert table["ingest, memories/s"].endswith("| 400 / 410 / 390 | 400 | 700 / 690 / 710 | 700 |")
    assert len(table) == len(lp.FIGURES)
