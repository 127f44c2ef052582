"""The pure parts of lab/quantized_embedder.py (research): which nodes a variant keeps in
fp32, the drift figures, the interleaving of rounds and the held-out split of the bench."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from lab import quantized_embedder
from memory.embeddings.model_ids import PACKAGED_MODEL_ID, TOKEN_INT8_MODEL_ID


@pytest.fixture(scope="module")
def qe() -> ModuleType:
    return quantized_embedder


# One layer of MiniLM: q/k/v/out projections, FFN up and down.
LAYER = {
    "q": (384, 384),
    "k": (384, 384),
    "v": (384, 384),
    "attn_out": (384, 384),
    "ffn_up": (384, 1536),
    "ffn_down": (1536, 384),
}


def test_no_ffn2_keeps_only_the_ffn_down_projection_in_fp32(qe: ModuleType) -> None:
    assert qe.excluded_nodes(LAYER, "all") == []
    assert qe.excluded_nodes(LAYER, "no-ffn2") == ["ffn_down"]
    assert qe.excluded_nodes(LAYER, "no-ffn") == ["ffn_down", "ffn_up"]


def test_an_unknown_variant_is_refused_with_the_known_ones(qe: ModuleType) -> None:
    with pytest.raises(SystemExit, match="no-ffn2"):
        qe.excluded_nodes(LAYER, "no-ffn3")


def test_research_vectors_never_pass_for_the_products(qe: ModuleType) -> None:
    ids = {qe.research_model_id(v) for v in qe.VARIANTS}
    assert len(ids) == len(qe.VARIANTS)
    assert not ids & {PACKAGED_MODEL_ID, TOKEN_INT8_MODEL_ID}


def test_cosine_drift_reports_the_worst_text(qe: ModuleType) -> None:
    ref = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    other = np.array([[2.0, 0.0], [0.6, 0.8], [1.0, 1.0]])  # second one drifted to cos 0.8
    drift = qe.cosine_drift(ref, other)
    assert drift["min"] == pytest.approx(0.8)
    assert drift["mean"] == pytest.approx((1 + 0.8 + 1) / 3, abs=1e-4)


def test_every_model_runs_once_per_round_and_each_goes_first_in_turn(qe: ModuleType) -> None:
    orders = list(qe.round_orders(["shipped", "all", "no-ffn2"], 6))
    assert all(sorted(o) == ["all", "no-ffn2", "shipped"] for o in orders)
    firsts = [o[0] for o in orders]
    assert {m: firsts.count(m) for m in firsts} == {"shipped": 2, "all": 2, "no-ffn2": 2}


def test_split_rows_weight_each_conversation_by_its_questions(qe: ModuleType) -> None:
    by_conv = {
        "a": {"n_questions": 30, "recall_at": {"1": 0.5, "5": 1.0}, "mrr": 0.6},
        "b": {"n_questions": 10, "recall_at": {"1": 0.1, "5": 0.2}, "mrr": 0.2},
        "c": {"n_questions": 20, "recall_at": {"1": 0.0, "5": 0.5}, "mrr": 0.1},
    }
    rows = qe.split_rows(by_conv, {"holdout": ["a", "b"], "dev": ["c"], "none": ["zz"]})
    assert rows == [["holdout", 40, 0.4, 0.8, 0.5], ["dev", 20, 0.0, 0.5, 0.1]]


def test_the_sign_test_of_a_paired_comparison(qe: ModuleType) -> None:
    assert qe.sign_test(10, 0) == pytest.approx(2 / 1024)
    assert qe.sign_test(0, 10) == pytest.approx(2 / 1024)
    assert qe.sign_test(5, 5) == 1.0
    assert qe.sign_test(0, 0) == 1.0


def test_compare_counts_questions_won_and_lost(
    qe: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(hits: list[float], path: Path) -> Path:
        per_question = {"recall_at": [{"5": h} for h in hits], "rr": hits, "block": hits}
        path.write_text(json.dumps({"per_question": per_question}))
        return path

    a = run([1.0, 0.0, 1.0, 0.0], tmp_path / "a.json")
    b = run([1.0, 1.0, 0.0, 1.0], tmp_path / "b.json")
    assert qe.main(["compare", str(a), str(b)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("R@5"))
    assert [float(x) for x in row.split()[1:]] == [0.5, 0.75, 2, 1, 1.0]
    short = run([1.0], tmp_path / "short.json")
    with pytest.raises(SystemExit, match="different questions"):
        qe.main(["compare", str(a), str(short)])


def test_memory_reports_each_variant_from_a_process_of_its_own(
    qe: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`memory` must not measure one model on top of another: one subprocess per variant, its
    last stdout line read as JSON."""
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kwargs: object) -> object:
        calls.append(cmd)
        size = 100.0 * len(calls)
        out = json.dumps({"loaded": size, "short": size + 1, "long": size + 2})
        return type("Done", (), {"returncode": 0, "stdout": f"noise\n{out}\n", "stderr": ""})()

    monkeypatch.setattr(qe.subprocess, "run", fake_run)
    args = type("Args", (), {"variants": ["shipped", "shipped-v1"], "models": Path("/m")})()
    assert qe.memory(args) == 0
    assert [c[-2:] for c in calls] == [["memory-one", "shipped"], ["memory-one", "shipped-v1"]]
    out = capsys.readouterr().out
    assert "shipped-v1" in out and "201" in out and "102" in out


def test_rss_is_statms_resident_pages_else_the_peak(qe: ModuleType, tmp_path: Path) -> None:
    """statm: size, resident, shared ... in pages. (Comparing with VmRSS live is no test: the
    suite's background threads move the resident size between two reads.)"""
    import os
    import resource

    statm = tmp_path / "statm"
    statm.write_text("90000 2500 300 10 0 4000 0\n")
    assert qe._rss_mb(statm) == pytest.approx(2500 * os.sysconf("SC_PAGE_SIZE") / 1e6)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    assert qe._rss_mb(tmp_path / "missing") == pytest.approx(peak_mb, rel=0.05)
