"""Hybrid recall for one memory type: the vector and BM25 queries that run in recall's one round
trip, their replies read and marked (`SCORE_FIELDS`; the kept ones are read whole later), and
the session neighbours of the best logged exchanges; `memory.recall.fusion` scores them. BM25
only chooses candidates (docs/recall.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from redisvl.index import SearchIndex
from redisvl.query import TextQuery, VectorQuery
from redisvl.query.filter import FilterExpression

from memory.models import MemoryType
from memory.recall import neighbours, scoring
from memory.recall.dates import DAY_MS, time_ranges, without_dates
from memory.recall.fusion import (
    OWN_FACT_KINDS,
    RecallWeights,
    fuse,
    int_of,
    row_id,
    score_candidates,
)
from memory.recall.search import queue_search, reply_rows
from memory.recall.statements import RequestKind, StatementModel, request_kind
from memory.recall.terms import bm25_text
from memory.recall.textquery import TermUnionTextQuery
from memory.stores.records import as_str, bytes_vector, vector_bytes, vector_nbytes
from memory.stores.schema import VECTOR_FIELD
from memory.text import embedder_knows

#: Fields fetched with every candidate: what `fuse` needs to score it (the session TAG value
#: finds an episodic hit's neighbours; other types have none).
SCORE_FIELDS = ["timestamp", "importance", "pinned", "session", "event_type"]


@dataclass
class HybridRequest:
    """The two queries of one hybrid search, ready for `queue_requests`."""

    memory_type: MemoryType
    index: SearchIndex
    vector_query: VectorQuery
    text_query: TextQuery | None
    k: int
    weights: RecallWeights = field(default_factory=RecallWeights)
    query_vec: np.ndarray | None = None
    filter_expression: FilterExpression | None = None
    #: [start, end) ms ranges of the dates the query names
    time_ranges: list[tuple[int, int]] = field(default_factory=list)
    #: session TAG value -> key of that session's timeline (episodic only: neighbours)
    timeline_key: Callable[[str], str] | None = None
    #: the query's content words as roots and the fields (name -> weight) they count in: the
    #: text fields, and the tags where they count as words
    terms: list[str] = field(default_factory=list)
    text_fields: dict[str, float] = field(default_factory=dict)
    #: False when the embedder does not know the query's language: no cosine is trusted
    knows_query: bool = True
    #: set when the query wants preferences: scores how much each candidate states a preference
    statements: StatementModel | None = None
    #: "advice" (advice or a plan) or "tastes" (the user's tastes): the user's own facts count
    personal: RequestKind | None = None
    #: set by `prepare`: the candidates scored once (before the neighbour boost), reused by
    #: `fuse`; the seeds whose session neighbours `queue_neighbours` reads
    scored: dict[str, dict[str, Any]] | None = None
    seeds: list[dict[str, Any]] = field(default_factory=list)
    idf: list[float] = field(default_factory=list)
    now_ms: int = 0


# --- query construction ----------------------------------------------------------------------
def build_request(
    memory_type: MemoryType,
    index: SearchIndex,
    query_text: str,
    query_vec: np.ndarray,
    text_fields: dict[str, float],
    filter_expression: FilterExpression | None,
    k: int,
    weights: RecallWeights,
    timeline_key: Callable[[str], str] | None = None,
    statements: StatementModel | None = None,
    tag_words: tuple[str, float] | None = None,
) -> HybridRequest:
    """`tag_words`: a TAG field whose tags count as words of the memory, and their weight."""
    n = max(k, weights.candidates)
    # the fields whose words the query's words are matched in (the text fields, the tags)
    word_fields = {**text_fields, **dict([tag_words] if tag_words else [])}
    ranges = time_ranges(query_text, _now_ms()) if weights.time_match > 0 else []
    # a date is the time part's to judge; with that part off, its words count as words
    query_words = scoring.terms_of_query(without_dates(query_text) if ranges else query_text)
    personal = request_kind(query_text)
    if personal is None:
        statements = None
    vq = VectorQuery(
        vector=vector_bytes(query_vec),
        vector_field_name=VECTOR_FIELD,
        return_fields=[*SCORE_FIELDS, *word_fields],
        filter_expression=filter_expression,
        num_results=n,
    )
    if statements is not None:
        # the stored vectors, undecoded: the statement classifier reads them
        vq.return_fields(
            *SCORE_FIELDS,
            *word_fields,
            VECTOR_FIELD,
            vq.DISTANCE_ID,  # replacing the fields drops it otherwise
            skip_decode=[VECTOR_FIELD],
        )
    terms = bm25_text(query_text)
    tq = None
    if terms:
        tq = TermUnionTextQuery(
            text=terms,
            text_field_name=text_fields,
            filter_expression=filter_expression,
            num_results=n,
            stopwords=None,  # already removed by bm25_text
            tag_field=tag_words[0] if tag_words else None,
            tag_words=[f for forms in scoring.forms_of(query_words) for f in forms],
        )
        # The raw vector bytes: decoded as text they never matched the query's size, and a
        # memory only BM25 found was scored as if its cosine were 0.
        tq.return_fields(*SCORE_FIELDS, *word_fields, VECTOR_FIELD, skip_decode=[VECTOR_FIELD])
    return HybridRequest(
        memory_type,
        index,
        vq,
        tq,
        k,
        weights=weights,
        query_vec=np.asarray(query_vec, dtype=np.float32),
        filter_expression=filter_expression,
        time_ranges=ranges,
        timeline_key=timeline_key,
        terms=query_words,
        text_fields=word_fields,
        knows_query=embedder_knows(query_text),
        statements=statements,
        personal=personal if memory_type is MemoryType.EPISODIC else None,
    )


def queue_requests(pipe: Any, requests: Sequence[HybridRequest]) -> None:
    """Queue both queries of every request on the caller's pipeline (one round trip for all
    stores, with whatever else the caller reads); `prepare` reads the replies."""
    for req in requests:
        queue_search(pipe, req.index.name, req.vector_query)
        if req.text_query is not None:
            queue_search(pipe, req.index.name, req.text_query)


def run_requests(requests: Sequence[HybridRequest]) -> list[tuple[list[dict], list[dict]]]:
    """Execute all requests in one pipelined round trip (all on the first one's client); the
    candidates of each, marked for `fuse` (reading session neighbours: one more round trip)."""
    if not requests:
        return []
    pipe = requests[0].index.client.pipeline(transaction=False)
    queue_requests(pipe, requests)
    replies = pipe.execute()
    out: list[tuple[list[dict], list[dict]]] = []
    for req in requests:
        vrows, trows = prepare(req, replies, _now_ms())
        if req.seeds:
            pipe = req.index.client.pipeline(transaction=False)
            queue_neighbours(pipe, req)
            take_neighbours(req, vrows, trows, pipe.execute())
        out.append((vrows, trows))
    return out


# --- what run_requests adds for fuse ---------------------------------------------------------
def annotate_coverage(
    rows: Sequence[dict[str, Any]],
    terms: Sequence[str],
    text_fields: dict[str, float],
    idf: list[float] | None = None,
) -> list[float]:
    """Mark each row with `_cover`: the IDF-weighted share of the query's words it holds, IDF
    taken over the distinct candidates in `rows` (or the given `idf`); returns the IDF."""
    if not terms:
        return []
    forms = scoring.term_forms(tuple(terms))
    names = list(text_fields)
    weights = [text_fields[n] for n in names]
    ids = [row_id(row) for row in rows]
    # per distinct memory (both queries may return it): which terms it holds, in which field
    matches: dict[str, list[float | None]] = {}
    for rid, row in zip(ids, rows, strict=True):
        if rid not in matches:
            texts = []
            for name in names:
                value = row.get(name)
                # search rows hold text, rows read by HMGET (neighbours) bytes
                texts.append(value if type(value) is str else as_str(value or b""))
            matches[rid] = forms.matches(texts, weights)
    if idf is None:
        idf = scoring.idf_of_matches(len(forms.forms), list(matches.values()))
    total = sum(idf)
    cover = {rid: scoring.coverage_of_matches(idf, m, total) for rid, m in matches.items()}
    for rid, row in zip(ids, rows, strict=True):
        row["_cover"] = cover[rid]
    return idf


def prepare(
    req: HybridRequest, replies: list[Any], now_ms: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The request's candidate rows from its replies (popped from the front of `replies`),
    marked for `fuse`: `_cover` (see `annotate_coverage`), `_stated`, `_own`, `_time_match`
    (dated inside a date of the query). When the request looks for session neighbours, its
    candidates are scored here (`req.scored`, reused by `fuse`) to pick `req.seeds`."""
    vector_rows = reply_rows(replies.pop(0), req.vector_query)
    text_rows = reply_rows(replies.pop(0), req.text_query) if req.text_query is not None else []
    w = req.weights
    req.idf = _mark(req, [*vector_rows, *text_rows])
    req.scored, req.seeds, req.now_ms = None, [], now_ms
    if (
        req.timeline_key is not None
        and req.personal is None  # advice/tastes: answered by what the user stated
        and w.neighbour > 0
        and w.neighbour_hops >= 1
        and req.query_vec is not None
    ):
        req.scored = score_candidates(vector_rows, text_rows, req.query_vec, w, now_ms)
        req.seeds = neighbours.seeds_of(req.scored, w.neighbour_seeds)
    return vector_rows, text_rows


def queue_neighbours(pipe: Any, req: HybridRequest) -> None:
    """Queue the timeline reads of the request's seeds (`prepare`) on the caller's pipeline;
    `take_neighbours` reads their replies."""
    assert req.timeline_key is not None  # seeds exist only then
    w = req.weights
    neighbours.queue_timeline_reads(pipe, req.seeds, req.timeline_key, w.neighbour_window_ms)


def likely_hits(req: HybridRequest) -> list[str]:
    """Ids that include the request's top k after the neighbour boost unless a neighbour is
    among them: the boost only raises the memories it links, and a best z that rises lowers
    every other candidate alike, so the best k by z. (The user's own facts, calibrated on their
    own, are no candidates here: `prepare` scores only requests that are not advice.)"""
    scored = sorted((req.scored or {}).items(), key=lambda x: x[1]["z"], reverse=True)
    return [rid for rid, _ in scored[: req.k]]


def take_neighbours(
    req: HybridRequest,
    vector_rows: list[dict[str, Any]],
    text_rows: list[dict[str, Any]],
    sides: list[Any],
) -> None:
    """Mark the candidates that are session neighbours of a seed with `_neighbour_of`
    ({seed id: hops}), from the replies of `queue_neighbours` (popped from the front of
    `sides`); neighbours found by neither query are read (one more round trip) and appended
    to the text rows with a BM25 score of 0, and `req.scored` is brought up to date."""
    if not req.seeds:
        return
    assert req.scored is not None and req.query_vec is not None
    links = neighbours.links_from(req.seeds, sides, req.weights.neighbour_hops)
    known: dict[str, list[dict[str, Any]]] = {}
    for row in (*vector_rows, *text_rows):
        known.setdefault(row_id(row), []).append(row)
    missing = [rid for rid in links if rid not in known]
    row_of: dict[str, dict[str, Any]] = {}
    if missing:
        row_of = neighbours.read_rows(
            req.index.client,
            _key_prefix(vector_rows or text_rows),
            missing,
            [*SCORE_FIELDS, *req.text_fields, VECTOR_FIELD],
        )
    new_rows = []
    for rid, seeds_of in links.items():
        if rid in known:
            for row in known[rid]:
                row["_neighbour_of"] = seeds_of
            req.scored[rid]["neighbour_of"].update(seeds_of)
        elif rid in row_of:  # deleted or superseded memories are no neighbours
            new_rows.append({**row_of[rid], "score": 0.0, "_neighbour_of": seeds_of})
    if new_rows:
        _mark(req, new_rows, req.idf)
        text_rows.extend(new_rows)
        score_candidates([], new_rows, req.query_vec, req.weights, req.now_ms, into=req.scored)


def _mark(
    req: HybridRequest, rows: list[dict[str, Any]], idf: list[float] | None = None
) -> list[float]:
    """Mark candidates for `fuse` (`prepare`'s docstring), the neighbours found later with the
    first ones' `idf`; returns the IDF."""
    idf = annotate_coverage(rows, req.terms, req.text_fields, idf)
    _mark_foreign(req, rows)
    _mark_stated(req, rows)
    for row in rows:
        row["_own"] = req.personal == "advice"
        if req.time_ranges and _in_ranges(row, req.time_ranges):
            row["_time_match"] = True
    return idf


def _mark_foreign(req: HybridRequest, rows: Sequence[dict[str, Any]]) -> None:
    """Mark with `_foreign` the rows whose cosine is no evidence: the query or the memory's
    text (its first text field) is in a language the embedder does not know."""
    main = next(iter(req.text_fields), None)
    for row in rows:
        if not req.knows_query:
            row["_foreign"] = True
        elif main is not None:
            value = row.get(main)
            text = value if type(value) is str else as_str(value or b"")
            if not embedder_knows(text):
                row["_foreign"] = True


def _mark_stated(req: HybridRequest, rows: Sequence[dict[str, Any]]) -> None:
    """Mark rows with `_stated` (see the module docstring) when the request scores it."""
    if req.statements is None or req.query_vec is None:
        return
    dims = vector_nbytes(len(req.query_vec))
    # one classification per memory: a memory both queries found comes as two rows
    by_id: dict[str, list[dict[str, Any]]] = {}
    vectors: list[Any] = []
    for row in rows:
        # every kind alike, as fitted: a memory typed `preference` by the extractor is
        # classified by its text too (a 1.0 for the kind let every stored preference
        # outrank meaning in a small store)
        raw = row.get(VECTOR_FIELD)
        if isinstance(raw, bytes | bytearray) and len(raw) == dims:
            same = by_id.setdefault(row_id(row), [])
            if not same:
                vectors.append(raw)
            same.append(row)
    if vectors:
        probs = req.statements.probabilities(np.stack([bytes_vector(v) for v in vectors]))
        if probs is None:  # not fitted yet (or its embedder is down): recall goes on without
            return
        for same, p in zip(by_id.values(), probs, strict=True):
            for row in same:
                row["_stated"] = float(p)


def _key_prefix(rows: list[dict[str, Any]]) -> str:
    """The key prefix of this index's documents, from a result row ('ns:episodic:')."""
    return as_str(rows[0]["id"]).rsplit(":", 1)[0] + ":"


def _in_ranges(row: dict[str, Any], ranges: list[tuple[int, int]]) -> bool:
    ts = int_of(row.get("timestamp"))
    return any(a <= ts < b for a, b in ranges)


def _now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)


__all__ = [  # re-exported: recall's callers and scripts import them from here
    "DAY_MS",
    "OWN_FACT_KINDS",
    "RecallWeights",
    "TermUnionTextQuery",
    "fuse",
    "score_candidates",
    "time_ranges",
]
