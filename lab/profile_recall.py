"""Where a warm recall's time goes at 1k or 100k (research, not a test).

Builds the latency bench's store as `python -m benchmarks latency` leaves it at its 100k
step (fills 1k and 10k and measures them first, unless `fresh`), times 200 warm recalls the
bench's way, sums the CPU time of recall's parts (`cpu_by_part`), then profiles 100 more with
cProfile and Redis' SLOWLOG (server time per command). Both count the CPU time of the recall's
thread (`time.thread_time`): on a shared machine the wall clock mostly measured waiting for a
core; the waits are the stages' `fetch` and SLOWLOG:

    python -m lab.profile_recall              # the bench's state at 100k
    python -m lab.profile_recall fresh        # a store filled straight to 100k
    python -m lab.profile_recall fresh 1000   # a store of 1k memories (100 for the user)

It first counts what one warm recall asks Redis (round trips, commands by name, with and
without the user profile): counts the machine's load does not move.
"""

from __future__ import annotations

import collections
import cProfile
import os
import pstats
import random
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import redis
from redis.client import Pipeline

from benchmarks import latency as L
from benchmarks.common import Progress, bench_redis, make_coordinator
from memory.embeddings import OnnxMiniLMEmbedder
from memory.queries import RecallOptions
from memory.recall import hybrid, pipeline

#: Parts of a recall whose CPU time `cpu_by_part` sums: (owner, attribute, label). Nested parts
#: overlap (`prepare` holds `_mark`); the pipelines' `execute` is redis-py's packing, sending
#: and parsing (both round trips).
PARTS = [
    (pipeline.RecallPipeline, "_first_round_trip", "first round trip (queries built, sent)"),
    (pipeline, "episodic_request", "  episodic queries built"),
    (pipeline, "semantic_request", "  semantic queries built"),
    (pipeline.RecallPipeline, "_read_ahead", "read-ahead round trip"),
    (Pipeline, "execute", "redis-py pipelines (both trips)"),
    (pipeline, "prepare", "replies read, marked (and episodic scored)"),
    (hybrid, "reply_rows", "  replies parsed"),
    (hybrid, "_mark", "  marked (coverage...)"),
    (hybrid, "score_candidates", "  episodic scored"),
    (pipeline, "fuse_request", "fusion (semantic scored)"),
    (pipeline, "hydrate", "hydration"),
]


class CountingPipeline(Pipeline):
    requests: list[tuple[int, list[str]]]

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        names = [str(args[0]).upper() for args, _ in self.command_stack]
        self.requests.append((threading.get_ident(), names))
        return super().execute(raise_on_error)


class CountingRedis(redis.Redis):
    """A client that notes each request (a pipeline or a lone command) and its thread."""

    requests: list[tuple[int, list[str]]]

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.requests.append((threading.get_ident(), [str(args[0]).upper()]))
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> CountingPipeline:
        pipe = CountingPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )
        pipe.requests = self.requests
        return pipe


def count_requests(client: CountingRedis, coord: Any, base: list[str]) -> None:
    """Round trips and commands of one warm recall (this thread's: the bookkeeping and the
    metrics flush have their own), averaged over the 20 queries, without and with the
    profile."""
    me = threading.get_ident()
    for profile in (False, True):
        trips: list[int] = []
        names: collections.Counter[str] = collections.Counter()
        for q in base:
            client.requests.clear()
            coord.retrieve_all_context(
                L.MEASURED_USER, L.SESSION, q, RecallOptions(include_profile=profile)
            )
            mine = [r for ident, r in client.requests if ident == me]
            trips.append(len(mine))
            names.update(n for r in mine for n in r)
            coord.bookkeeping.drain()
        n = len(base)
        by_name = ", ".join(f"{k} {v / n:.2f}" for k, v in names.most_common())
        print(
            f"{'with' if profile else 'without'} the profile: {sum(trips) / n:.2f} round trips "
            f"(min {min(trips)}, max {max(trips)}), {sum(names.values()) / n:.1f} commands per "
            f"recall: {by_name}"
        )


