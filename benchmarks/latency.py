"""`python -m benchmarks latency`: how fast recall and writes are, and what a memory costs.

For each size N (default 1k, 10k, 100k stored episodic memories) the store holds ten users
with N/10 memories each; every figure is measured for one of them (`u0`), so the 100k run is
"10k memories for the user, 100k in total". Sizes are reached by growing one store.

    ingest rate        `add_episodic_many` on fresh, distinct texts with the real ONNX
                       embedder (validation + embedding + pipelined writes), memories/s
    fill               the rest of each size goes through the same write path, but its vectors
                       come from a pool of real embeddings of 2,000 template texts plus a small
                       per-memory perturbation (embedding 100k texts would take ~6 minutes on
                       2 cores and would not change what is measured afterwards)
    retrieve warm      `retrieve_all_context(u0, s, q, RecallOptions(include_profile=True))`:
                       a chat turn's recall (episodic + semantic + procedural + short-term +
                       the user profile, all in its round trips) for queries whose embedding is
                       cached; between two timed queries the user gets a new memory (and loses the
                       one written before the previous query), so no cache of recall results
                       could serve a repeated query
    retrieve cold      the same for queries never seen (the ONNX model embeds each one)
    store_interaction  the agent's write after a turn (short-term + episodic + procedural),
                       right after the recall of the same message (its embedding is cached,
                       as in the agent); "uncached" embeds the message first. The off-path
                       work a write queues (the exchange's final vector) is waited for
                       between turns, untimed, as seconds pass between real turns
    cache hit          `CachedEmbedder.embed_query` served from the in-process LRU, and from
                       Redis (`EmbeddingsCache`) with the LRU emptied
    memory/memory      Redis `used_memory` growth over the episodic writes / memories written
                       (hash + index + vector); and the average `MEMORY USAGE` of one hash

Latencies are wall-clock in this process (client + server), in ms, over `--queries` runs.
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from typing import Any

import numpy as np

from benchmarks.common import (
    Progress,
    add_common_args,
    int_list,
    percentiles,
    redis_version,
    run_bench,
    stamp,
    table,
)
from memory.coordinator import MemoryCoordinator
from memory.embeddings.base import Embedder, l2_normalise
from memory.queries import RecallOptions

USERS = 10
MEASURED_USER = "u0"
SESSION = "bench-session"
POOL_SIZE = 2000

_SUBJECTS = [
    "my knee",
    "the new job",
    "my sister",
    "our trip to Lisbon",
    "the marathon",
    "my diet",
    "the dentist",
    "my sleep",
    "the garden",
    "my budget",
    "the piano lessons",
    "my dog Rex",
    "the book club",
    "my blood pressure",
    "the move to Berlin",
    "coffee",
    "the yoga class",
    "my back pain",
    "the team project",
    "my vitamin D",
    "the wedding",
    "my running shoes",
    "the allergy",
    "the night shift",
    "my cholesterol",
    "the hiking trip",
    "my flat",
    "the swimming pool",
    "my migraine",
    "the cooking course",
]
_VERBS = [
    "I started",
    "I stopped",
    "I am worried about",
    "I really enjoy",
    "I want to improve",
    "the doctor checked",
    "I talked to Anna about",
    "I forgot",
    "I planned",
    "I finished",
    "I am trying",
    "I skipped",
    "I booked",
    "I changed",
    "I measured",
]
_DETAILS = [
    "last week",
    "every morning",
    "twice a month",
    "since January",
    "after work",
    "on weekends",
    "before breakfast",
    "in the evening",
    "three times so far",
    "for a year",
    "and it went well",
    "but it hurt afterwards",
    "and I felt tired",
    "with a friend",
    "because of the stress",
    "to feel better",
    "as the coach suggested",
    "without much luck",
]
_QUESTIONS = [
    "What did I say about {s}?",
    "How is {s} going?",
    "When did I last mention {s}?",
    "Any advice on {s}?",
    "Remind me what happened with {s}",
    "Did {s} get better?",
]


def memory_text(rng: random.Random) -> str:
    return f"{rng.choice(_VERBS)} {rng.choice(_SUBJECTS)} {rng.choice(_DETAILS)}."


def query_text(rng: random.Random, n: int) -> str:
    q = rng.choice(_QUESTIONS).format(s=rng.choice(_SUBJECTS))
    return f"{q} ({n})" if n else q


class BenchEmbedder:
    """The real embedder, plus a cheap "fill" mode: a vector from a pool of real embeddings
    of template texts, perturbed per text so that no two memories share a vector."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dims = inner.dims
        self.fill = False
        self._pool: np.ndarray | None = None

    def prepare_pool(self, texts: list[str]) -> None:
        self._pool = self.inner.embed_many(texts)

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        if not self.fill or self._pool is None:
            return self.inner.embed_many(texts)
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for i, t in enumerate(texts):
            h = hash(t) & 0xFFFFFFFF
            rng = np.random.default_rng(h)
            out[i] = self._pool[h % len(self._pool)] + rng.normal(0, 0.02, self.dims)
        return l2_normalise(out)


