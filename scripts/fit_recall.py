"""Fit the recall model (`memory/recall/scoring.py`) on the development files; print what to review.

    python scripts/fit_recall.py \\
        --data ../shared/bench/personal/personal-dev.json ../shared/bench/locomo/locomo-dev.json

Ingests every file through the bench's write path into a private Redis, runs each question
through the product's candidate search (`run_requests`: both queries, coverage, dates,
neighbours) and records each candidate's parts (vector, text coverage, time, stated) with a label:
is it an evidence turn of the question? Then, on the TUNE conversations only:

1. a logistic regression (Newton's method, tiny L2) of the label on (vector, text, time,
   stated):
   the ranking score z;
2. a second one on (z, z - best z of the question): the calibration (it cannot change the
   order within a question);
3. the neighbour decay, chosen on a grid by recall@5 + recall@10 summed over both files;

and prints the weights to copy into `memory/recall/scoring.py`, recall on the tune and the holdout
split of each file, and the reliability table (share of evidence among the top-10 hits per
band of the probability), from which the band thresholds and RECALL_MIN_SCORE are set.
The split is fixed below: the first two personal users and three LoCoMo conversations tune,
the rest is holdout.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.bench.common import bench_redis, make_coordinator  # noqa: E402
from memory.bench.locomo import questions, turn_items  # noqa: E402
from memory.recall import scoring  # noqa: E402
from memory.recall.hybrid import RecallWeights, _score_candidates, run_requests  # noqa: E402
from memory.recall.requests import episodic_request  # noqa: E402
from memory.recall.statements import fit_logistic, statement_model_for  # noqa: E402

TUNE = {"pref-d01", "pref-d02", "conv-26", "conv-41", "conv-43"}
DECAYS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
BINS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.01)


def collect(paths: list[Path]) -> list[dict[str, Any]]:
    """Per question: candidate features, labels and neighbour links."""
    out: list[dict[str, Any]] = []
    with bench_redis(None) as (client, ns):
        coord = make_coordinator(client, ns)
        try:
            # neighbours for every seed candidate: the decay is applied offline
            weights = RecallWeights(min_score=0.0, neighbour=1.0, neighbour_seeds=5)
            statements = statement_model_for(coord.embedder)
            statements.prepare()  # fitted here, not left to the background worker
            for path in paths:
                for sample in json.loads(path.read_text(encoding="utf-8")):
                    sid = sample["sample_id"]
                    user = f"fit-{sid}"
                    items = turn_items(sample["conversation"])
                    print(f"ingest {path.name} {sid}: {len(items)} turns", file=sys.stderr)
                    ids = coord.add_episodic_many(user, items)
                    dia = {
                        mid: it["metadata"]["dia_id"] for mid, it in zip(ids, items, strict=True)
                    }
                    for q in questions(sample):
                        text = str(q["question"])
                        qvec, _ = coord.embedder.embed_query(text)
                        req = episodic_request(
                            coord.episodic, coord.keys, user, text, qvec, 20, weights, statements
                        )
                        ((vrows, trows),) = run_requests([req])
                        scored = _score_candidates(vrows, trows, qvec, weights, 0)
                        rids = list(scored)
                        evidence = {str(e) for e in q["evidence"]}
                        out.append(
                            {
                                "file": path.name,
                                "conv": sid,
                                "tune": sid in TUNE,
                                "n_evidence": len(evidence),
                                "ids": rids,
                                "x": np.array(
                                    [
                                        [
                                            scored[r]["vector"],
                                            scored[r]["text"],
                                            scored[r]["time"],
                                            scored[r]["stated"],
                                        ]
                                        for r in rids
                                    ]
                                ),
                                "y": np.array([dia.get(r) in evidence for r in rids], dtype=float),
                                "links": {r: scored[r]["neighbour_of"] for r in rids},
                            }
                        )
        finally:
            coord.close()
    return out


def calibration_features(q: dict[str, Any], w: np.ndarray) -> np.ndarray:
    z = q["x"] @ w[:-1] + w[-1]
    return np.stack([z, z - z.max()], axis=1)


def final_scores(q: dict[str, Any], w: np.ndarray, cal: np.ndarray, decay: float) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-(calibration_features(q, w) @ cal[:-1] + cal[-1])))
    own = dict(zip(q["ids"], p, strict=True))
    out = p.copy()
    if decay > 0:
        # seeds: the best 5 by own probability (as the product picks them)
        seeds = set(sorted(own, key=own.__getitem__, reverse=True)[:5])
        for i, rid in enumerate(q["ids"]):
            for seed, hops in q["links"][rid].items():
                if seed in seeds:
                    out[i] = max(out[i], own[seed] * decay**hops)
    return out


def recall(
    qs: list[dict[str, Any]], w: np.ndarray, cal: np.ndarray, decay: float
) -> dict[str, float]:
    r: dict[str, list[float]] = defaultdict(list)
    for q in qs:
        s = final_scores(q, w, cal, decay)
        order = np.argsort(-s, kind="stable")
        for k in (1, 5, 10):
            r[f"R@{k}"].append(q["y"][order[:k]].sum() / q["n_evidence"])
    return {k: round(float(np.mean(v)), 3) for k, v in r.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", type=Path, required=True)
    ap.add_argument("--cache", type=Path, help="keep the collected candidates here (pickle)")
    args = ap.parse_args()
    if args.cache and args.cache.exists():
        qs = pickle.loads(args.cache.read_bytes())
    else:
        qs = collect(args.data)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(qs))
    tune = [q for q in qs if q["tune"]]
    y = np.concatenate([q["y"] for q in tune])
    w = fit_logistic(np.vstack([q["x"] for q in tune]), y)
    cal = fit_logistic(np.vstack([calibration_features(q, w) for q in tune]), y)
    files = sorted({q["file"] for q in qs})

    def objective(decay: float) -> float:
        total = 0.0
        for f in files:
            r = recall([q for q in tune if q["file"] == f], w, cal, decay)
            total += r["R@5"] + r["R@10"]
        return total

    print("# neighbour decay grid (tune, sum of R@5 + R@10 over the files):")
    for d in DECAYS:
        print(f"  {d}: {objective(d):.3f}")
    decay = max(DECAYS, key=objective)
    print("\n# memory/recall/scoring.py (fitted on the tune split)")
    print(f"BIAS = {w[4]:.2f}\nW_VECTOR = {w[0]:.2f}\nW_COVERAGE = {w[1]:.2f}")
    print(f"W_TIME = {w[2]:.2f}\nW_STATED = {w[3]:.2f}\nNEIGHBOUR_DECAY = {decay}")
    print(f"CAL_SCALE = {cal[0]:.2f}\nCAL_LEAD = {cal[1]:.2f}\nCAL_BIAS = {cal[2]:.2f}")
    print("\n# recall over the candidates (k = rank in the product's list)")
    for f in files:
        for split, sub in (("tune", True), ("holdout", False), ("all", None)):
            sel = [q for q in qs if q["file"] == f and (sub is None or q["tune"] == sub)]
            convs = sorted({q["conv"] for q in sel})
            print(f"{f} {split} ({len(sel)} q; {','.join(convs)}): {recall(sel, w, cal, decay)}")
    print("\n# reliability: top-10 hits per band of final (share that are evidence)")
    for f in files:
        for split, sub in (("tune", True), ("holdout", False)):
            sel = [q for q in qs if q["file"] == f and q["tune"] == sub]
            n = np.zeros(len(BINS) - 1)
            pos = np.zeros(len(BINS) - 1)
            for q in sel:
                s = final_scores(q, w, cal, decay)
                top = np.argsort(-s, kind="stable")[:10]
                b = np.digitize(s[top], BINS) - 1
                np.add.at(n, b, 1)
                np.add.at(pos, b, q["y"][top])
            cells = [
                f"[{BINS[i]:.2f},{min(BINS[i + 1], 1):.2f}) {int(n[i])} {pos[i] / n[i]:.2f}"
                if n[i]
                else f"[{BINS[i]:.2f},{min(BINS[i + 1], 1):.2f}) 0 -"
                for i in range(len(n))
            ]
            print(f"{f} {split}: " + " | ".join(cells))
    shipped = np.array(
        [scoring.W_VECTOR, scoring.W_COVERAGE, scoring.W_TIME, scoring.W_STATED, scoring.BIAS]
    )
    shipped_cal = np.array([scoring.CAL_SCALE, scoring.CAL_LEAD, scoring.CAL_BIAS])
    print(
        f"\n# with the constants now in memory/recall/scoring.py ({shipped}, {shipped_cal}, "
        f"decay {scoring.NEIGHBOUR_DECAY}):"
    )
    for f in files:
        for split, sub in (("tune", True), ("holdout", False)):
            sel = [q for q in qs if q["file"] == f and q["tune"] == sub]
            print(f"{f} {split}: {recall(sel, shipped, shipped_cal, scoring.NEIGHBOUR_DECAY)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
