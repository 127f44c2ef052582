"""Vector pseudo-relevance feedback: a second KNN from the query moved toward its best hits.

A question whose evidence is spread over several memories ("Which events has Jon taken part in
to promote his business?") often finds one or two of them by meaning and misses the rest,
worded unlike the question but like each other. Rocchio's feedback, on vectors and without a
model: the query vector plus `beta` times the mean vector of the best candidates, normalised,
is searched once more (one extra round trip); what it finds beyond the first candidates joins
them and is scored like any other (its `vector` part stays the cosine to the QUESTION).

Not adopted: it did not rank what it adds into the top 10 (BENCHMARKS.md, Decisions). `python
-m lab.fit_recall --feedback BETA` collects candidates with it: `with_vectors` before the
request runs, `add_feedback` after. The product added the feedback candidates before choosing
the seeds of session neighbours; here they come after the neighbours are read, so they seed
none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from redisvl.index import SearchIndex
from redisvl.query import VectorQuery
from redisvl.query.filter import FilterExpression

from memory.recall.fusion import row_id, score_candidates
from memory.recall.hybrid import SCORE_FIELDS, HybridRequest, _mark
from memory.recall.search import queue_search, reply_rows
from memory.stores.records import bytes_vector, vector_bytes, vector_nbytes
from memory.stores.schema import VECTOR_FIELD


def feedback_vector(query_vec: np.ndarray, seeds: Sequence[np.ndarray], beta: float) -> np.ndarray:
    """The query moved toward the mean of the seed vectors, unit length (the stored vectors
    are unit length: cosine distance stays comparable)."""
    q = np.asarray(query_vec, dtype=np.float32)
    if not seeds:
        return q
    moved = q + beta * np.mean(np.stack(seeds), axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm > 0 else q


def feedback_rows(
    index: SearchIndex,
    query_vec: np.ndarray,
    seed_vectors: Sequence[Any],
    beta: float,
    return_fields: list[str],
    filter_expression: FilterExpression | None,
    num_results: int,
) -> list[dict[str, Any]]:
    """The rows of the feedback KNN (one round trip), with their stored vectors (raw bytes)."""
    seeds = [
        bytes_vector(v)
        for v in seed_vectors
        if isinstance(v, bytes | bytearray) and len(v) == vector_nbytes(len(query_vec))
    ]
    if not seeds:
        return []
    vq = VectorQuery(
        vector=vector_bytes(feedback_vector(query_vec, seeds, beta)),
        vector_field_name=VECTOR_FIELD,
        return_fields=[*return_fields, VECTOR_FIELD],
        filter_expression=filter_expression,
        num_results=num_results,
    )
    vq.return_fields(*return_fields, VECTOR_FIELD, vq.DISTANCE_ID, skip_decode=[VECTOR_FIELD])
    pipe = index.client.pipeline(transaction=False)
    queue_search(pipe, index.name, vq)
    return reply_rows(pipe.execute()[0], vq)


def with_vectors(req: HybridRequest) -> None:
    """Have the request's KNN return the stored vectors, undecoded: the seeds' vectors."""
    vq = req.vector_query
    vq.return_fields(
        *SCORE_FIELDS,
        *req.text_fields,
        VECTOR_FIELD,
        vq.DISTANCE_ID,  # replacing the fields drops it otherwise
        skip_decode=[VECTOR_FIELD],
    )


def add_feedback(
    req: HybridRequest,
    vrows: list[dict[str, Any]],
    trows: list[dict[str, Any]],
    beta: float,
    docs: int,
    now_ms: int,
) -> None:
    """Append the feedback KNN's new candidates (from the best `docs`) to the text rows."""
    q = req.query_vec
    if q is None or beta <= 0 or docs <= 0:
        return
    scored = score_candidates(vrows, trows, q, req.weights, now_ms)
    raw = {row_id(r): r.get(VECTOR_FIELD) for r in (*vrows, *trows)}
    best = sorted(scored, key=lambda rid: scored[rid]["final"], reverse=True)[:docs]
    fields, n = [*SCORE_FIELDS, *req.text_fields], max(req.k, req.weights.candidates)
    rows = feedback_rows(
        req.index, q, [raw[r] for r in best], beta, fields, req.filter_expression, n
    )
    new_rows = [{**r, "score": 0.0} for r in rows if row_id(r) not in scored]
    _mark(req, new_rows, req.idf)
    trows.extend(new_rows)
