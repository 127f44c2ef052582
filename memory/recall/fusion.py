"""Fusion: a store's candidates, marked by `memory.recall.hybrid`, scored once each by
`memory.recall.scoring`; a seed's probability added to its session neighbours' evidence; the best
k above `min_score` kept as banded hits. `RecallWeights` holds recall's settings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.models import MemoryType, RecallHit, ScoreParts, relevance_band
from memory.recall import scoring
from memory.recall.dates import DAY_MS
from memory.stores.records import as_str, bytes_vector, vector_nbytes
from memory.stores.schema import VECTOR_FIELD

#: What the user's own facts are stored as (the extractor's, triggers' and remember tool's
#: kinds); a logged exchange ("interaction") or a summary of one is not a fact the user stated.
OWN_FACT_KINDS = frozenset(
    {"preference", "goal", "health_event", "fact", "correction", "milestone", "feedback"}
)


@dataclass(frozen=True)
class RecallWeights:
    """Recall settings; the model's weights are the reviewed constants of `memory.recall.scoring`.
    `recency` / `importance` are its unfitted nudges (log-odds per unit)."""

    recency: float = scoring.W_RECENCY
    importance: float = scoring.W_IMPORTANCE
    half_life_days: float = 30.0
    min_score: float = scoring.MIN_SCORE
    #: candidates fetched per query before scoring (>= k)
    candidates: int = 30
    #: 0 switches off the date-in-the-query signal
    time_match: float = 1.0
    #: log-odds a session neighbour gains per unit of its best seed's probability (0 = off:
    #: no neighbours at all)
    neighbour: float = scoring.W_NEIGHBOUR
    #: a neighbour's final is at least this ** hops times its seed's probability
    neighbour_floor: float = scoring.NEIGHBOUR_FLOOR
    neighbour_hops: int = 2
    #: how many of the best candidates look for neighbours
    neighbour_seeds: int = 5
    #: neighbours are memories of the same session at most this far apart in time
    neighbour_window_ms: int = 10 * 60_000


def fuse(
    memory_type: MemoryType,
    vector_rows: list[dict[str, Any]],
    text_rows: list[dict[str, Any]],
    query_vec: np.ndarray,
    k: int,
    weights: RecallWeights,
    now_ms: int,
    scored: dict[str, dict[str, Any]] | None = None,
) -> list[RecallHit]:
    """Score the candidates of both queries into banded hits (best first). The hits'
    `record` holds the scoring fields and their `text` is empty until `hydrate` reads them.

    Rows marked by `run_requests` (`_cover`, `_time_match`, `_stated`, `_neighbour_of`) carry
    the coverage, time, stated and neighbour signals of the module docstring. `scored`: the
    same rows already scored (the request's, by `prepare`/`take_neighbours`), used once."""
    w = weights
    if scored is None:
        scored = score_candidates(vector_rows, text_rows, query_vec, w, now_ms)
    if w.neighbour > 0:
        add_neighbour_part(scored, w.neighbour, w.neighbour_floor)
    best = sorted(scored.items(), key=lambda item: item[1]["final"], reverse=True)
    hits: list[RecallHit] = []
    for rid, c in best[:k]:  # only the kept ones become hits (a model each is not free)
        final = min(1.0, max(0.0, c["final"]))
        if final < w.min_score:
            break
        rec = c["rec"]
        hits.append(
            RecallHit(
                id=rid,
                memory_type=memory_type,
                text="",
                score=round(final, 4),
                band=relevance_band(final),
                parts=ScoreParts(
                    vector=round(c["vector"], 4),
                    text=round(c["text"], 4),
                    recency=round(c["recency"], 4),
                    importance=round(c["importance"], 4),
                    time=c["time"],
                    stated=round(c["stated"], 4),
                    own=c["own"],
                    neighbour=round(min(1.0, c.get("neighbour", 0.0)), 4),
                    final=round(final, 4),
                ),
                record=rec,
            )
        )
    return hits


def add_neighbour_part(scored: dict[str, dict[str, Any]], weight: float, floor: float) -> None:
    """Each session neighbour of a seed gets `neighbour` = the best own probability among its
    seeds, and its final is calibrated from z + `weight` times it (every other final again
    against the new best z, which may have risen), but is at least `floor ** hops` times a
    seed's probability. A neighbour's own match and its seed's add up: the answer next to a
    strong hit that also matches on its own outranks a turn that only matches (BENCHMARKS.md,
    Decisions). The floor keeps the reply that shares nothing with the question ("The Alta Via
    1") in sight when the turns were stored without the one before as their context, as a
    chat's messages are. `z` and `own_final` stay the candidate's own: a second call gives the
    same finals."""
    seed_final = {rid: c["own_final"] for rid, c in scored.items()}
    total: dict[str, float] = {}
    least: dict[str, float] = {}
    for rid, c in scored.items():
        best = lowest = 0.0
        for seed, hops in c["neighbour_of"].items():
            p = seed_final.get(seed, 0.0)
            best = max(best, p)
            lowest = max(lowest, p * floor**hops)
        c["neighbour"] = best
        total[rid] = c["z"] + weight * best
        least[rid] = lowest
    best_z = max(total.values(), default=0.0)
    for rid, c in scored.items():
        z = total[rid]
        c["final"] = max(least[rid], scoring.calibrated(z, z if c["own"] else best_z))


def score_candidates(
    vector_rows: list[dict[str, Any]],
    text_rows: list[dict[str, Any]],
    query_vec: np.ndarray,
    w: RecallWeights,
    now_ms: int,
    into: dict[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """id -> {rec, vector, text, time, stated, recency, importance, z, final, own_final,
    session, timestamp, neighbour_of} (final and own_final before the neighbour part; rec holds
    the scoring fields).
    `into`: candidates scored before, to which the rows (new ids only) are added; every
    final is calibrated again (the best z may have changed)."""
    out: dict[str, dict[str, Any]] = {} if into is None else into
    new: list[dict[str, Any]] = []
    q = np.asarray(query_vec, dtype=np.float32)
    q_nbytes = vector_nbytes(len(q))
    time_on = w.time_match > 0
    # One pass over both lists, the per-row work inline (~90 rows per recall): a memory's
    # fields are read once, its marks (`prepare`'s) merged from each of its rows.
    for rows, from_knn in ((vector_rows, True), (text_rows, False)):
        for row in rows:
            rid = row_id(row)
            c = out.get(rid)
            if c is None:
                c = out[rid] = _candidate(rid, row)
                new.append(c)
                if not from_knn:
                    # Only the text query found it: the cosine from its stored vector, one at
                    # a time (converting them in one batch measured slower in the app's
                    # process: numpy releases the GIL for > 500 values, another thread gets it)
                    raw = row.get(VECTOR_FIELD)
                    if isinstance(raw, bytes | bytearray) and len(raw) == q_nbytes:
                        c["vector"] = max(0.0, float(np.dot(bytes_vector(raw), q)))
            stated = float(row.get("_stated", 0.0))
            if stated > c["stated"]:
                c["stated"] = stated
            if time_on and row.get("_time_match"):
                c["time"] = 1.0
            cover = float(row.get("_cover", 0.0))
            if cover > c["text"]:
                c["text"] = cover
            if row.get("_foreign"):  # the cosine is no evidence here (hybrid.py)
                c["foreign"] = True
            linked = row.get("_neighbour_of")
            if linked:
                c["neighbour_of"].update(linked)
            if from_knn:
                c["vector"] = max(0.0, 1.0 - float_of(row.get("vector_distance"), 1.0))
    half_life = w.half_life_days
    for c in new:
        if c.get("foreign"):
            c["vector"] = 0.0
        rec = c["rec"]
        ts = rec["timestamp"]  # an int (`int_of`), 0 when unknown
        age_days = max(0.0, (now_ms - ts) / DAY_MS) if ts else 365.0
        c["recency"] = math.pow(0.5, age_days / half_life)
        c["importance"] = 1.0 if rec["pinned"] else float(rec["importance"] or 0.0)
        c["z"] = scoring.logit(
            c["vector"],
            c["text"],
            c["time"],
            c["stated"],
            c["recency"],
            c["importance"],
            w_recency=w.recency,
            w_importance=w.importance,
            own=c["own"],
        )
        c["timestamp"] = ts
        c["session"] = rec["session"]
    # the user's own facts are not measured against a best (scoring's docstring)
    best_z = max((c["z"] for c in out.values()), default=0.0)
    for c in out.values():
        c["final"] = c["own_final"] = scoring.calibrated(c["z"], c["z"] if c["own"] else best_z)
    return out


def _candidate(rid: str, row: dict[str, Any]) -> dict[str, Any]:
    """A new candidate from its first row: only what scoring reads (`hydrate` reads the kept
    hits whole); its parts start at 0 and take the best of its rows."""
    event_type = _text(row.get("event_type"))
    rec = {
        "id": rid,
        "timestamp": int_of(row.get("timestamp")),
        "importance": float_of(row.get("importance")),
        "pinned": _text(row.get("pinned")) == "1",
        "session": _text(row.get("session")),
        "event_type": event_type,
    }
    return {
        "rec": rec,
        "vector": 0.0,
        "text": 0.0,
        "time": 0.0,
        "stated": 0.0,
        "own": 1.0 if row.get("_own") and event_type in OWN_FACT_KINDS else 0.0,
        "neighbour_of": {},
    }


def _text(value: Any) -> str:
    """A row's field as text: search rows hold text, rows read by HMGET bytes ('' if absent)."""
    if type(value) is str:
        return value
    return as_str(value) if value else ""


# The helpers below take the text of a search row as it is (`type(...) is str`: the common
# case, without `as_str`'s call) and decode anything else as before.
def int_of(value: Any) -> int:
    try:
        return int(float(value if type(value) is str else as_str(value)))
    except (TypeError, ValueError):
        return 0


def float_of(value: Any, default: float = 0.0) -> float:
    try:
        return float(value if type(value) is str else as_str(value))
    except (TypeError, ValueError):
        return default


def row_id(row: dict[str, Any]) -> str:
    """A result's id is its Redis key; the memory id is the key's last segment."""
    rid = row.get("id")
    if type(rid) is not str:
        rid = rid.decode() if isinstance(rid, bytes) else str(rid)
    return rid.rsplit(":", 1)[-1]
