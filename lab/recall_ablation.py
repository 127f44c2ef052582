"""Which parts of the recall score carry over? Ablations and a swapped split.

    python -m lab.fit_recall --data ../shared/bench/personal/personal-dev.json \
        ../shared/bench/locomo/locomo-dev.json --cache scratch/fit-cache.pickle
    python -m lab.recall_ablation scratch/fit-cache.pickle

Reads the candidates `fit_recall.py` collected (the product's candidate search on both dev
files, with each candidate's parts and label), refits the ranking model and its calibration
without one part at a time (or without the calibration's lead term, or with the neighbour
decay at 0), on the tune split, and prints R@5 (personal) / R@10 (LoCoMo) on the split it was
fitted on and on the other, with their gap. "swapped" fits on the holdout users and
conversations and tests on the tune ones: when the same conversations score lower whichever
side was fitted on, the gap is how hard they are, not overfitting.
"""

import pickle
import sys
from pathlib import Path

import numpy as np

from memory.recall.statements import fit_logistic, request_kind

qs = pickle.loads(
    Path(sys.argv[1] if len(sys.argv) > 1 else "scratch/fit-cache.pickle").read_bytes()
)


def fit_on(train, cols, decay=None, lead=True):
    y = np.concatenate([q["y"] for q in train])
    x = np.vstack([q["x"][:, cols] for q in train])
    w = fit_logistic(x, y)

    def cf(q):
        z = q["x"][:, cols] @ w[:-1] + w[-1]
        return np.stack([z, z - z.max()], 1) if lead else z[:, None]

    cal = fit_logistic(np.vstack([cf(q) for q in train]), y)
    return w, cal, cf


def evaluate(test, cols, w, cal, cf, decay):
    r = {1: [], 5: [], 10: []}
    for q in test:
        p = 1 / (1 + np.exp(-(cf(q) @ cal[:-1] + cal[-1])))
        own = dict(zip(q["ids"], p, strict=True))
        out = p.copy()
        # as the product: no neighbours for a request for advice or about the user's tastes
        if decay > 0 and request_kind(q["question"]) is None:
            seeds = set(sorted(own, key=own.__getitem__, reverse=True)[:5])
            for i, rid in enumerate(q["ids"]):
                for s, h in q["links"][rid].items():
                    if s in seeds:
                        out[i] = max(out[i], own[s] * decay**h)
        order = np.argsort(-out, kind="stable")
        for k in r:
            r[k].append(q["y"][order[:k]].sum() / q["n_evidence"])
    return {k: round(float(np.mean(v)), 3) for k, v in r.items()}


def report(name, cols, decay=0.3, lead=True, swap=False):
    train = [q for q in qs if q["tune"] != swap]
    w, cal, cf = fit_on(train, cols, lead=lead)
    out = []
    for f, k in (("personal-dev.json", 5), ("locomo-dev.json", 10)):
        tr = [q for q in qs if q["file"] == f and q["tune"] != swap]
        te = [q for q in qs if q["file"] == f and q["tune"] == swap]
        a, b = evaluate(tr, cols, w, cal, cf, decay), evaluate(te, cols, w, cal, cf, decay)
        out.append(
            f"{f.split('-')[0]} R@{k} fit {a[k]:.3f} / other {b[k]:.3f} "
            f"(gap {a[k] - b[k]:+.3f}); R@5 {a[5]:.3f}/{b[5]:.3f}"
        )
    print(f"{name:38s} w={np.round(w, 2)}  " + " | ".join(out))


report("shipped parts, decay 0.3", [0, 1, 2, 3])
report("shipped parts, decay 0", [0, 1, 2, 3], decay=0.0)
report("no time part", [0, 1, 3])
report("no stated part", [0, 1, 2])
report("vector + text only", [0, 1])
report("vector + text, decay 0", [0, 1], decay=0.0)
report("no lead in calibration", [0, 1, 2, 3], lead=False)
print("--- swapped: fitted on the holdout conversations/users, tested on the tune ones")
report("swapped: shipped parts, decay 0.3", [0, 1, 2, 3], swap=True)
report("swapped: no time part", [0, 1, 3], swap=True)
report("swapped: vector + text only", [0, 1], swap=True)
