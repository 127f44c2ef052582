"""`python -m benchmarks floor`: the search floor fitted on answerable and unanswerable
questions, the shares it reports, the kept set of unanswerable questions, and a recorded run
on a tiny LoCoMo file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks import results
from benchmarks.floor import band_of, band_table, fit_floor, read_unanswerable, shares
from memory.config import PROJECT_ROOT
from tests.benchmarks.test_recall_benches import TINY

UNANSWERABLE = PROJECT_ROOT / "tests" / "data" / "unanswerable.json"
#: the development files' users (../shared/bench: personal-dev.json, locomo-dev.json)
DEV_USERS = [f"pref-d0{i}" for i in range(1, 5)] + [
    f"conv-{n}" for n in ("26", "30", "41", "42", "43")
]


def test_the_fit_trades_evidence_kept_against_unanswerable_questions_showing_nothing() -> None:
    evidence = [0.9, 0.5, 0.3, 0.15, 0.12, 0.05]
    unanswerable = [0.02, 0.04, 0.06, 0.08, 0.2]
    floor = fit_floor(evidence, unanswerable)
    # 0.0801 hides four unanswerable questions of five and keeps five evidence hits of six;
    # hiding the fifth (0.2001) costs two evidence hits, and 0.12 keeps as much and hides
    # as much as 0.0801 (of equal floors the lowest); lower shows more unanswerable ones
    assert floor == 0.0801
    assert shares(evidence, unanswerable, floor) == {
        "evidence_kept": round(5 / 6, 4),
        "unanswerable_nothing": 0.8,
    }
    assert fit_floor([0.5], []) == 0.0  # nothing to hide: keep everything
    assert fit_floor([], [0.3]) == 0.3001  # nothing to keep: hide everything seen


def test_shares_count_what_stays_shown_and_what_shows_nothing() -> None:
    assert shares([0.1, 0.2], [0.05, 0.1], 0.1) == {
        "evidence_kept": 1.0,  # at the floor is shown
        "unanswerable_nothing": 0.5,
    }
    assert shares([], [], 0.1) == {"evidence_kept": 0.0, "unanswerable_nothing": 0.0}


def test_band_table_counts_precision_per_band() -> None:
    scored = [(0.5, True), (0.4, False), (0.2, True), (0.05, False), (0.01, True), (0.02, False)]
    table = band_table(scored, floor=0.04)
    assert table["high"] == {"hits": 2, "evidence": 1, "precision": 0.5}
    assert table["moderate"] == {"hits": 1, "evidence": 1, "precision": 1.0}
    assert table["low"] == {"hits": 1, "evidence": 0, "precision": 0.0}
    assert table["below floor"] == {"hits": 2, "evidence": 1, "precision": 0.5}
    assert band_of(0.3, 0.04) == "high" and band_of(0.039, 0.04) == "below floor"
    # a floor above the moderate band's edge: a weaker moderate hit is not shown
    assert band_of(0.11, 0.12) == "below floor" and band_of(0.12, 0.12) == "moderate"


def test_the_kept_unanswerable_set_has_50_questions_for_the_development_users() -> None:
    pairs = read_unanswerable(UNANSWERABLE, DEV_USERS)
    questions = {q for _, q in pairs}
    assert len(questions) >= 50
    spec = json.loads(UNANSWERABLE.read_text(encoding="utf-8"))
    assert set(spec["by_user"]) <= set(DEV_USERS)  # no question for a user no file has
    asked = len(spec["every_user"]) * len(DEV_USERS) + sum(map(len, spec["by_user"].values()))
    assert len(pairs) == asked
    # a file without those users is asked only the questions for every user
    assert {u for u, _ in read_unanswerable(UNANSWERABLE, ["tiny-1"])} == {"tiny-1"}


def test_a_recorded_run_writes_one_record_per_file_with_both_shares(
    tmp_path: Path, redis_url: str
) -> None:
    data = tmp_path / "tiny-locomo.json"
    data.write_text(json.dumps(TINY))
    nothing = tmp_path / "unanswerable.json"
    nothing.write_text(
        json.dumps({"every_user": ["What is Bo's blood type?"], "by_user": {"tiny-1": ["Who?"]}})
    )
    out_dir = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "floor", "--data", str(data)]
        + ["--unanswerable", str(nothing), "--json", "--quiet", "--record"]
        + ["--redis-url", redis_url],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "BENCH_RESULTS_DIR": str(out_dir)},
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    tiny = out["files"]["tiny-locomo.json"]
    assert tiny["n_questions"] == 2 and tiny["n_unanswerable"] == 2
    assert tiny["n_evidence_found"] >= 1  # the tortoise's name is found
    [record] = results.load_records(out_dir)
    assert record["bench"] == "floor" and record["data"] == "tiny-locomo.json"
    assert record["command"].startswith("python -m benchmarks floor --data ")
    figures = record["figures"]
    assert figures["floor"] == out["floor"] and figures["fitted_floor"] == out["fitted_floor"]
    assert figures["evidence_kept"] == tiny["at_floor"]["evidence_kept"]
    assert figures["unanswerable_nothing"] == tiny["at_floor"]["unanswerable_nothing"]
    assert figures["unanswerable_asked"] == 2
