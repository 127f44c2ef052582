"""Multi-hop and open-domain recall: compare candidate searches, try parts.

    # collect the product's candidates with each research option of the candidate search
    python -m lab.fit_recall --data $DATA --cache scratch/base.pickle
    python -m lab.fit_recall --data $DATA --cache scratch/c60.pickle --candidates 60
    python -m lab.fit_recall --data $DATA --cache scratch/s10.pickle --seeds 10
    python -m lab.fit_recall --data $DATA --cache scratch/fb05.pickle --feedback 0.5
    # every collection refitted on tune, side by side (the first is the reference)
    python -m lab.recall_hop compare scratch/base.pickle scratch/c60.pickle ...
    # reranking parts that need vectors the cache does not hold (embeds ~11k texts once)
    python -m lab.recall_hop rerank scratch/base.pickle --data $DATA

`compare` refits the ranking model and its calibration on the tune split of each collection,
with and without the calibration's lead term (`CAL_LEAD * (z - best z)`), at the product's
neighbour decay and with as many seeds as the collection read, and prints R@1/5/10 per file and
split, holdout questions won/lost against the first collection (sign test), evidence in the
candidates and R@10 per LoCoMo category, and candidates per question.

`rerank` keeps the candidates and adds one part at a time (refitted the same way): the cosine
to a feedback query (q + beta * mean of the best m candidates' vectors, normalised) as a fifth
part or instead of the vector part; the best sentence's cosine of a long turn; whether the
turn's speaker is named in the question (LoCoMo only: the product's memories have no speaker);
and a greedy session-diversity rerank of the top 10. The vectors (MiniLM, as stored) are
computed here and kept beside the cache (suffix `.vectors.pickle`).
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.locomo import turn_items
from lab.fit_recall import sign_test
from memory.recall import scoring
from memory.recall.statements import fit_logistic
from memory.stores.episodic import embedding_text

Q = dict[str, Any]
FILES = (("personal-dev.json", "personal", 5), ("locomo-dev.json", "LoCoMo", 10))
SENTENCE = re.compile(r"(?<=[.!?])\s+")
#: the neighbour rule these comparisons were made with: the floor-only rule
#: max(own, DECAY ** hops * seed's p), without the fitted neighbour weight
#: (`fit_recall.final_scores` has the product's rule)
DECAY = 0.3


def fit_and_rank(
    qs: list[Q], lead: bool, parts: Callable[[Q], np.ndarray] | None = None
) -> dict[int, np.ndarray]:
    """Refit on tune; per question R@1/5/10 (the neighbour rule of DECAY, the collection's
    seeds)."""
    xs = parts or (lambda q: q["x"])
    tune = [q for q in qs if q["tune"]]
    y = np.concatenate([q["y"] for q in tune])
    w = fit_logistic(np.vstack([xs(q) for q in tune]), y)

    def cal_x(q: Q) -> np.ndarray:
        z = xs(q) @ w[:-1] + w[-1]
        return np.stack([z, z - z.max()], 1) if lead else z[:, None]

    cal = fit_logistic(np.vstack([cal_x(q) for q in tune]), y)
    out: dict[int, list[float]] = {1: [], 5: [], 10: []}
    for q in qs:
        p = 1 / (1 + np.exp(-(cal_x(q) @ cal[:-1] + cal[-1])))
        out_p = final_with_neighbours(q, p)
        order = q["order"](out_p) if "order" in q else np.argsort(-out_p, kind="stable")
        for k in out:
            out[k].append(q["y"][order[:k]].sum() / q["n_evidence"])
    return {k: np.array(v) for k, v in out.items()}


def final_with_neighbours(q: Q, p: np.ndarray) -> np.ndarray:
    own = dict(zip(q["ids"], p, strict=True))
    out = p.copy()
    seeds = set(sorted(own, key=own.__getitem__, reverse=True)[: q.get("seeds", 5)])
    for i, rid in enumerate(q["ids"]):
        for seed, hops in q["links"][rid].items():
            if seed in seeds:
                out[i] = max(out[i], own[seed] * DECAY**hops)
    return out


def cells(qs: list[Q], r: dict[int, np.ndarray]) -> list[str]:
    out = []
    for f, _, _ in FILES:
        for tune in (True, False):
            idx = [i for i, q in enumerate(qs) if q["file"] == f and q["tune"] == tune]
            out.append("/".join(f"{r[k][idx].mean():.3f}" for k in (1, 5, 10)))
    return out


def won_lost(qs: list[Q], r: dict[int, np.ndarray], ref: dict[int, np.ndarray]) -> str:
    out = []
    for f, _, k in FILES:
        idx = [i for i, q in enumerate(qs) if q["file"] == f and not q["tune"]]
        d = r[k][idx] - ref[k][idx]
        won, lost = int((d > 0).sum()), int((d < 0).sum())
        out.append(f"{won}/{lost} (p {sign_test(won, lost):.2f})")
    return ", ".join(out)


HEAD = (
    "| variant | personal tune R@1/5/10 | personal holdout | LoCoMo tune | LoCoMo holdout "
    "| holdout won/lost (personal R@5, LoCoMo R@10) |\n|---|---|---|---|---|---|"
)


def compare(paths: list[Path]) -> None:
    runs = {p.stem: pickle.loads(p.read_bytes()) for p in paths}
    first = next(iter(runs.values()))
    for name, qs in runs.items():
        if [q["question"] for q in qs] != [q["question"] for q in first]:
            raise SystemExit(f"{name}: not the same questions as {paths[0]}")
    for lead in (True, False):
        print(f"\n# refitted on tune, calibration {'with' if lead else 'WITHOUT'} its lead term")
        print(HEAD)
        ref = None
        for name, qs in runs.items():
            r = fit_and_rank(qs, lead)
            ref = ref or r
            print(f"| {name} | " + " | ".join(cells(qs, r)) + f" | {won_lost(qs, r, ref)} |")
    print("\n# LoCoMo holdout by category: evidence in candidates / R@10 (with lead), candidates")
    print("| variant | multi-hop (1) | temporal (2) | open-domain (3) | single-hop (4) | cands |")
    print("|---|---|---|---|---|---|")
    for name, qs in runs.items():
        r = fit_and_rank(qs, True)
        row = []
        for cat in (1, 2, 3, 4):
            idx = [
                i
                for i, q in enumerate(qs)
                if q["file"] == "locomo-dev.json" and not q["tune"] and q.get("category") == cat
            ]
            held = np.mean([qs[i]["y"].sum() / qs[i]["n_evidence"] for i in idx])
            row.append(f"{held:.3f} / {r[10][idx].mean():.3f}")
        n = np.mean([len(q["ids"]) for q in qs])
        print(f"| {name} | " + " | ".join(row) + f" | {n:.0f} |")


def vectors(qs: list[Q], data: list[Path], cache: Path) -> tuple[dict[str, np.ndarray], dict]:
    """MiniLM vectors of every candidate text, question and long turn's sentence; and per
    candidate text its (speaker, description, session)."""
    turns: dict[str, tuple[str, str, str]] = {}
    for path in data:
        for sample in json.loads(path.read_text(encoding="utf-8")):
            for it in turn_items(sample["conversation"]):
                meta = (it["metadata"]["speaker"], it["text"], it["session_id"])
                turns[it["text"]] = meta
                turns[embedding_text(it["text"], it.get("context", ""))] = meta
    texts = {t for q in qs for t in q["texts"]} | {q["question"] for q in qs}
    texts |= {s for meta in turns.values() for s in sentences(meta[1])}
    vecs: dict[str, np.ndarray] = pickle.loads(cache.read_bytes()) if cache.exists() else {}
    todo = sorted(texts - set(vecs))
    if todo:
        from memory.embeddings.onnx_minilm import OnnxMiniLMEmbedder

        print(f"embedding {len(todo)} texts", file=sys.stderr)
        vecs.update(zip(todo, OnnxMiniLMEmbedder().embed_many(todo), strict=True))
        cache.write_bytes(pickle.dumps(vecs))
    return vecs, turns


def sentences(description: str) -> list[str]:
    """The sentences of a long turn ("Name (date): a. b.") as "Name: a", "Name: b" (none for
    a turn of one sentence)."""
    head, sep, body = description.partition("): ")
    speaker = head.split(" (")[0] if sep else ""
    body = body if sep else description
    parts = [p for p in SENTENCE.split(body) if len(p.split()) >= 3]
    return [f"{speaker}: {p}" if speaker else p for p in parts] if len(parts) >= 2 else []


def rerank(path: Path, data: list[Path]) -> None:
    qs = pickle.loads(path.read_bytes())
    vecs, turns = vectors(qs, data, path.with_suffix(".vectors.pickle"))
    for q in qs:
        q["qv"] = vecs[q["question"]]
        q["cv"] = np.stack([vecs[t] for t in q["texts"]])
        q["meta"] = [turns.get(t) or turns.get(t.split(" (replying to ")[0]) for t in q["texts"]]
    base_w = np.array([scoring.W_VECTOR, scoring.W_COVERAGE, scoring.W_TIME, scoring.W_STATED])

    def feedback(beta: float, m: int, replace: bool) -> Callable[[Q], np.ndarray]:
        def parts(q: Q) -> np.ndarray:
            if "fb" not in q or q["fb"][0] != (beta, m):
                top = np.argsort(-(q["x"] @ base_w))[:m]
                qp = q["qv"] + beta * q["cv"][top].mean(0)
                q["fb"] = ((beta, m), np.maximum(0.0, q["cv"] @ (qp / np.linalg.norm(qp))))
            f = q["fb"][1]
            if replace:
                x = q["x"].copy()
                x[:, 0] = f
                return x
            return np.hstack([q["x"], f[:, None]])

        return parts

    def best_sentence(q: Q) -> np.ndarray:
        if "sent" not in q:
            best = []
            for i, meta in enumerate(q["meta"]):
                ss = sentences(meta[1]) if meta else []
                best.append(max([q["x"][i, 0], *(float(vecs[s] @ q["qv"]) for s in ss)]))
            q["sent"] = np.array(best)
        return np.hstack([q["x"], q["sent"][:, None]])

    def speaker(q: Q) -> np.ndarray:
        words = set(re.findall(r"\w+", q["question"].lower()))
        named = [float(bool(m) and m[0].lower() in words) for m in q["meta"]]
        return np.hstack([q["x"], np.array(named)[:, None]])

    variants: dict[str, Callable[[Q], np.ndarray] | None] = {"base": None}
    for beta in (0.5, 1.0):
        for m in (3, 5, 10):
            variants[f"feedback cosine, 5th part, beta {beta}, m {m}"] = feedback(beta, m, False)
            variants[f"feedback cosine as vector, beta {beta}, m {m}"] = feedback(beta, m, True)
    variants["best sentence's cosine, 5th part"] = best_sentence
    variants["speaker named in the question, 5th part"] = speaker
    for lead in (True, False):
        print(f"\n# {path.name}: calibration {'with' if lead else 'WITHOUT'} its lead term")
        print(HEAD)
        ref = fit_and_rank(qs, lead)
        for name, parts in variants.items():
            r = fit_and_rank(qs, lead, parts)
            print(f"| {name} | " + " | ".join(cells(qs, r)) + f" | {won_lost(qs, r, ref)} |")
        for lam in (-0.02, 0.02, 0.05):
            for q in qs:
                q["order"] = diversified(q, lam)
            r = fit_and_rank(qs, lead)
            for q in qs:
                del q["order"]
            name = f"session diversity {lam}"
            print(f"| {name} | " + " | ".join(cells(qs, r)) + f" | {won_lost(qs, r, ref)} |")


def diversified(q: Q, lam: float) -> Callable[[np.ndarray], list[int]]:
    """Greedy top 10: each pick lowers the others of its session by `lam` (< 0 raises them)."""
    session = [m[2] if m else str(i) for i, m in enumerate(q["meta"])]

    def order(p: np.ndarray) -> list[int]:
        left, picked = list(range(len(p))), []
        while left and len(picked) < 10:
            best = max(
                left, key=lambda i: p[i] - lam * sum(session[j] == session[i] for j in picked)
            )
            picked.append(best)
            left.remove(best)
        return picked

    return order


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("caches", nargs="+", type=Path)
    r = sub.add_parser("rerank")
    r.add_argument("cache", type=Path)
    r.add_argument("--data", nargs="+", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "compare":
        compare(args.caches)
    else:
        rerank(args.cache, args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