def _items(rng: random.Random, n: int, start: int, now_ms: int) -> list[dict[str, Any]]:
    day = 86_400_000
    return [
        {
            "text": f"{memory_text(rng)} (#{start + i})",
            "event_type": rng.choice(["preference", "goal", "health_event", "interaction"]),
            "timestamp_ms": now_ms - rng.randrange(0, 365) * day,
            "session_id": f"s{rng.randrange(50)}",
            "importance": round(rng.random(), 2),
        }
        for i in range(n)
    ]


def _fill_to(
    coord: MemoryCoordinator,
    emb: BenchEmbedder,
    counts: dict[str, int],
    per_user: int,
    rng: random.Random,
    progress: Progress,
    now_ms: int,
) -> None:
    emb.fill = True
    try:
        total_goal = per_user * USERS
        for u in range(USERS):
            user = f"u{u}"
            while counts[user] < per_user:
                n = min(2000, per_user - counts[user])
                coord.add_episodic_many(user, _items(rng, n, counts[user], now_ms))
                counts[user] += n
                progress(f"fill: {sum(counts.values())}/{total_goal} memories")
    finally:
        emb.fill = False


def _seed_other_types(coord: MemoryCoordinator, rng: random.Random) -> None:
    """Short-term history and a few procedures for the measured user (as a chat would)."""
    for i in range(20):
        coord.add_message(
            MEASURED_USER,
            SESSION,
            "user" if i % 2 == 0 else "assistant",
            f"message {i}: {memory_text(rng)}",
        )
    for q, tools in [
        ("What is my resting heart rate?", ["get_heart_rate", "summarise"]),
        ("How did I sleep this week?", ["get_sleep"]),
    ]:
        for _ in range(3):
            coord.record_procedure(
                MEASURED_USER, q, tools, success_score=1.0, execution_time_ms=120.0
            )


def _retrieve(
    coord: MemoryCoordinator, emb: BenchEmbedder, queries: list[str], rng: random.Random
) -> dict[str, Any]:
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    written: str | None = None
    for q in queries:
        # A write between queries (untimed), as a user's next message follows new memories:
        # a cache of recall results could not serve a repeated query. The memory written
        # before the previous query goes again, so the user's store keeps its size.
        previous, written = written, _write_one(coord, emb, rng)
        if previous:
            coord.delete_memory(MEASURED_USER, "episodic", previous)
        # Messages are seconds apart: the off-path work a recall leaves (access counts, the
        # cached-query note) is done before the next one, not raced by this loop (untimed).
        coord.bookkeeping.drain()
        t = time.perf_counter()
        ctx = coord.retrieve_all_context(
            MEASURED_USER, SESSION, q, RecallOptions(include_profile=True)
        )
        totals.append((time.perf_counter() - t) * 1000)
        for k, v in (ctx.timings_ms or {}).items():
            if k != "total":
                stages.setdefault(k, []).append(float(v))
    if written:
        coord.delete_memory(MEASURED_USER, "episodic", written)
    coord.bookkeeping.drain()
    return {
        **percentiles(totals),
        "stages": {k: percentiles(v, (50, 95)) for k, v in stages.items()},
    }


def _write_one(coord: MemoryCoordinator, emb: BenchEmbedder, rng: random.Random) -> str:
    """One new memory of the measured user (its vector from the fill's pool: no model run)."""
    emb.fill = True
    try:
        (item,) = _items(rng, 1, rng.randrange(10**9), int(time.time() * 1000))
        return coord.add_episodic_many(MEASURED_USER, [item])[0]
    finally:
        emb.fill = False


