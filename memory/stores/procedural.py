"""Procedural memory: tool sequences that worked for a kind of question, per user. One hash per
(user, normalised query), an O(1) read for a repeat, indexed with the question's embedding for a
similar one; confidence: docs/recall.md, "Procedural confidence"."""

from __future__ import annotations

import hashlib
import re
from typing import Any, cast

import numpy as np
import redis
from redisvl.index import SearchIndex
from redisvl.query import VectorQuery
from redisvl.query.filter import Tag

from memory.errors import InvalidInputError
from memory.keys import Keys, owner_tag
from memory.models import (
    ProceduralPattern,
    ProceduralSuggestion,
    SequenceStats,
    check_id,
    check_text,
    now_ms,
)
from memory.queries import ListQuery
from memory.replies import as_str
from memory.stores.records import decode, encode, stored_hash, vector_bytes
from memory.stores.schema import VECTOR_FIELD, matching_keys, query_page
from memory.writing.secrets import PiiPolicy, check_no_secret, mask_text

SIMILAR_MIN = 0.72  # cosine similarity for "a similar question" (MiniLM)
#: what is stored of a pattern: `recommended` follows from the threshold at each read
RETURN_FIELDS = [f for f in ProceduralPattern.model_fields if f not in ("id", "recommended")]

_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")


def normalize_query(query: str) -> str:
    """Lower case, no punctuation, numbers as '#', single spaces: 'Steps on 3 May?' ->
    'steps on # may'."""
    q = _NON_WORD.sub(" ", query.lower())
    q = _NUMBER.sub("#", q)
    return _SPACE.sub(" ", q).strip()


def query_hash(normalized: str) -> str:
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:16]


def confidence(score_sum: float, executions: int) -> float:
    return (score_sum + 1.0) / (executions + 2.0)


def check_run(query: str, tools: list[str], success_score: float, pii: PiiPolicy = "keep") -> str:
    """Validate one execution before anything is written; returns the cleaned query, its
    secrets masked (`memory.writing.secrets`); a tool name holding one is refused."""
    query = mask_text(check_text(query, "Query"), pii)
    if not tools or not all(isinstance(t, str) and t.strip() for t in tools):
        raise InvalidInputError("A tool sequence needs at least one tool name.")
    for t in tools:
        check_no_secret(t, "tool name")
    if not isinstance(success_score, int | float) or not 0 <= success_score <= 1:
        raise InvalidInputError("The success score must be between 0 and 1.")
    return query


def sequence_key(tools: list[str]) -> str:
    return " > ".join(tools)


