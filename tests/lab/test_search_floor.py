"""lab/search_floor.py: the floor fitted on the evidence hits, the bands table, and a recorded
run on a tiny LoCoMo file."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import results
from lab.search_floor import band_of, band_table, fit_floor
from tests.benchmarks.test_record import recorded_bench


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


def test_a_recorded_run_states_how_the_bands_and_the_floor_fall(
    tmp_path: Path, redis_url: str
) -> None:
    done, out_dir = recorded_bench(tmp_path, redis_url, ["lab.search_floor"])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    bands = out["bands"]
    assert set(bands) == {"high", "moderate", "low", "below floor"}
    found = sum(b["evidence"] for b in bands.values())
    assert found > 0 and abs(sum(b["share"] for b in bands.values()) - 1) < 0.01
    assert sum(out["best_evidence_band"].values()) == out["n_questions"]
    [record] = results.load_records(out_dir)
    assert record["bench"] == "bands" and record["data"] == "tiny-locomo.json"
    assert record["command"].startswith("python -m lab.search_floor --data ")
    assert record["figures"]["floor"] == out["floor"]
    assert record["figures"]["below_floor_share"] == bands["below floor"]["share"]
    assert record["figures"]["high_precision"] == bands["high"]["precision"]