def measure(
    coord: MemoryCoordinator, emb: BenchEmbedder, n_queries: int, rng: random.Random
) -> dict[str, Any]:
    """Latencies at the current store size."""
    base = [query_text(rng, 0) for _ in range(20)]
    for q in base:  # warm the embedding cache (and Redis' own caches)
        coord.retrieve_all_context(MEASURED_USER, SESSION, q, RecallOptions(include_profile=True))
    warm = _retrieve(coord, emb, [base[i % len(base)] for i in range(n_queries)], rng)
    uniq = int(time.time() * 1000)
    cold = _retrieve(coord, emb, [query_text(rng, uniq + i) for i in range(n_queries)], rng)

    store_cached: list[float] = []
    store_uncached: list[float] = []
    for i in range(n_queries):
        msg = f"{memory_text(rng)} ({uniq}-{i})"
        # the agent recalls first
        coord.retrieve_all_context(MEASURED_USER, SESSION, msg, RecallOptions(include_profile=True))
        t = time.perf_counter()
        coord.store_interaction(
            MEASURED_USER,
            SESSION,
            msg,
            "Noted, thanks for telling me.",
            tools_used=["get_sleep"],
            execution_time_ms=50.0,
        )
        store_cached.append((time.perf_counter() - t) * 1000)
        # Turns are seconds apart: the off-path work a turn leaves (the exchange's vector of
        # record, access counts) is done before the next one, not raced by this loop.
        coord.bookkeeping.drain()
        msg2 = f"{memory_text(rng)} (u{uniq}-{i})"
        t = time.perf_counter()
        coord.store_interaction(MEASURED_USER, SESSION, msg2, "Noted.")
        store_uncached.append((time.perf_counter() - t) * 1000)
        coord.bookkeeping.drain()
    return {
        "retrieve_warm_ms": warm,
        "retrieve_cold_ms": cold,
        "store_interaction_ms": percentiles(store_cached, (50, 95, 99)),
        "store_interaction_uncached_ms": percentiles(store_uncached, (50, 95, 99)),
    }


def cache_hits(coord: MemoryCoordinator, n: int) -> dict[str, Any]:
    cache = coord.embedder
    texts = [f"cache probe {i}" for i in range(n)]
    for t in texts:
        cache.embed_query(t)
    local: list[float] = []
    for t in texts:
        s = time.perf_counter()
        _, src = cache.embed_query(t)
        local.append((time.perf_counter() - s) * 1000)
    remote: list[float] = []
    for t in texts:
        cache.clear_local()
        s = time.perf_counter()
        _, src = cache.embed_query(t)
        remote.append((time.perf_counter() - s) * 1000)
        assert src == "redis", src
    model: list[float] = []
    for i in range(min(n, 50)):
        s = time.perf_counter()
        cache.inner.embed(f"an uncached sentence about {i} things")
        model.append((time.perf_counter() - s) * 1000)
    return {
        "local_hit_ms": percentiles(local, (50, 95)),
        "redis_hit_ms": percentiles(remote, (50, 95)),
        "model_embed_ms": percentiles(model, (50, 95)),
    }