@contextmanager
def bench_state(
    fresh: bool = False,
    size: int = 100000,
) -> Iterator[tuple[Any, Any, L.BenchEmbedder, random.Random, list[str]]]:
    """(client, coordinator, embedder, rng, 20 warmed queries) of a private Redis holding the
    latency bench's store as at its 100k step (1k and 10k filled and measured first, unless
    `fresh`)."""
    with bench_redis(None) as (plain, ns):
        client = CountingRedis(connection_pool=plain.connection_pool)
        client.requests = []
        emb = L.BenchEmbedder(OnnxMiniLMEmbedder())
        coord = make_coordinator(client, ns, emb, load_knowledge=True)
        try:
            rng = random.Random(7)
            coord.bookkeeping.drain()
            emb.prepare_pool([L.memory_text(rng) for _ in range(L.POOL_SIZE)])
            L._seed_other_types(coord, rng)
            counts = {f"u{u}": 0 for u in range(L.USERS)}
            now = int(time.time() * 1000)
            quiet = Progress(quiet=True)
            for step in [] if fresh else [1000, 10000]:
                L._fill_to(coord, emb, counts, step // L.USERS, rng, quiet, now)
                L.measure(coord, emb, 200, rng)
            L._fill_to(coord, emb, counts, size // L.USERS, rng, quiet, now)
            base = [L.query_text(rng, 0) for _ in range(20)]
            for q in base:
                coord.retrieve_all_context(L.MEASURED_USER, L.SESSION, q)
            coord.bookkeeping.drain()
            yield client, coord, emb, rng, base
        finally:
            coord.close()


def profile_cost(coord: Any, base: list[str], n: int = 200) -> None:
    """The user profile's reads (three aggregations in the first round trip): recalls with and
    without it, alternating on the same queries, so both see the same load."""
    ms: dict[bool, list[float]] = {True: [], False: []}
    for i in range(n):
        for flag in (True, False) if i % 2 else (False, True):
            coord.bookkeeping.drain()
            t = time.perf_counter()
            query = base[i % 20]
            coord.retrieve_all_context(
                L.MEASURED_USER, L.SESSION, query, RecallOptions(include_profile=flag)
            )
            ms[flag].append((time.perf_counter() - t) * 1000)
    for flag, label in ((True, "with the profile"), (False, "without it")):
        p50, p95 = np.percentile(ms[flag], [50, 95])
        print(f"recall {label:17s} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  ({n} alternating runs)")


def cpu_by_part(coord: Any, base: list[str], n: int = 300) -> None:
    """CPU time of the recall's thread per recall (`time.thread_time`: the machine's load
    hardly moves it) in total and in each of `PARTS`, over `n` recalls with the profile."""
    spent: dict[str, float] = collections.defaultdict(float)
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in PARTS]

    def timed(fn: Any, label: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - t

        return run

    for (owner, name, fn), (_, _, label) in zip(originals, PARTS, strict=True):
        setattr(owner, name, timed(fn, label))
    try:
        for i in range(n):
            coord.bookkeeping.drain()
            t = time.thread_time()
            options = RecallOptions(include_profile=True)
            coord.retrieve_all_context(L.MEASURED_USER, L.SESSION, base[i % 20], options)
            spent["recall"] += time.thread_time() - t
    finally:
        for owner, name, fn in originals:
            setattr(owner, name, fn)
    print(f"CPU of the recall's thread, ms per recall ({n} recalls):")
    for label in ["recall", *(label for _, _, label in PARTS)]:
        print(f"  {label:45s} {spent[label] / n * 1000:6.3f}")


def main() -> None:
    fresh = len(sys.argv) > 1 and sys.argv[1] == "fresh"
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    with bench_state(fresh, size) as (client, coord, emb, rng, base):
        count_requests(client, coord, base)
        res = L._retrieve(coord, emb, [base[i % 20] for i in range(200)], rng)
        print("warm ms", {k: res[k] for k in ("p50", "p95")}, "stages", res["stages"])
        profile_cost(coord, base)
        cpu_by_part(coord, base)
        client.config_set("slowlog-log-slower-than", 0)
        client.config_set("slowlog-max-len", 100000)
        client.slowlog_reset()
        profile = cProfile.Profile(timer=time.thread_time)
        for i in range(100):
            profile.enable()
            coord.retrieve_all_context(L.MEASURED_USER, L.SESSION, base[i % 20])
            profile.disable()
            coord.bookkeeping.drain()  # off the answer path, as between a user's messages
        per_command: dict[str, list[int]] = collections.defaultdict(list)
        for entry in client.slowlog_get(100000):
            cmd = entry["command"]
            text = cmd.decode(errors="replace") if isinstance(cmd, bytes) else str(cmd)
            parts = text.split()
            name = parts[0].upper()
            if name == "FT.SEARCH":
                name = f"FT.SEARCH {parts[1]} {'KNN' if 'KNN' in text else 'TEXT'}"
            per_command[name].append(int(entry["duration"]))
        print("load average at the end", os.getloadavg())
        print("server time per recall (SLOWLOG, includes the bookkeeping drained between):")
        for name, us in sorted(per_command.items(), key=lambda kv: -sum(kv[1]))[:12]:
            print(
                f"  {name:50s} n={len(us):5d} mean {np.mean(us):7.1f} us  {sum(us) / 100e3:.3f} ms"
            )
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