class ProceduralStore:
    def __init__(
        self, client: redis.Redis, keys: Keys, index: SearchIndex, recommend_threshold: float = 0.7
    ) -> None:
        self._r = client
        self._keys = keys
        self.index = index
        self.threshold = recommend_threshold

    def key(self, user_id: str, normalized: str) -> str:
        return self._keys.procedure(user_id, query_hash(normalized))

    # --- writing -------------------------------------------------------------------------
    def record(
        self,
        user_id: str,
        query: str,
        tools: list[str],
        success_score: float,
        execution_time_ms: float,
        query_vec: np.ndarray | None,
        pii: PiiPolicy = "keep",
    ) -> ProceduralPattern:
        """Add one execution of `tools` for `query`; atomic under concurrent writers."""
        check_id(user_id)
        query = check_run(query, tools, success_score, pii)
        normalized = normalize_query(query)
        key = self.key(user_id, normalized)
        now = now_ms()
        # The user list is shared data (another slot): noted before, never in the MULTI.
        self._r.sadd(self._keys.users, user_id)

        def add(pipe: redis.client.Pipeline) -> ProceduralPattern:
            raw = pipe.hgetall(key)
            pattern = (
                self.parse(key, raw)
                if raw
                else ProceduralPattern(
                    id=query_hash(normalized),
                    user_id=user_id,
                    query_pattern=query,
                    normalized_query=normalized,
                    tool_sequence=list(tools),
                    created_at=now,
                    last_used=now,
                )
            )
            self._apply(pattern, tools, success_score, execution_time_ms, now)
            mapping = _mapping(pattern)
            if not raw:
                if query_vec is None:
                    raise InvalidInputError("A new pattern needs the query's embedding.")
                mapping[VECTOR_FIELD] = vector_bytes(query_vec)
            mapping["owner"] = owner_tag(user_id)
            pipe.multi()
            pipe.hset(key, mapping=mapping)
            return pattern

        # redis-py's optimistic transaction: WATCH, read, MULTI/EXEC, again on a WatchError
        # (its stubs type the callable as returning None, value_from_callable or not)
        pattern = self._r.transaction(add, key, value_from_callable=True)  # type: ignore[arg-type]
        return cast(ProceduralPattern, pattern)

    def _apply(
        self, p: ProceduralPattern, tools: list[str], score: float, ms: float, now: int
    ) -> None:
        s = p.sequences.setdefault(sequence_key(tools), SequenceStats(tools=list(tools)))
        s.add_run(score, ms, now)
        s.score_sum += score
        s.avg_score = s.score_sum / s.executions  # exact after a re-score (`adjust_last`)
        p.add_run(score, ms, now)
        self._rank(p)

    def _rank(self, p: ProceduralPattern) -> None:
        """The pattern's sequence, confidence and recommendation: its most confident one's."""
        best = max(p.sequences.values(), key=lambda x: confidence(x.score_sum, x.executions))
        p.tool_sequence = list(best.tools)
        p.confidence = round(confidence(best.score_sum, best.executions), 4)
        p.recommended = p.confidence >= self.threshold

    def adjust_last(self, user_id: str, query: str, tools: list[str], new_score: float) -> None:
        """Re-score the most recent execution (e.g. the user's next message was a correction)."""
        key = self.key(user_id, normalize_query(query))

        def rescore(pipe: redis.client.Pipeline) -> None:
            raw = pipe.hgetall(key)
            p = self.parse(key, raw) if raw else None
            s = p.sequences.get(sequence_key(tools)) if p else None
            if p is None or s is None or s.executions == 0:
                return
            old = s.avg_score  # best estimate of the last run's score
            s.score_sum += new_score - min(old, s.score_sum)
            if old >= 0.5 > new_score:
                s.successes -= 1
                s.failures += 1
                p.successes -= 1
                p.failures += 1
            s.avg_score = s.score_sum / s.executions
            self._rank(p)
            pipe.multi()
            pipe.hset(key, mapping=_mapping(p))

        self._r.transaction(rescore, key)

    # --- reading -------------------------------------------------------------------------
    def parse(self, key: str | bytes, raw: dict[Any, Any]) -> ProceduralPattern:
        rec = decode(raw)
        rec["id"] = Keys.memory_id(key)
        rec["sequences"] = {
            k: SequenceStats.model_validate(v) for k, v in (rec.get("sequences") or {}).items()
        }
        rec["recommended"] = float(rec.get("confidence", 0)) >= self.threshold
        return ProceduralPattern.model_validate(rec)

    def exact_request(self, pipe: redis.client.Pipeline, user_id: str, query: str) -> str:
        key = self.key(user_id, normalize_query(query))
        pipe.hgetall(key)
        return key

    def similar_query(self, user_id: str, query_vec: np.ndarray, k: int = 1) -> VectorQuery:
        return VectorQuery(
            vector=vector_bytes(query_vec),
            vector_field_name=VECTOR_FIELD,
            return_fields=RETURN_FIELDS,
            filter_expression=Tag("owner") == owner_tag(check_id(user_id)),
            num_results=k,
        )

    def suggestion(
        self, pattern: ProceduralPattern, similarity: float, match: str
    ) -> ProceduralSuggestion:
        shared = {"query_pattern", "tool_sequence", "confidence", "recommended", "executions"}
        return ProceduralSuggestion(
            **pattern.model_dump(include=shared),
            pattern_id=pattern.id,
            avg_score=round(pattern.avg_score, 4),
            similarity=round(similarity, 4),
            match=match,
        )

    def best_suggestion(
        self,
        user_id: str,
        exact_key: str,
        exact_raw: dict | None,
        qvec: np.ndarray,
        similar_rows: list[dict[str, Any]] | None = None,
        similar: bool = True,
    ) -> ProceduralSuggestion | None:
        """Exact normalised-query match first (O(1) hash read by `exact_request`), else the
        most similar question of this user (`similar_rows`: the rows of `similar_query` when
        the caller ran it in its own round trip); `similar` False: the exact match only."""
        if exact_raw:
            return self.suggestion(self.parse(exact_key, exact_raw), 1.0, "exact")
        if not similar:
            return None
        rows = similar_rows
        if rows is None:
            rows = self.index.query(self.similar_query(user_id, qvec, k=1))
        if not rows:
            return None
        similarity = 1.0 - float(rows[0].get("vector_distance", 1.0))
        if similarity < SIMILAR_MIN:
            return None
        return self.suggestion(self.from_row(rows[0]), similarity, "similar")

    def from_row(self, row: dict[str, Any]) -> ProceduralPattern:
        return self.parse(
            str(row["id"]), {k: v for k, v in row.items() if k not in ("id", "vector_distance")}
        )

    def get(self, user_id: str, pattern_id: str) -> ProceduralPattern:
        key = self._keys.procedure(user_id, pattern_id)
        return self.parse(key, stored_hash(self._r, key, pattern_id, "procedural pattern", user_id))

    def list_page(self, user_id: str, q: ListQuery) -> tuple[list[dict[str, Any]], int]:
        """An order the index cannot sort by lists by last use."""
        f = Tag("owner") == owner_tag(check_id(user_id))
        rows, total = query_page(self.index, f, RETURN_FIELDS, q, default_sort="last_used")
        patterns = map(self.from_row, rows)
        return [{**p.model_dump(), "text": p.query_pattern} for p in patterns], total

    def keys_for_user(self, user_id: str) -> list[str]:
        return matching_keys(self.index, Tag("owner") == owner_tag(check_id(user_id)))

    def query_patterns(self, keys: list[str]) -> list[str]:
        """The question pattern of each procedure key, in one round trip."""
        pipe = self._r.pipeline(transaction=False)
        for k in keys:
            pipe.hget(k, "query_pattern")
        return [as_str(t) for t in pipe.execute() if t] if keys else []

    def set_pinned(self, user_id: str, pattern_id: str, pinned: bool) -> None:
        self.get(user_id, pattern_id)
        self._r.hset(self._keys.procedure(user_id, pattern_id), "pinned", "1" if pinned else "0")

    def set_dates(self, user_id: str, pattern_id: str, created_at: int, last_used: int) -> None:
        """Date a pattern as its story says (the demo persona learned hers over months): its
        sequences too, in the order they were first tried, the last one at `last_used`, so no
        "Last used" shows the day the story was loaded."""
        pattern = self.get(user_id, pattern_id)
        n = len(pattern.sequences)
        for i, seq in enumerate(pattern.sequences.values(), start=1):
            seq.last_used = created_at + (last_used - created_at) * i // n
        sequences = {k: v.model_dump() for k, v in pattern.sequences.items()}
        self._r.hset(
            self._keys.procedure(user_id, pattern_id),
            mapping=encode(
                {"created_at": created_at, "last_used": last_used, "sequences": sequences}
            ),
        )

    def write_raw(
        self,
        pipe: redis.client.Pipeline,
        pattern: ProceduralPattern,
        vec: np.ndarray,
        pii: PiiPolicy = "keep",
    ) -> None:
        """For import: write a whole pattern as it was exported (its question's secrets
        masked: a file may come from before they were; a tool name holding one refused)."""
        for t in [
            *pattern.tool_sequence,
            *(t for s in pattern.sequences.values() for t in s.tools),
        ]:
            check_no_secret(t, "tool name")
        data = pattern.model_dump(exclude={"id", "sequences", "recommended"})
        for field in ("query_pattern", "normalized_query"):
            data[field] = mask_text(data[field], pii)
        data["sequences"] = {k: v.model_dump() for k, v in pattern.sequences.items()}
        mapping = encode(data)
        mapping[VECTOR_FIELD] = vector_bytes(vec)
        mapping["owner"] = owner_tag(pattern.user_id)
        key = self._keys.procedure(pattern.user_id, pattern.id)
        pipe.delete(key)
        pipe.hset(key, mapping=mapping)


def _mapping(p: ProceduralPattern) -> dict[Any, Any]:
    """A pattern's hash fields (its id is its key)."""
    data = p.model_dump(exclude={"id", "sequences"})
    data["sequences"] = {k: v.model_dump() for k, v in p.sequences.items()}
    return encode(data)
