"""What the user filter costs the episodic KNN (research, not a test).

A private embedded Redis with a FLOAT16 FLAT index of 100k random unit vectors (384 dims),
10 users of 10k each, 2% superseded; two layouts: each user's memories contiguous (the latency
bench fills user by user) and interleaved (users writing at the same time). Each filter runs
the KNN 30 of recall, 70 timed queries after 10 warm-ups; median and p95 ms per query:

    python -m lab.knn_filter_cost

Filters: `owner AND status` (recall before the `live` tag), `owner AND NOT superseded`,
`live` (one tag: the owner while active, as shipped), `owner` alone (no status check).
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import bench_redis

N, USERS, DIMS, K = 100_000, 10, 384, 30
FILTERS = {
    "owner AND status": "@owner:{u3} @status:{active}",
    "owner AND NOT superseded": "@owner:{u3} -@status:{superseded}",
    "live (shipped)": "@live:{u3}",
    "owner alone": "@owner:{u3}",
}


def main() -> None:
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(N, DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    layouts = {"contiguous": lambda i: i // (N // USERS), "interleaved": lambda i: i % USERS}
    with bench_redis(None) as (client, _):
        for layout, user_of in layouts.items():
            client.execute_command(
                "FT.CREATE", layout, "ON", "HASH", "PREFIX", 1, f"{layout}:", "SCHEMA",
                "owner", "TAG", "status", "TAG", "live", "TAG", "timestamp", "NUMERIC",
                "v", "VECTOR", "FLAT", 6,
                "TYPE", "FLOAT16", "DIM", DIMS, "DISTANCE_METRIC", "COSINE",
            )  # fmt: skip
            pipe = client.pipeline(transaction=False)
            for i in range(N):
                user, superseded = f"u{user_of(i)}", i % 50 == 0
                pipe.hset(
                    f"{layout}:{i}",
                    mapping={
                        "owner": user,
                        "status": "superseded" if superseded else "active",
                        "live": "" if superseded else user,
                        "timestamp": i,
                        "v": vecs[i].astype(np.float16).tobytes(),
                    },
                )
                if i % 5000 == 4999:
                    pipe.execute()
            pipe.execute()
            while int(client.ft(layout).info().get("indexing", 0)):
                time.sleep(0.1)
            q = rng.normal(size=DIMS).astype(np.float32)
            blob = (q / np.linalg.norm(q)).astype(np.float16).tobytes()
            for name, flt in FILTERS.items():
                times = []
                for _ in range(80):
                    t = time.perf_counter()
                    client.execute_command(
                        "FT.SEARCH", layout, f"({flt})=>[KNN {K} @v $vec AS d]",
                        "PARAMS", 2, "vec", blob, "RETURN", 2, "timestamp", "d",
                        "SORTBY", "d", "LIMIT", 0, K, "DIALECT", 2,
                    )  # fmt: skip
                    times.append((time.perf_counter() - t) * 1000)
                ms = np.percentile(times[10:], [50, 95])
                print(f"{layout:12s} {name:26s} p50 {ms[0]:5.2f} ms  p95 {ms[1]:5.2f} ms")


if __name__ == "__main__":
    main()