def run(
    coord: MemoryCoordinator,
    emb: BenchEmbedder,
    sizes: list[int],
    *,
    n_queries: int = 200,
    ingest_sample: int = 2000,
    progress: Progress | None = None,
    seed: int = 7,
    pool_size: int = POOL_SIZE,
) -> dict[str, Any]:
    progress = progress or Progress(quiet=True)
    stamped = stamp()
    rng = random.Random(seed)
    r = coord.redis
    now_ms = int(time.time() * 1000)
    counts = {f"u{u}": 0 for u in range(USERS)}

    # the coordinator's warm-up (the statement classifier's fit) must embed for real, not
    # from the fill's pool
    coord.bookkeeping.drain()
    progress("embedding the vector pool for the fill...", force=True)
    emb.prepare_pool([memory_text(rng) for _ in range(pool_size)])
    _seed_other_types(coord, rng)

    # Ingest rate with real embeddings (fresh distinct texts), counted in the store.
    sample = min(ingest_sample, max(1, sizes[0] // USERS * USERS))
    mem0 = int(r.info("memory")["used_memory"])
    per = max(1, sample // USERS)
    t = time.perf_counter()
    for u in range(USERS):
        coord.add_episodic_many(f"u{u}", _items(rng, per, counts[f"u{u}"], now_ms))
        counts[f"u{u}"] += per
        progress(f"ingest (real embeddings): {sum(counts.values())}/{per * USERS}")
    ingest_s = time.perf_counter() - t
    ingest = {
        "memories": per * USERS,
        "seconds": round(ingest_s, 2),
        "per_second": round(per * USERS / ingest_s, 1),
    }
    progress.done(f"ingest: {ingest['per_second']} memories/s (real embeddings)")

    runs = []
    for size in sizes:
        per_user = max(1, size // USERS)
        before = sum(counts.values())
        t = time.perf_counter()
        _fill_to(coord, emb, counts, per_user, rng, progress, now_ms)
        fill_s = time.perf_counter() - t
        added = sum(counts.values()) - before
        progress.done(f"size {size}: {sum(counts.values())} memories (+{added} in {fill_s:.1f} s)")
        mem = int(r.info("memory")["used_memory"])
        n_ep = sum(counts.values())
        pattern = f"{coord.keys.episodic_prefix}:*"
        keys = list(itertools.islice(r.scan_iter(match=pattern, count=1000), 200))
        usage = [int(r.memory_usage(k, samples=0) or 0) for k in keys]
        progress(f"size {size}: measuring ({n_queries} queries x 4)", force=True)
        lat = measure(coord, emb, n_queries, rng)
        runs.append(
            {
                "size": n_ep,
                "user_memories": counts[MEASURED_USER],
                "users": USERS,
                "fill_per_second": round((n_ep - before) / fill_s, 1) if fill_s > 0 else None,
                "bytes_per_memory": round((mem - mem0) / n_ep, 1),
                "hash_bytes_per_memory": round(float(np.mean(usage)), 1) if usage else None,
                **lat,
            }
        )
        progress.done(
            f"size {size}: retrieve warm p95 {lat['retrieve_warm_ms']['p95']} ms, "
            f"cold p95 {lat['retrieve_cold_ms']['p95']} ms"
        )
    return {
        "sizes": runs,
        "ingest": ingest,
        "embedding_cache": cache_hits(coord, n_queries),
        "vector_algorithm": coord.settings.vector_algorithm,
        "redis_version": redis_version(r),
        **stamped,
    }


#: The stages of a recall the stage table shows (`MemoryContext.timings_ms`), in order.
STAGES = ("embed", "short_term", "episodic", "semantic", "procedural", "hydrate", "prompt")


def render(res: dict[str, Any]) -> str:
    rows = []
    for s in res["sizes"]:
        w, c = s["retrieve_warm_ms"], s["retrieve_cold_ms"]
        st, su = s["store_interaction_ms"], s["store_interaction_uncached_ms"]
        rows.append(
            [
                s["size"],
                s["user_memories"],
                w["p50"],
                w["p95"],
                w["p99"],
                c["p50"],
                c["p95"],
                c["p99"],
                st["p50"],
                st["p95"],
                su["p95"],
                round(s["bytes_per_memory"]),
                s["hash_bytes_per_memory"],
            ]
        )
    head = [
        "memories",
        "user's",
        "warm p50",
        "p95",
        "p99",
        "cold p50",
        "p95",
        "p99",
        "store p50",
        "p95",
        "uncached p95",
        "B/memory",
        "hash B",
    ]
    stage_rows = []
    for s in res["sizes"]:
        for name in ("warm", "cold"):
            st = s[f"retrieve_{name}_ms"]["stages"]
            stage_rows.append(
                [
                    s["size"],
                    name,
                    *[f"{st[k]['p50']}/{st[k]['p95']}" if k in st else "-" for k in STAGES],
                ]
            )
    ec, ing = res["embedding_cache"], res["ingest"]
    return "\n".join(
        [
            "retrieve_all_context and store_interaction (ms)",
            table(head, rows),
            "",
            "retrieve_all_context stages, p50/p95 ms",
            table(["memories", "query", *STAGES], stage_rows),
            "",
            f"ingest with real embeddings: {ing['per_second']} memories/s "
            f"({ing['memories']} in {ing['seconds']} s)",
            f"embedding cache: local hit p50 {ec['local_hit_ms']['p50']} ms, Redis hit p50 "
            f"{ec['redis_hit_ms']['p50']} ms (p95 {ec['redis_hit_ms']['p95']}), model "
            f"p50 {ec['model_embed_ms']['p50']} ms",
            f"vectors {res['vector_algorithm']}, Redis {res['redis_version']}, commit "
            f"{res['commit']}, {res['date']}",
        ]
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "latency", help="recall/store latency, ingest rate, cache hits, memory per memory"
    )
    p.add_argument(
        "--sizes",
        type=int_list,
        default="1000,10000,100000",
        help="total stored episodic memories per step (default 1000,10000,100000)",
    )
    p.add_argument("--queries", type=int, default=200, help="timed runs per figure")
    p.add_argument(
        "--ingest-sample",
        type=int,
        default=2000,
        help="memories embedded for real to measure the ingest rate",
    )
    add_common_args(p)
    p.set_defaults(fn=main)


def main(args: argparse.Namespace, settings: Any = None) -> int:
    from benchmarks import results
    from memory.embeddings import OnnxMiniLMEmbedder

    sizes = sorted(set(args.sizes))
    if not sizes or sizes[0] < USERS:
        raise SystemExit(f"--sizes must be at least {USERS} (one memory per user)")
    if args.queries < 1:
        raise SystemExit("--queries must be at least 1")
    progress = Progress(quiet=args.quiet)
    emb = BenchEmbedder(OnnxMiniLMEmbedder())
    return run_bench(
        args,
        "latency",
        lambda coord: run(
            coord,
            emb,
            sizes,
            n_queries=args.queries,
            ingest_sample=args.ingest_sample,
            progress=progress,
        ),
        render,
        lambda result: results.latency_figures(result, sizes),
        embedder=emb,
        load_knowledge=True,
    )
