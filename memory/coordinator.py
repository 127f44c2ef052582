"""The memory coordinator: the one entry point the agent and the UI use.

It owns the four stores, the embedder (with its query cache) and the metrics recorder, and
turns "what do we know that matters for this message?" into one `MemoryContext`.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, ParamSpec, TypeVar

import numpy as np
import redis
from redis.client import Pipeline
from redisvl.exceptions import RedisVLError

from memory.config import Settings
from memory.embeddings import CachedEmbedder, Embedder, build_embedder
from memory.episodic import RETURN_FIELDS as EPISODIC_FIELDS
from memory.episodic import EpisodicStore, embedding_text
from memory.errors import InvalidInputError, NotFoundError, StoreUnavailableError
from memory.keys import Keys
from memory.metrics import MetricsRecorder
from memory.models import (
    ChatMessage,
    EpisodicMemory,
    EventType,
    MemoryContext,
    MemoryType,
    ProceduralPattern,
    ProceduralSuggestion,
    RecallHit,
    SemanticFact,
    check_id,
    check_text,
    now_ms,
)
from memory.procedural import SIMILAR_MIN, ProceduralStore, check_run
from memory.prompt_block import render_prompt_block
from memory.recall import RecallWeights, fuse, hydrate, run_requests
from memory.records import as_str, bytes_vector
from memory.schema import (
    episodic_schema,
    index_model,
    open_index,
    procedural_schema,
    semantic_schema,
)
from memory.semantic import RETURN_FIELDS as SEMANTIC_FIELDS
from memory.semantic import SemanticStore
from memory.short_term import ShortTermStore

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


def translate_redis_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Driver errors become StoreUnavailableError at this boundary."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (redis.ConnectionError, RedisVLError) as e:
            # RedisVL wraps connection failures in its own exceptions.
            raise StoreUnavailableError(
                f"Redis is not reachable ({e}). Start it with `python -m memory redis start` "
                "or check REDIS_URL."
            ) from e
        except redis.ResponseError as e:
            raise StoreUnavailableError(f"Redis refused the operation: {e}") from e

    return wrapper


class MemoryCoordinator:
    """Built once per process with `MemoryCoordinator.from_settings(settings)`."""

    def __init__(
        self,
        client: redis.Redis,
        embedder: Embedder,
        settings: Settings,
        metrics: MetricsRecorder | None = None,
        load_knowledge: bool = True,
    ) -> None:
        self.settings = settings
        self.keys = Keys(settings.memory_namespace)
        self._r = client
        self.metrics_recorder = metrics or MetricsRecorder(
            client, self.keys, settings.metrics_max_entries
        )
        self.embedder = CachedEmbedder(
            embedder,
            client,
            self.keys.embedding_cache_name,
            settings.embedding_cache_ttl_s,
            self.metrics_recorder,
        )
        model, dims = embedder.model_id, embedder.dims
        algo = settings.vector_algorithm
        try:
            self.episodic = EpisodicStore(
                client,
                self.keys,
                open_index(client, self.keys, episodic_schema(self.keys, dims, algo), model, dims),
            )
            self.semantic = SemanticStore(
                client,
                self.keys,
                open_index(client, self.keys, semantic_schema(self.keys, dims, algo), model, dims),
            )
            self.procedural = ProceduralStore(
                client,
                self.keys,
                open_index(
                    client, self.keys, procedural_schema(self.keys, dims, algo), model, dims
                ),
                settings.procedural_recommend_threshold,
            )
        except (redis.ConnectionError, RedisVLError) as e:
            raise StoreUnavailableError(
                f"Redis is not reachable ({e}). Start it with `python -m memory redis start` "
                "or check REDIS_URL."
            ) from e
        self.short_term = ShortTermStore(
            client, self.keys, settings.short_term_max_messages, settings.short_term_ttl_s
        )
        self.weights = RecallWeights(
            recency=settings.recall_recency_weight,
            importance=settings.recall_importance_weight,
            half_life_days=settings.recency_half_life_days,
            min_score=settings.recall_min_score,
        )
        # Access counts are bookkeeping: update them off the answer path.
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-bg")
        if load_knowledge:
            self.load_knowledge()

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> MemoryCoordinator:
        from memory.connection import connect

        settings = settings or Settings()
        return cls(connect(settings), build_embedder(settings), settings)

    @property
    def metrics(self) -> MetricsRecorder:
        return self.metrics_recorder

    @property
    def redis(self) -> redis.Redis:
        return self._r

    def close(self) -> None:
        self._background.shutdown(wait=True)
        self.metrics_recorder.close()

    # =====================================================================================
    # Recall
    # =====================================================================================
    @translate_redis_errors
    def retrieve_all_context(
        self,
        user_id: str,
        session_id: str,
        query: str,
        *,
        include_episodic: bool = True,
        include_semantic: bool = True,
        include_procedural: bool = True,
        include_short_term: bool = True,
        k_episodic: int = 5,
        k_semantic: int = 3,
        k_short_term: int = 10,
        prompt_token_budget: int | None = None,
    ) -> MemoryContext:
        """Everything relevant to `query` for this user and session, with timings per stage."""
        t0 = time.perf_counter()
        check_id(user_id)
        check_id(session_id, "session id")
        query = check_text(query, "Query")
        timings: dict[str, float] = {}
        ctx = MemoryContext(user_id=user_id, session_id=session_id, query=query)

        need_vector = include_episodic or include_semantic or include_procedural
        qvec: np.ndarray | None = None
        if need_vector:
            t = time.perf_counter()
            qvec, source = self.embedder.embed_query(query)
            self._note_query(user_id, query)
            timings["embed"] = _ms(t)
            self.metrics_recorder.record(
                "embedding", "embed_query", timings["embed"], hit=source != "model"
            )

        # Short-term and the exact procedural lookup: one pipelined round trip.
        t = time.perf_counter()
        pipe = self._r.pipeline(transaction=False)
        if include_short_term:
            self.short_term.recent_request(pipe, user_id, session_id, k_short_term)
        exact_key = ""
        if include_procedural:
            exact_key = self.procedural.exact_request(pipe, user_id, query)
        raw = pipe.execute() if (include_short_term or include_procedural) else []
        if include_short_term:
            budget = int(
                self.settings.context_window_tokens * self.settings.short_term_budget_ratio
            )
            ctx.short_term = self.short_term.within_budget(
                self.short_term.parse(raw.pop(0)), budget
            )
            timings["short_term"] = _ms(t)
            self.metrics_recorder.record(
                "short_term", "recall", timings["short_term"], hit=bool(ctx.short_term)
            )
        exact_raw = raw.pop(0) if include_procedural else None

        # Hybrid searches (vector + BM25 per type, each type one pipelined round trip).
        requests = []
        if include_episodic and qvec is not None:
            requests.append(
                self.episodic.hybrid_request(user_id, query, qvec, k_episodic, self.weights)
            )
        if include_semantic and qvec is not None:
            requests.append(self.semantic.hybrid_request(query, qvec, k_semantic, self.weights))
        now = now_ms()
        for req, (vrows, trows) in zip(requests, self._timed_run(requests, timings), strict=True):
            t = time.perf_counter()
            assert qvec is not None  # requests exist only when the query was embedded
            hits = fuse(req.memory_type, vrows, trows, qvec, req.k, self.weights, now)
            if req.memory_type is MemoryType.EPISODIC:
                ctx.episodic = hits
            else:
                ctx.semantic = hits
            key = req.memory_type.value
            timings[key] = round(timings.pop(f"_{key}") + _ms(t), 3)
        if requests:
            t = time.perf_counter()
            hydrate(self._r, self._hydration(ctx.episodic, ctx.semantic))
            timings["hydrate"] = _ms(t)
            for req in requests:
                key = req.memory_type.value
                found = ctx.episodic if req.memory_type is MemoryType.EPISODIC else ctx.semantic
                self.metrics_recorder.record(key, "recall", timings[key], hit=bool(found))

        if include_procedural and qvec is not None:
            t = time.perf_counter()
            ctx.procedural = self._procedural_suggestion(user_id, exact_key, exact_raw, qvec)
            timings["procedural"] = _ms(t)
            self.metrics_recorder.record(
                "procedural", "recall", timings["procedural"], hit=ctx.procedural is not None
            )

        ctx.hits = {
            "episodic": len(ctx.episodic),
            "semantic": len(ctx.semantic),
            "procedural": int(ctx.procedural is not None),
            "short_term": len(ctx.short_term),
        }
        t = time.perf_counter()
        budget = prompt_token_budget or self.settings.memory_prompt_tokens
        ctx.prompt_block, ctx.prompt_tokens = render_prompt_block(ctx, budget)
        timings["prompt"] = _ms(t)
        timings["total"] = _ms(t0)
        ctx.timings_ms = timings
        self.metrics_recorder.record(
            "all", "retrieve_all_context", timings["total"], hit=any(ctx.hits.values())
        )
        if ctx.episodic:
            self._background.submit(self._touch_quietly, [h.id for h in ctx.episodic])
        return ctx

    def _timed_run(self, requests: list, timings: dict[str, float]) -> list:
        results = []
        for req in requests:
            t = time.perf_counter()
            results.extend(run_requests([req]))
            timings[f"_{req.memory_type.value}"] = _ms(t)
        return results

    def _procedural_suggestion(
        self, user_id: str, exact_key: str, exact_raw: dict | None, qvec: np.ndarray
    ) -> ProceduralSuggestion | None:
        """Exact normalised-query match first (O(1) hash), else the most similar question."""
        if exact_raw:
            return self.procedural.suggestion(
                self.procedural.parse(exact_key, exact_raw), 1.0, "exact"
            )
        rows = self.procedural.index.query(self.procedural.similar_query(user_id, qvec, k=1))
        if not rows:
            return None
        similarity = 1.0 - float(rows[0].get("vector_distance", 1.0))
        if similarity < SIMILAR_MIN:
            return None
        return self.procedural.suggestion(self.procedural.from_row(rows[0]), similarity, "similar")

    def _hydration(
        self, episodic: list[RecallHit], semantic: list[RecallHit]
    ) -> list[tuple[list[RecallHit], Callable[[str], str], list[str], str]]:
        return [
            (episodic, self.keys.episodic, EPISODIC_FIELDS, "description"),
            (semantic, self.keys.semantic, SEMANTIC_FIELDS, "fact"),
        ]

    def _note_query(self, user_id: str, query: str) -> None:
        """Remember (off the answer path) that this user's text sits in the embedding cache,
        so a purge of the user can drop it."""

        def note() -> None:
            key = self.keys.user_queries(user_id)
            try:
                pipe = self._r.pipeline(transaction=False)
                pipe.sadd(key, query)
                if self.settings.embedding_cache_ttl_s:
                    pipe.expire(key, self.settings.embedding_cache_ttl_s)
                pipe.execute()
            except redis.RedisError as e:
                log.warning("Could not note a cached query: %s", e)

        self._background.submit(note)

    def _drain_background(self) -> None:
        """Wait for queued background writes (single worker: a no-op task runs after them)."""
        self._background.submit(lambda: None).result()

    def _touch_quietly(self, ids: list[str]) -> None:
        try:
            self.episodic.touch(ids)
        except redis.RedisError as e:
            log.warning("Could not update access counts: %s", e)

    @translate_redis_errors
    def search(
        self,
        user_id: str,
        query: str,
        memory_type: MemoryType | str = MemoryType.EPISODIC,
        *,
        k: int = 10,
        event_types: list[EventType] | list[str] | None = None,
        tags: list[str] | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        min_score: float | None = None,
        include_superseded: bool = False,
        category: str | None = None,
    ) -> list[RecallHit]:
        """Hybrid search of one type (episodic or semantic) with filters."""
        mtype = MemoryType.parse(memory_type)
        check_id(user_id)
        query = check_text(query, "Query")
        if not 1 <= k <= 200:
            raise InvalidInputError("k must be between 1 and 200.")
        weights = self.weights
        if min_score is not None:
            weights = RecallWeights(**{**weights.__dict__, "min_score": float(min_score)})
        t = time.perf_counter()
        qvec, _ = self.embedder.embed_query(query)
        self._note_query(user_id, query)
        if mtype is MemoryType.EPISODIC:
            req = self.episodic.hybrid_request(
                user_id,
                query,
                qvec,
                k,
                weights,
                event_types=[e.value if isinstance(e, EventType) else e for e in event_types or []],
                tags=tags,
                since_ms=since_ms,
                until_ms=until_ms,
                active_only=not include_superseded,
            )
        elif mtype is MemoryType.SEMANTIC:
            req = self.semantic.hybrid_request(query, qvec, k, weights, category=category)
        else:
            raise InvalidInputError(
                "Search covers episodic and semantic memories; procedural "
                "patterns are listed, short-term messages are per session."
            )
        ((vrows, trows),) = run_requests([req])
        hits = fuse(mtype, vrows, trows, qvec, k, weights, now_ms())
        ep, sem = (hits, []) if mtype is MemoryType.EPISODIC else ([], hits)
        hydrate(self._r, self._hydration(ep, sem))
        self.metrics_recorder.record(mtype.value, "search", _ms(t), hit=bool(hits))
        return hits

    @translate_redis_errors
    def find_similar_episodic(self, user_id: str, text: str, *, k: int = 5) -> list[RecallHit]:
        """Nearest active episodic memories by vector only (dedup and supersession)."""
        text = check_text(text, "Text")
        vec = self.embedder.embed(embedding_text(text))
        from redisvl.query import VectorQuery

        from memory.episodic import RETURN_FIELDS

        q = VectorQuery(
            vector=vec.tobytes(),
            vector_field_name="embedding",
            return_fields=RETURN_FIELDS,
            filter_expression=self.episodic.filter_for(user_id),
            num_results=k,
        )
        out = []
        for row in self.episodic.index.query(q):
            from memory.records import decode

            rec = decode(row)
            rid = str(row["id"]).rsplit(":", 1)[-1]
            rec["id"] = rid
            sim = max(0.0, 1.0 - float(row.get("vector_distance", 1.0)))
            from memory.models import ScoreParts, relevance_band

            out.append(
                RecallHit(
                    id=rid,
                    memory_type=MemoryType.EPISODIC,
                    text=rec.get("description", ""),
                    score=round(sim, 4),
                    band=relevance_band(sim),
                    parts=ScoreParts(vector=round(sim, 4), final=round(sim, 4)),
                    record=rec,
                )
            )
        return out

    # =====================================================================================
    # Writing
    # =====================================================================================
    @translate_redis_errors
    def add_episodic(
        self, user_id: str, text: str, *, supersedes: str | None = None, **fields: Any
    ) -> EpisodicMemory:
        t = time.perf_counter()
        mem = EpisodicStore.build(user_id, text, **fields)
        if supersedes:
            self.episodic.get(user_id, supersedes)  # must exist and belong to the user
        vec = self.embedder.embed(embedding_text(mem.description, mem.context))
        pipe = self._r.pipeline(transaction=True)
        self.episodic.write(pipe, mem, vec)
        if supersedes:
            self._queue_supersede(pipe, supersedes, mem.id)
        pipe.execute()
        self.metrics_recorder.record("episodic", "add", _ms(t))
        return mem

    @translate_redis_errors
    def add_episodic_many(
        self, user_id: str, items: list[dict[str, Any]], batch_size: int = 256
    ) -> list[str]:
        """Bulk write path: validate all, embed in batches, write in pipelined batches."""
        mems = [EpisodicStore.build(user_id, **item) for item in items]
        ids: list[str] = []
        for start in range(0, len(mems), batch_size):
            chunk = mems[start : start + batch_size]
            t = time.perf_counter()
            vecs = self.embedder.embed_many(
                [embedding_text(m.description, m.context) for m in chunk]
            )
            pipe = self._r.pipeline(transaction=False)
            for m, v in zip(chunk, vecs, strict=True):
                self.episodic.write(pipe, m, v)
            pipe.execute()
            ids.extend(m.id for m in chunk)
            self.metrics_recorder.record("episodic", "add_many", _ms(t))
        return ids

    @translate_redis_errors
    def add_semantic(self, text: str, **fields: Any) -> SemanticFact:
        t = time.perf_counter()
        fact = SemanticStore.build(text, **fields)
        vec = self.embedder.embed(fact.fact)
        pipe = self._r.pipeline(transaction=True)
        self.semantic.write(pipe, fact, vec)
        if fact.added_by:
            pipe.sadd(self.keys.users, fact.added_by)
        pipe.execute()
        self.metrics_recorder.record("semantic", "add", _ms(t))
        return fact

    def _queue_supersede(self, pipe: Pipeline, old_id: str, new_id: str) -> None:
        pipe.hset(
            self.keys.episodic(old_id), mapping={"superseded_by": new_id, "status": "superseded"}
        )

    @translate_redis_errors
    def supersede(self, user_id: str, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id`: hidden from recall, kept as history."""
        if old_id == new_id:
            raise InvalidInputError("A memory cannot supersede itself.")
        self.episodic.get(user_id, old_id)
        self.episodic.get(user_id, new_id)
        pipe = self._r.pipeline(transaction=True)
        self._queue_supersede(pipe, old_id, new_id)
        pipe.execute()

    @translate_redis_errors
    def record_procedure(
        self,
        user_id: str,
        query: str,
        tools: list[str],
        *,
        success_score: float,
        execution_time_ms: float,
    ) -> ProceduralPattern:
        t = time.perf_counter()
        qvec, _ = self.embedder.embed_query(check_text(query, "Query"))
        pattern = self.procedural.record(
            user_id, query, tools, success_score, execution_time_ms, qvec
        )
        self.metrics_recorder.record("procedural", "record", _ms(t))
        return pattern

    @translate_redis_errors
    def rescore_last_procedure(
        self, user_id: str, query: str, tools: list[str], success_score: float
    ) -> None:
        """Lower (or raise) the score of the last run of `tools` for `query`."""
        self.procedural.adjust_last(user_id, query, tools, success_score)

    @translate_redis_errors
    def store_interaction(
        self,
        user_id: str,
        session_id: str,
        user_message: str,
        assistant_response: str,
        *,
        tools_used: list[str] | None = None,
        execution_time_ms: float = 0.0,
        success_score: float | None = None,
        store_episode: bool = True,
        turn_id: str | None = None,
    ) -> dict[str, Any]:
        """Both messages to short-term, the exchange as an episodic interaction, the tool
        sequence with its outcome to procedural memory. `turn_id` is kept in the messages'
        metadata so a UI can find the turn's details again."""
        t0 = time.perf_counter()
        meta = {"turn_id": turn_id} if turn_id else None
        msgs = [
            ShortTermStore.build("user", user_message, meta),
            ShortTermStore.build("assistant", assistant_response, meta),
        ]
        check_id(user_id)
        check_id(session_id, "session id")
        score = 1.0 if success_score is None else success_score
        if tools_used:  # validate the procedural part too, before anything is written
            check_run(msgs[0].content, tools_used, score)
        result: dict[str, Any] = {
            "short_term": [m.id for m in msgs],
            "episodic": None,
            "procedural": None,
        }
        pipe = self._r.pipeline(transaction=True)
        self.short_term.write(pipe, user_id, session_id, msgs)
        qvec: np.ndarray | None = None
        if store_episode or tools_used:
            # The question's embedding is usually cached from the recall of this turn.
            qvec, _ = self.embedder.embed_query(msgs[0].content)
        if store_episode:
            mem = EpisodicStore.build(
                user_id,
                msgs[0].content,
                event_type=EventType.INTERACTION,
                context=_interaction_context(msgs[1].content),
                session_id=session_id,
                importance=0.3,
                metadata={"assistant_message_id": msgs[1].id, "tools": tools_used or []},
            )
            self.episodic.write(pipe, mem, qvec)  # type: ignore[arg-type]
            result["episodic"] = mem.id
        pipe.execute()
        if tools_used:
            pattern = self.procedural.record(
                user_id, msgs[0].content, tools_used, score, execution_time_ms, qvec
            )
            result["procedural"] = pattern.id
            result["procedural_confidence"] = pattern.confidence
        self.metrics_recorder.record("all", "store_interaction", _ms(t0))
        return result

    @translate_redis_errors
    def add_message(self, user_id: str, session_id: str, role: str, content: str) -> ChatMessage:
        msg = ShortTermStore.build(role, content)
        pipe = self._r.pipeline(transaction=True)
        self.short_term.write(pipe, user_id, session_id, [msg])
        pipe.execute()
        return msg

    @translate_redis_errors
    def recent_messages(self, user_id: str, session_id: str, n: int = 50) -> list[ChatMessage]:
        return self.short_term.recent(user_id, session_id, n)

    # =====================================================================================
    # Editor
    # =====================================================================================
    @translate_redis_errors
    def list_memories(
        self,
        user_id: str,
        memory_type: MemoryType | str,
        *,
        event_types: list[str] | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        pinned: bool | None = None,
        include_superseded: bool = True,
        sort_by: str = "timestamp",
        descending: bool = True,
        page: int = 1,
        page_size: int = 50,
        session_id: str | None = None,
        added_by: str | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """(rows, total). Rows are records as dicts with an `id` and a `text` key.
        Semantic facts: `added_by` keeps those a given user added."""
        mtype = MemoryType.parse(memory_type)
        check_id(user_id)
        if mtype is MemoryType.EPISODIC:
            return self.episodic.list_page(
                user_id,
                sort_by=sort_by,
                descending=descending,
                page=page,
                page_size=page_size,
                event_types=event_types,
                tags=tags,
                since_ms=since_ms,
                until_ms=until_ms,
                active_only=not include_superseded,
                pinned=pinned,
                session_id=session_id,
            )
        if mtype is MemoryType.SEMANTIC:
            return self.semantic.list_page(
                added_by=added_by,
                category=category,
                pinned=pinned,
                page=page,
                page_size=page_size,
                sort_by=sort_by if sort_by in ("timestamp", "importance") else "timestamp",
                descending=descending,
            )
        if mtype is MemoryType.PROCEDURAL:
            sort = (
                sort_by
                if sort_by in ("last_used", "confidence", "executions", "created_at")
                else "last_used"
            )
            return self.procedural.list_page(
                user_id, sort_by=sort, descending=descending, page=page, page_size=page_size
            )
        sessions = [session_id] if session_id else self.short_term.sessions(user_id)
        rows: list[dict[str, Any]] = []
        for s in sessions:
            for m in self.short_term.recent(user_id, s, self.settings.short_term_max_messages):
                rows.append({**m.model_dump(), "session_id": s, "text": m.content})
        rows.sort(key=lambda r: r["timestamp"], reverse=descending)
        start = (page - 1) * page_size
        return rows[start : start + page_size], len(rows)

    @translate_redis_errors
    def get_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str
    ) -> dict[str, Any]:
        mtype = MemoryType.parse(memory_type)
        check_id(user_id)
        if mtype is MemoryType.EPISODIC:
            mem = self.episodic.get(user_id, memory_id)
            return {**mem.model_dump(mode="json"), "text": mem.description}
        if mtype is MemoryType.SEMANTIC:
            fact = self.semantic.get(memory_id)
            return {**fact.model_dump(mode="json"), "text": fact.fact}
        if mtype is MemoryType.PROCEDURAL:
            p = self.procedural.get(user_id, memory_id)
            return {**p.model_dump(mode="json"), "text": p.query_pattern}
        for s in self.short_term.sessions(user_id):
            for m in self.short_term.recent(user_id, s, self.settings.short_term_max_messages):
                if m.id == memory_id:
                    return {**m.model_dump(mode="json"), "session_id": s, "text": m.content}
        raise NotFoundError(f"No short-term message {memory_id!r}.")

    @translate_redis_errors
    def update_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str, **changes: Any
    ) -> dict[str, Any]:
        """Edit a memory; the vector is recomputed when its text changes."""
        from memory.editing import apply_update

        return apply_update(self, user_id, MemoryType.parse(memory_type), memory_id, changes)

    @translate_redis_errors
    def delete_memory(self, user_id: str, memory_type: MemoryType | str, memory_id: str) -> None:
        mtype = MemoryType.parse(memory_type)
        check_id(user_id)
        t = time.perf_counter()
        pipe = self._r.pipeline(transaction=True)
        if mtype is MemoryType.EPISODIC:
            mem = self.episodic.get(user_id, memory_id)
            self.episodic.delete_many(pipe, [memory_id])
            pipe.execute()
            self.embedder.forget([mem.description])
        elif mtype is MemoryType.SEMANTIC:
            fact = self.semantic.get(memory_id)
            if fact.added_by and fact.added_by != user_id:
                raise NotFoundError(f"No semantic fact {memory_id!r} added by this user.")
            self.semantic.delete_many(pipe, [memory_id])
            pipe.execute()
        elif mtype is MemoryType.PROCEDURAL:
            self.procedural.get(user_id, memory_id)
            pipe.delete(self.keys.procedure(user_id, memory_id))
            pipe.execute()
        else:
            for s in self.short_term.sessions(user_id):
                if self.short_term.delete_message(user_id, s, memory_id):
                    return
            raise NotFoundError(f"No short-term message {memory_id!r}.")
        self.metrics_recorder.record(mtype.value, "delete", _ms(t))

    def pin(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str, pinned: bool = True
    ) -> None:
        self.update_memory(user_id, memory_type, memory_id, pinned=pinned)

    @translate_redis_errors
    def list_users(self) -> list[str]:
        return sorted(as_str(u) for u in self._r.smembers(self.keys.users))

    @translate_redis_errors
    def list_sessions(self, user_id: str) -> list[str]:
        return self.short_term.sessions(user_id)

    # =====================================================================================
    # Housekeeping
    # =====================================================================================
    @translate_redis_errors
    def get_memory_stats(
        self, user_id: str | None = None, session_id: str | None = None
    ) -> dict[str, Any]:
        stats: dict[str, Any] = {
            "episodic": {"memory_count": self.episodic.count(user_id)},
            "semantic": {"fact_count": self.semantic.count()},
            "procedural": {},
            "short_term": {},
            "user_id": user_id,
            "session_id": session_id,
            "users": int(self._r.scard(self.keys.users)),
        }
        if user_id:
            rows, total = self.procedural.list_page(user_id, page_size=1000)
            execs = sum(r["executions"] for r in rows)
            stats["procedural"] = {
                "total_procedures": total,
                "total_executions": execs,
                "overall_avg_score": round(
                    sum(r["avg_score"] * r["executions"] for r in rows) / execs, 4
                )
                if execs
                else None,
                "recommended": sum(1 for r in rows if r["recommended"]),
            }
            sessions = self.short_term.sessions(user_id)
            stats["short_term"] = {"sessions": len(sessions)}
            if session_id:
                stats["short_term"].update(
                    message_count=self.short_term.count(user_id, session_id),
                    ttl_seconds=self.short_term.ttl(user_id, session_id),
                )
        else:
            from redisvl.query import CountQuery

            stats["procedural"] = {
                "total_procedures": int(self.procedural.index.query(CountQuery()))
            }
        return stats

    @translate_redis_errors
    def clear_session_memories(self, user_id: str, session_id: str) -> int:
        check_id(user_id)
        check_id(session_id, "session id")
        n = self.short_term.count(user_id, session_id)
        msgs = self.short_term.recent(user_id, session_id, self.settings.short_term_max_messages)
        pipe = self._r.pipeline(transaction=True)
        self.short_term.clear(pipe, user_id, session_id)
        pipe.execute()
        self.embedder.forget([m.content for m in msgs if m.role == "user"])
        return n

    @translate_redis_errors
    def clear_user_memories(self, user_id: str) -> dict[str, int]:
        """Remove everything derived from this user: episodic memories, facts they added,
        procedural patterns, every session, and the cached embeddings of their texts."""
        check_id(user_id)
        self._drain_background()
        ep_ids = self.episodic.ids_for_user(user_id)
        texts = [as_str(q) for q in self._r.smembers(self.keys.user_queries(user_id))]
        timelines: set[str] = set()
        if ep_ids:
            pipe = self._r.pipeline(transaction=False)
            for mid in ep_ids:
                pipe.hmget(self.keys.episodic(mid), ["description", "session"])
            for description, session in pipe.execute():
                if description:
                    texts.append(as_str(description))
                if session:
                    timelines.add(self.keys.timeline(as_str(session)))
        sem_ids = self.semantic.ids_added_by(user_id)
        proc_keys = self.procedural.keys_for_user(user_id)
        if proc_keys:
            pipe = self._r.pipeline(transaction=False)
            for k in proc_keys:
                pipe.hget(k, "query_pattern")
            texts.extend(t.decode() for t in pipe.execute() if t)
        sessions = self.short_term.sessions(user_id)
        for s in sessions:
            texts.extend(
                m.content
                for m in self.short_term.recent(user_id, s, self.settings.short_term_max_messages)
                if m.role == "user"
            )
        pipe = self._r.pipeline(transaction=True)
        self.episodic.delete_many(pipe, ep_ids)
        for key in timelines:
            pipe.delete(key)
        self.semantic.delete_many(pipe, sem_ids)
        for k in proc_keys:
            pipe.delete(k)
        for s in sessions:
            self.short_term.clear(pipe, user_id, s)
        pipe.delete(self.keys.user_sessions(user_id), self.keys.user_queries(user_id))
        pipe.srem(self.keys.users, user_id)
        pipe.execute()
        self.embedder.forget(list(set(texts)))
        return {
            "episodic": len(ep_ids),
            "semantic": len(sem_ids),
            "procedural": len(proc_keys),
            "sessions": len(sessions),
        }

    def export_user(self, user_id: str) -> dict[str, Any]:
        from memory.transfer import export_user

        return export_user(self, user_id)

    def import_user(
        self,
        data: dict[str, Any] | str | bytes,
        *,
        mode: Literal["merge", "replace"] = "merge",
        user_id: str | None = None,
    ) -> dict[str, int]:
        from memory.transfer import import_user

        return import_user(self, data, mode=mode, user_id=user_id)

    @translate_redis_errors
    def load_knowledge(self) -> int:
        """Load facts of the knowledge file not loaded before (idempotent)."""
        path = self.settings.knowledge_file
        if not path.exists():
            log.warning("Knowledge file %s not found; semantic memory starts empty.", path)
            return 0
        facts = self.semantic.missing_from_store(SemanticStore.read_knowledge_file(path))
        if not facts:
            return 0
        vecs = self.embedder.embed_many([f.fact for f in facts])
        pipe = self._r.pipeline(transaction=True)
        for f, v in zip(facts, vecs, strict=True):
            self.semantic.write(pipe, f, v)
        self.semantic.mark_loaded(pipe, facts)
        pipe.execute()
        log.info("Loaded %d facts from %s", len(facts), path)
        return len(facts)

    def health(self) -> dict[str, Any]:
        from memory.health import check_health

        return check_health(self)

    def index_models(self) -> dict[str, dict[str, Any]]:
        return {
            name: index_model(self._r, self.keys, name)
            for name in (
                self.keys.episodic_index,
                self.keys.semantic_index,
                self.keys.procedural_index,
            )
        }

    def vector_of(self, memory_type: MemoryType, memory_id: str) -> np.ndarray | None:
        key = (
            self.keys.episodic(memory_id)
            if memory_type is MemoryType.EPISODIC
            else self.keys.semantic(memory_id)
        )
        raw = self._r.hget(key, "embedding")
        return bytes_vector(raw) if isinstance(raw, bytes) else None


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _interaction_context(reply: str) -> str:
    reply = reply.strip().replace("\n", " ")
    return "Assistant answered: " + (reply[:600] + " …" if len(reply) > 600 else reply)
