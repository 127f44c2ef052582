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


def test_a_run_of_one_size_shows_its_figures_and_stages(lp: ModuleType) -> None:
    """`--sizes 1000`: the figures of the sizes left out are skipped, not a crash; the warm
    recall's stages are each arm's median."""

    def one_size(fetch: float) -> dict:
        stages = {"fetch": {"p50": fetch, "p95": 2 * fetch}}
        size = {"size": 1000, "user_memories": 100, "bytes_per_memory": 3117}
        warm = {"p50": 1.0, "p95": 2.0, "stages": stages}
        return {"sizes": [{**size, "retrieve_warm_ms": warm}], "ingest": {"per_second": 500}}

    runs = {"before": [one_size(3.0), one_size(5.0)], "after": [one_size(1.0), one_size(2.0)]}
    names = [line.split(" | ")[0].lstrip("| ") for line in lp.rows(runs)]
    assert names == ["warm p95 at 1k (100 per user)", "warm p50 at 1k", "ingest, memories/s"]
    assert lp.stage_rows(runs) == ["| 1,000 | fetch | 4 | 8 | 1.5 | 3 |"]
