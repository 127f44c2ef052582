"""The recall pipeline behind the coordinator's `retrieve_all_context`, `search` and
`find_similar_episodic`: one pipelined round trip for the searches, scoring, one for reading the
kept hits whole (docs/architecture.md, "One chat turn"); timings per stage go into the context
and the metrics, access counts are updated off the answer path (`Bookkeeper`)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from redisvl.query import VectorQuery

from memory.bookkeeping import Bookkeeper
from memory.embeddings import CachedEmbedder
from memory.errors import InvalidInputError
from memory.identity import StoreIdentity
from memory.metrics import MetricsRecorder
from memory.models import (
    EventType,
    MemoryContext,
    MemoryType,
    RecallHit,
    ScoreParts,
    check_id,
    check_text,
    now_ms,
    relevance_band,
)
from memory.queries import RecallOptions, SearchFilter
from memory.recall.hybrid import (
    HybridRequest,
    RecallWeights,
    fuse,
    likely_hits,
    prepare,
    queue_neighbours,
    queue_requests,
    run_requests,
    take_neighbours,
)
from memory.recall.requests import (
    episodic_request,
    hydrate,
    hydration_groups,
    queue_reads,
    semantic_request,
)
from memory.recall.search import queue_search, reply_rows
from memory.recall.statements import statement_model_for
from memory.replies import as_str
from memory.stores import Stores
from memory.stores.episodic import embedding_text
from memory.text import embedder_knows
from memory.user_profile import ProfileCache, profile_commands

log = logging.getLogger(__name__)


class RecallPipeline:
    def __init__(
        self,
        stores: Stores,
        embedder: CachedEmbedder,
        weights: RecallWeights,
        metrics: MetricsRecorder,
        bookkeeping: Bookkeeper,
        history_budget_tokens: int,
        identity: StoreIdentity,
    ) -> None:
        self._stores = stores
        self._embedder = embedder
        self.weights = weights
        self._metrics = metrics
        self._bookkeeping = bookkeeping
        self._history_budget = history_budget_tokens
        self._identity = identity
        self._statements = statement_model_for(embedder)
        self.profile = ProfileCache()
        self._schedule_statement_fit()

    def context(
        self, user_id: str, session_id: str, query: str, options: RecallOptions, k_episodic: int
    ) -> MemoryContext:
        """`options` with `k_episodic` resolved by the caller (its None: RECALL_PROMPT_K)."""
        o, t0 = options, time.perf_counter()
        check_id(user_id)
        check_id(session_id, "session id")
        query = check_text(query, "Query")
        timings: dict[str, float] = {}
        ctx = MemoryContext(user_id=user_id, session_id=session_id, query=query)
        wanted = (o.include_episodic, o.include_semantic, o.include_procedural)
        need_vector = any(wanted)
        self._schedule_statement_fit()
        plan = _Plan(user_id, query, *wanted, k_episodic, o.k_semantic)
        plan.profile = o.include_profile

        t = time.perf_counter()
        qvec = self._embedder.local(query) if need_vector else None
        source = "local"
        timings["embed"] = _ms(t)
        raw, exact_key = self._first_round_trip(
            ctx, plan, qvec, need_vector, o.k_short_term if o.include_short_term else None
        )
        timings["fetch"] = _ms(t)
        if o.include_short_term:
            self._take_short_term(ctx, raw, timings)
        exact_raw = raw.pop(0) if o.include_procedural else None
        if plan.profile:
            reply = raw.pop(0)
            if plan.profile_now:
                read = [raw.pop(0) for _ in range(plan.profile_now)]
                ctx.profile = self.profile.keep(user_id, as_str(reply or b"0"), read)
            else:
                version, lines = self.profile.take(reply, user_id)
                ctx.profile = lines or []
                plan.stale_profile = None if lines is not None else version
        if need_vector and qvec is None:
            t = time.perf_counter()
            pipe = self._stores.client.pipeline(transaction=False)
            qvec, source = self._embedder.from_lookup(query, raw.pop(0), pipe)
            timings["embed"] = _ms(t)
            t = time.perf_counter()
            cache_writes = len(pipe)
            self._queue_searches(pipe, plan, qvec, similar=not exact_raw)
            raw = _execute(pipe, cache_writes)
            timings["fetch"] = round(timings["fetch"] + _ms(t), 3)
        if qvec is not None:
            self._metrics.record(
                "embedding", "embed_query", timings["embed"], hit=source != "model"
            )

        similar_rows = self._recall_stores(ctx, plan, raw, qvec, timings)
        if o.include_procedural and qvec is not None:
            t = time.perf_counter()
            ctx.procedural = self._stores.procedural.best_suggestion(
                user_id,
                exact_key,
                exact_raw,
                qvec,
                similar_rows,
                # any two Thai questions are 1.00 apart to the embedder: no "similar" one
                similar=embedder_knows(query),
            )
            timings["procedural"] = _ms(t)
            self._metrics.record(
                "procedural", "recall", timings["procedural"], hit=ctx.procedural is not None
            )
        return self._finish(ctx, timings, t0, noted=query if qvec is not None else None)

    def _first_round_trip(
        self,
        ctx: MemoryContext,
        plan: _Plan,
        qvec: np.ndarray | None,
        need_vector: bool,
        k_short_term: int | None,
    ) -> tuple[list[Any], str]:
        """(replies after the marker, the exact procedural hash's key). One pipelined round
        trip: the store marker first (a Redis that replaced ours is found before anything,
        even the query's cache entry, is written to it), short-term (`k_short_term` messages;
        None: none), the exact procedural hash, the profile's version (`ProfileCache`) and, when
        this process knows the query's vector, every store's searches. Otherwise the embedding
        cache's lookup rides along instead and the searches go in a second round trip with the
        cache write."""
        stores, user_id, session_id = self._stores, ctx.user_id, ctx.session_id
        pipe = stores.client.pipeline(transaction=False)
        self._identity.request(pipe)
        if k_short_term is not None:
            stores.short_term.recent_request(pipe, user_id, session_id, k_short_term)
            # How many messages the window leaves out, and the summary that covers them.
            pipe.llen(stores.keys.session(user_id, session_id))
            pipe.hget(stores.keys.summary_state(user_id, session_id), "latest")
        exact_key = ""
        if plan.procedural:
            exact_key = stores.procedural.exact_request(pipe, user_id, ctx.query)
        if plan.profile:
            pipe.get(stores.keys.writes(user_id))  # its version
            if not self.profile.knows(user_id):  # nothing kept: read it now, beside it
                commands = profile_commands(stores.episodic, user_id)
                for command in commands:
                    pipe.execute_command(*command)
                plan.profile_now = len(commands)
        if need_vector and qvec is None:
            self._embedder.queue_lookup(pipe, ctx.query)
        elif qvec is not None:
            self._queue_searches(pipe, plan, qvec, similar=True)
        raw = pipe.execute(raise_on_error=False)
        # the marker before the searches' errors: on another Redis they find no index
        self._identity.verify(_checked(raw[:1]).pop(0))  # recovers, raises, wrote nothing
        return _checked(raw[1:]), exact_key

    def _take_short_term(
        self, ctx: MemoryContext, raw: list[Any], timings: dict[str, float]
    ) -> None:
        """The session's window within the history budget, how many messages it leaves out
        and, when it leaves some out, the summary that covers them (popped from `raw`)."""
        t = time.perf_counter()
        short_term = self._stores.short_term
        ctx.short_term = short_term.within_budget(
            short_term.parse(raw.pop(0)), int(self._history_budget)
        )
        total, latest = int(raw.pop(0) or 0), raw.pop(0)
        ctx.short_term_dropped = max(0, total - len(ctx.short_term))
        if ctx.short_term_dropped and latest:
            ctx.session_summary = _summary_hit(as_str(latest))
        timings["short_term"] = ms = _ms(t)
        self._metrics.record("short_term", "recall", ms, hit=bool(ctx.short_term))

    def _recall_stores(
        self,
        ctx: MemoryContext,
        plan: _Plan,
        raw: list[Any],
        qvec: np.ndarray | None,
        timings: dict[str, float],
    ) -> list[dict[str, Any]] | None:
        """Per store: candidates from its replies, fusion and scoring, the hits read whole;
        returns the rows of the most similar procedure (None when not searched). A store whose
        candidates have session neighbours to look at (episodic) reads their timelines in the
        round trip that reads the other stores' hits, with its own likely hits."""
        stores, user_id = self._stores, ctx.user_id
        now = now_ms()
        assert qvec is not None or not plan.requests  # requests exist only with a vector
        rows: dict[MemoryType, tuple[list[dict], list[dict]]] = {}
        for req in plan.requests:
            t = time.perf_counter()
            rows[req.memory_type] = prepare(req, raw, now)
            if not req.seeds:
                self._keep(ctx, req, fuse_request(req, rows[req.memory_type], qvec, now))
            timings[req.memory_type.value] = _ms(t)
        similar_rows = reply_rows(raw.pop(0), plan.similar) if plan.similar else None
        if not plan.requests and ctx.session_summary is None and plan.stale_profile is None:
            return similar_rows
        t = time.perf_counter()
        seeded = [req for req in plan.requests if req.seeds]
        prefetched, sides = self._read_ahead(plan, ctx, seeded)
        hydrate_ms = _ms(t)
        for req in seeded:
            t = time.perf_counter()
            vrows, trows = rows[req.memory_type]
            take_neighbours(req, vrows, trows, sides)
            self._keep(ctx, req, fuse_request(req, (vrows, trows), qvec, now))
            timings[req.memory_type.value] += _ms(t)
        t = time.perf_counter()
        # the top hits of every type (and the session's summary) read whole: read
        # ahead above, unless a neighbour the searches did not find is among them
        groups = hydration_groups(
            stores.keys, user_id, ctx.episodic, ctx.semantic, ctx.session_summary
        )
        hydrate(stores.client, groups, prefetched)
        if plan.requests:
            timings["hydrate"] = round(hydrate_ms + _ms(t), 3)
        for req in plan.requests:
            key = req.memory_type.value
            found = ctx.episodic if req.memory_type is MemoryType.EPISODIC else ctx.semantic
            self._metrics.record(key, "recall", timings[key], hit=bool(found))
        if ctx.session_summary is not None and not ctx.session_summary.text:
            ctx.session_summary = None  # deleted since
        return similar_rows

    def _finish(
        self, ctx: MemoryContext, timings: dict[str, float], t0: float, *, noted: str | None
    ) -> MemoryContext:
        """The context's counts and timings, recorded; the query embedded (`noted`) and the
        episodic hits' access left to the bookkeeping, once the recall is done."""
        ctx.hits = {
            "episodic": len(ctx.episodic),
            "semantic": len(ctx.semantic),
            "procedural": int(ctx.procedural is not None),
            "short_term": len(ctx.short_term),
        }
        timings["total"] = _ms(t0)
        ctx.timings_ms = timings
        self._metrics.record(
            "all", "retrieve_all_context", timings["total"], hit=any(ctx.hits.values())
        )
        self._bookkeeping.after_recall(ctx.user_id, noted, [h.id for h in ctx.episodic])
        return ctx

    def _read_ahead(
        self, plan: _Plan, ctx: MemoryContext, seeded: list[HybridRequest]
    ) -> tuple[dict[str, list[Any]], list[Any]]:
        """One round trip: a user profile that changed since it was kept, the hits found so
        far (and the session's summary), then the seeds' timeline reads of the store in
        `seeded` with the ids likely to be its hits. Returns key -> values read (for
        `hydrate`) and the timeline replies."""
        groups = hydration_groups(
            self._stores.keys, plan.user_id, ctx.episodic, ctx.semantic, ctx.session_summary
        )
        pipe = self._stores.client.pipeline(transaction=False)
        first = 0
        if plan.stale_profile is not None:  # the profile changed since it was kept
            for command in profile_commands(self._stores.episodic, plan.user_id):
                pipe.execute_command(*command)
            first = len(pipe)
        slots: list[str] = []  # per command: the key it reads whole, "" for a timeline read
        for hits, key_of, fields, _ in groups:
            slots += queue_reads(pipe, key_of, fields, [h.id for h in hits])
        for req in seeded:  # episodic, the only store with neighbours: the first group
            queue_neighbours(pipe, req)
            slots += [""] * (len(pipe) - first - len(slots))
            _, key_of, fields, _ = groups[0]
            slots += queue_reads(pipe, key_of, fields, likely_hits(req))
        replies = pipe.execute() if len(pipe) else []
        if plan.stale_profile is not None:
            ctx.profile = self.profile.keep(plan.user_id, plan.stale_profile, replies[:first])
        replies = replies[first:]
        prefetched = {key: r for key, r in zip(slots, replies, strict=True) if key}
        return prefetched, [r for key, r in zip(slots, replies, strict=True) if not key]

    def _keep(self, ctx: MemoryContext, req: HybridRequest, hits: list[RecallHit]) -> None:
        if req.memory_type is MemoryType.EPISODIC:
            ctx.episodic = hits
        else:
            ctx.semantic = hits

    def _queue_searches(self, pipe: Any, plan: _Plan, qvec: np.ndarray, *, similar: bool) -> None:
        """Queue every store's searches for the query (episodic, semantic, then the most
        similar procedure when `similar`) and note them in `plan`."""
        if plan.episodic:
            plan.requests.append(
                episodic_request(
                    self._stores.episodic,
                    self._stores.keys,
                    plan.user_id,
                    plan.query,
                    qvec,
                    plan.k_episodic,
                    self.weights,
                    self._statements,
                )
            )
        if plan.semantic:
            plan.requests.append(
                semantic_request(
                    self._stores.semantic,
                    plan.user_id,
                    plan.query,
                    qvec,
                    plan.k_semantic,
                    self.weights,
                )
            )
        queue_requests(pipe, plan.requests)
        if plan.procedural and similar:
            procedural = self._stores.procedural
            plan.similar = procedural.similar_query(plan.user_id, qvec, k=1)
            queue_search(pipe, procedural.index.name, plan.similar)

    def _schedule_statement_fit(self) -> None:
        """Fit the statement classifier on the background worker (never on the answer path);
        while it keeps failing, again at most once a minute."""
        if self._statements.claim_fit():
            self._bookkeeping.prepare(self._statements.prepare)

    def search(
        self,
        user_id: str,
        query: str,
        memory_type: MemoryType | str = MemoryType.EPISODIC,
        *,
        k: int = 10,
        where: SearchFilter | None = None,
    ) -> list[RecallHit]:
        mtype = MemoryType.parse(memory_type)
        check_id(user_id)
        query = check_text(query, "Query")
        if not 1 <= k <= 200:
            raise InvalidInputError("k must be between 1 and 200.")
        f = where or SearchFilter()
        weights = self.weights
        if f.min_score is not None:
            weights = RecallWeights(**{**weights.__dict__, "min_score": float(f.min_score)})
        t = time.perf_counter()
        qvec, _ = self._embedder.embed_query(query)
        self._bookkeeping.note_query(user_id, query)
        self._schedule_statement_fit()
        if mtype is MemoryType.EPISODIC:
            req = episodic_request(
                self._stores.episodic,
                self._stores.keys,
                user_id,
                query,
                qvec,
                k,
                weights,
                self._statements,
                event_types=[
                    e.value if isinstance(e, EventType) else e for e in f.event_types or []
                ],
                tags=f.tags,
                since_ms=f.since_ms,
                until_ms=f.until_ms,
                active_only=not f.include_superseded,
            )
        elif mtype is MemoryType.SEMANTIC:
            req = semantic_request(
                self._stores.semantic, user_id, query, qvec, k, weights, f.category
            )
        else:
            raise InvalidInputError(
                "Search covers episodic and semantic memories; procedural "
                "patterns are listed, short-term messages are per session."
            )
        ((vrows, trows),) = run_requests([req])
        hits = fuse_request(req, (vrows, trows), qvec, req.now_ms)
        ep, sem = (hits, []) if mtype is MemoryType.EPISODIC else ([], hits)
        hydrate(self._stores.client, hydration_groups(self._stores.keys, user_id, ep, sem))
        self._metrics.record(mtype.value, "search", _ms(t), hit=bool(hits))
        return hits

    def similar_episodic(self, user_id: str, text: str, *, k: int = 5) -> list[RecallHit]:
        text = check_text(text, "Text")
        vec = self._embedder.embed(embedding_text(text))
        return [
            RecallHit(
                id=rec["id"],
                memory_type=MemoryType.EPISODIC,
                text=rec.get("description", ""),
                score=round(sim, 4),
                band=relevance_band(sim),
                parts=ScoreParts(vector=round(sim, 4), final=round(sim, 4)),
                record=rec,
            )
            for rec, sim in self._stores.episodic.similar(user_id, vec, k)
        ]


@dataclass
class _Plan:
    """What one recall searches, and the queries it queued (in queue order)."""

    user_id: str
    query: str
    episodic: bool
    semantic: bool
    procedural: bool
    k_episodic: int
    k_semantic: int
    requests: list[HybridRequest] = field(default_factory=list)
    similar: VectorQuery | None = None
    profile: bool = False
    #: the write version to read the profile at (in the read-ahead): the one kept is of another
    stale_profile: str | None = None
    #: the profile's commands queued in the first round trip (nothing was kept for the user)
    profile_now: int = 0


def fuse_request(
    req: HybridRequest, rows: tuple[list[dict], list[dict]], qvec: Any, now: int
) -> list[RecallHit]:
    """The request's hits from its candidates, scored once (`prepare`)."""
    vrows, trows = rows
    return fuse(req.memory_type, vrows, trows, qvec, req.k, req.weights, now, scored=req.scored)


def _execute(pipe: Any, cache_writes: int) -> list[Any]:
    """Run a pipeline whose first `cache_writes` commands write the embedding cache: their
    failure is logged (recall goes on without caching, as before), any other raises."""
    replies = pipe.execute(raise_on_error=False)
    for reply in replies[:cache_writes]:
        if isinstance(reply, Exception):
            log.warning("Could not write the embedding cache: %s", reply)
    return _checked(replies[cache_writes:])


def _checked(replies: list[Any]) -> list[Any]:
    """The replies of a pipeline run with `raise_on_error=False`; raises the first error."""
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def _summary_hit(memory_id: str) -> RecallHit:
    """The session's latest summary, shown because its turns left the window (not a search
    result: its score says nothing about the query)."""
    return RecallHit(
        id=memory_id,
        memory_type=MemoryType.EPISODIC,
        text="",
        score=1.0,
        band="high",
        parts=ScoreParts(final=1.0),
    )


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)
