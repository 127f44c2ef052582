"""Hybrid recall: vector similarity + BM25, fused, with optional recency and importance.

For one memory type, two RedisVL queries run in one pipelined round trip (`batch_query`): a
`VectorQuery` (cosine) and a `TextQuery` (BM25STD over word tokens). Every candidate gets:

    vector     = cosine similarity to the query (computed from the stored vector for
                 candidates that only the text query found)
    text       = BM25 score / best BM25 score of this query (0 when not matched)
    recency    = 0.5 ** (age_days / half_life_days)
    importance = stored importance (pinned memories count as 1.0)
    final      = (1 - w_r - w_i) * (w_v * vector + w_t * text) / (w_v + w_t)
                 + w_r * recency + w_i * importance

Candidates carry only the fields scoring needs (`SCORE_FIELDS`, plus the vector for BM25-only
candidates); the top k of every type are then read whole in one pipelined round trip
(`hydrate`). Parsing 16 fields of 60 candidates per type cost more than that round trip.

Hits below `min_score` are dropped (recorded as a miss when nothing is left). The relevance
band (high >= 0.7, moderate >= 0.4, low) is computed on `final`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import redis
from redisvl.index import SearchIndex
from redisvl.query import TextQuery, VectorQuery
from redisvl.query.filter import FilterExpression

from memory.models import MemoryType, RecallHit, ScoreParts, relevance_band
from memory.records import bytes_vector, decode
from memory.schema import VECTOR_FIELD
from memory.textquery import bm25_text

DAY_MS = 86_400_000


#: Fields fetched with every candidate: what `fuse` needs to score it.
SCORE_FIELDS = ["timestamp", "importance", "pinned"]


@dataclass(frozen=True)
class RecallWeights:
    vector: float = 0.6
    text: float = 0.4
    recency: float = 0.05
    importance: float = 0.05
    half_life_days: float = 30.0
    min_score: float = 0.2
    #: candidates fetched per query before fusion (>= k)
    candidates: int = 30


@dataclass
class HybridRequest:
    """The two queries of one hybrid search, ready for `batch_query`."""

    memory_type: MemoryType
    index: SearchIndex
    vector_query: VectorQuery
    text_query: TextQuery | None
    k: int


def build_request(
    memory_type: MemoryType,
    index: SearchIndex,
    query_text: str,
    query_vec: np.ndarray,
    text_fields: dict[str, float],
    filter_expression: FilterExpression | None,
    k: int,
    weights: RecallWeights,
) -> HybridRequest:
    n = max(k, weights.candidates)
    vq = VectorQuery(
        vector=np.asarray(query_vec, dtype=np.float32).tobytes(),
        vector_field_name=VECTOR_FIELD,
        return_fields=SCORE_FIELDS,
        filter_expression=filter_expression,
        num_results=n,
    )
    terms = bm25_text(query_text)
    tq = None
    if terms:
        tq = TextQuery(
            text=terms,
            text_field_name=text_fields,
            filter_expression=filter_expression,
            return_fields=[*SCORE_FIELDS, VECTOR_FIELD],
            num_results=n,
            stopwords=None,  # already removed by bm25_text
        )
    return HybridRequest(memory_type, index, vq, tq, k)


def run_requests(requests: Sequence[HybridRequest]) -> list[tuple[list[dict], list[dict]]]:
    """Execute all requests; queries on the same index share one pipelined round trip."""
    out: list[tuple[list[dict], list[dict]]] = []
    for req in requests:
        queries: list[Any] = [req.vector_query] + ([req.text_query] if req.text_query else [])
        results = req.index.batch_query(queries, batch_size=len(queries))
        out.append((results[0], results[1] if len(results) > 1 else []))
    return out


def fuse(
    memory_type: MemoryType,
    vector_rows: list[dict[str, Any]],
    text_rows: list[dict[str, Any]],
    query_vec: np.ndarray,
    k: int,
    weights: RecallWeights,
    now_ms: int,
    text_of: Callable[[dict[str, Any]], str] = lambda rec: "",
) -> list[RecallHit]:
    """Fuse vector and BM25 candidates into scored, banded hits (best first). The hits'
    `record` holds the scoring fields until `hydrate` fills in the rest."""
    candidates: dict[str, dict[str, Any]] = {}
    parts: dict[str, dict[str, float]] = {}
    for row in vector_rows:
        rec = decode(row)
        rid = _row_id(row)
        rec["id"] = rid
        candidates[rid] = rec
        parts[rid] = {"vector": max(0.0, 1.0 - float(rec.get("vector_distance", 1.0))), "text": 0.0}
    best_bm25 = max((float(r.get("score", 0.0)) for r in text_rows), default=0.0)
    q = np.asarray(query_vec, dtype=np.float32)
    for row in text_rows:
        rid = _row_id(row)
        bm25 = float(row.get("score", 0.0))
        text_part = bm25 / best_bm25 if best_bm25 > 0 else 0.0
        if rid not in candidates:
            rec = decode(row)
            rec["id"] = rid
            candidates[rid] = rec
            raw = row.get(VECTOR_FIELD)
            sim = 0.0
            if isinstance(raw, bytes | bytearray) and len(raw) == q.nbytes:
                sim = float(np.dot(bytes_vector(raw), q))
            parts[rid] = {"vector": max(0.0, sim), "text": text_part}
        else:
            parts[rid]["text"] = text_part

    w = weights
    relevance_share = max(0.0, 1.0 - w.recency - w.importance)
    denom = (w.vector + w.text) or 1.0
    hits: list[RecallHit] = []
    for rid, rec in candidates.items():
        p = parts[rid]
        ts = int(rec.get("timestamp") or 0)
        age_days = max(0.0, (now_ms - ts) / DAY_MS) if ts else 365.0
        recency = math.pow(0.5, age_days / w.half_life_days)
        importance = 1.0 if rec.get("pinned") else float(rec.get("importance") or 0.0)
        final = (
            relevance_share * (w.vector * p["vector"] + w.text * p["text"]) / denom
            + w.recency * recency
            + w.importance * importance
        )
        final = min(1.0, max(0.0, final))
        if final < w.min_score:
            continue
        rec.pop("vector_distance", None)
        rec.pop("score", None)
        hits.append(
            RecallHit(
                id=rid,
                memory_type=memory_type,
                text=text_of(rec),
                score=round(final, 4),
                band=relevance_band(final),
                parts=ScoreParts(
                    vector=round(p["vector"], 4),
                    text=round(p["text"], 4),
                    recency=round(recency, 4),
                    importance=round(importance, 4),
                    final=round(final, 4),
                ),
                record=rec,
            )
        )
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits[:k]


def hydrate(
    client: redis.Redis,
    groups: Sequence[tuple[list[RecallHit], Callable[[str], str], list[str], str]],
) -> None:
    """Read the stored fields of every hit, all types in one pipelined round trip.

    Each group is (hits, key of an id, fields to read, the field that is the hit's text).
    A memory deleted between the search and this read is dropped from its list."""
    pipe = client.pipeline(transaction=False)
    for hits, key_of, fields, _ in groups:
        for h in hits:
            pipe.hmget(key_of(h.id), fields)
    replies = iter(pipe.execute()) if any(hits for hits, *_ in groups) else iter(())
    for hits, _, fields, text_field in groups:
        kept = []
        for h in hits:
            values = next(replies)
            if all(v is None for v in values):
                continue
            rec = decode({f: v for f, v in zip(fields, values, strict=True) if v is not None})
            rec["id"] = h.id
            h.record = rec
            h.text = str(rec.get(text_field, ""))
            kept.append(h)
        hits[:] = kept


def _row_id(row: dict[str, Any]) -> str:
    """A result's id is its Redis key; the memory id is the key's last segment."""
    rid = row.get("id")
    if isinstance(rid, bytes):
        rid = rid.decode()
    return str(rid).rsplit(":", 1)[-1]
