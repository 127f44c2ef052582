"""Where a warm recall's time goes at 1k or 100k (research, not a test).

Builds the latency bench's store as `python -m benchmarks latency` leaves it at its 100k
step (fills 1k and 10k and measures them first, unless `fresh`), times 200 warm recalls the
bench's way, then profiles 100 more with cProfile and Redis' SLOWLOG (server time per command):

    python -m lab.profile_recall              # the bench's state at 100k
    python -m lab.profile_recall fresh        # a store filled straight to 100k
    python -m lab.profile_recall fresh 1000   # a store of 1k memories (100 for the user)
"""

from __future__ import annotations

import collections
import cProfile
import os
import pstats
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from benchmarks import latency as L
from benchmarks.common import Progress, bench_redis, make_coordinator
from memory.embeddings import OnnxMiniLMEmbedder
from memory.queries import RecallOptions


@contextmanager
def bench_state(
    fresh: bool = False,
    size: int = 100000,
) -> Iterator[tuple[Any, Any, L.BenchEmbedder, random.Random, list[str]]]:
    """(client, coordinator, embedder, rng, 20 warmed queries) of a private Redis holding the
    latency bench's store as at its 100k step (1k and 10k filled and measured first, unless
    `fresh`)."""
    with bench_redis(None) as (client, ns):
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


def main() -> None:
    fresh = len(sys.argv) > 1 and sys.argv[1] == "fresh"
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    with bench_state(fresh, size) as (client, coord, emb, rng, base):
        res = L._retrieve(coord, emb, [base[i % 20] for i in range(200)], rng)
        print("warm ms", {k: res[k] for k in ("p50", "p95")}, "stages", res["stages"])
        profile_cost(coord, base)
        client.config_set("slowlog-log-slower-than", 0)
        client.config_set("slowlog-max-len", 100000)
        client.slowlog_reset()
        profile = cProfile.Profile()
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
