"""How long the Stats page takes to run, on a store that has been used for a while.

    python -m lab.stats_load_time [--runs 7] [--samples 50000] [--memories 300] [--profile]

Starts a private Redis Stack (throw-away data folder), fills one namespace with what a busy
store holds: the knowledge file, `--memories` episodic memories of one user, a full latency
stream (`--samples`, the default cap of METRICS_MAX_ENTRIES, spread over the last 24 hours, as
the page's default window shows), counters and a month of maintenance runs. Then it runs the
page (`pages/stats.py`, Streamlit's AppTest: the page's own code, no browser) `--runs` times as
an admin, each run a new session as a new visitor is (caches emptied), then once more in the
same session as a click does, and prints the median wall times.
The first run also builds the cached resources (embedding model, agent): it is reported apart.
Nothing listens at OLLAMA_HOST (memory-only mode): the model plays no part in this page.

`--profile` prints where one visit and its rerun spend their time (cProfile, cumulative).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from memory.config import PROJECT_ROOT, Settings
from memory.keys import Keys
from memory.runtime.server import EmbeddedRedis, free_port

ROOT = Path(__file__).resolve().parents[1]

USER = "alice"
DAY_MS = 86_400_000
#: One chat turn's samples, as the coordinator records them: (type, op, typical ms, hit?).
TURN = (
    ("embedding", "embed_query", 4.0, None),
    ("episodic", "recall", 3.0, True),
    ("semantic", "recall", 2.5, True),
    ("procedural", "recall", 1.0, False),
    ("short_term", "recall", 0.6, None),
    ("all", "retrieve_all_context", 9.0, True),
    ("short_term", "add", 0.8, None),
    ("episodic", "store_interaction", 5.0, None),
    ("episodic", "search", 6.0, True),
)


def seed(url: str, ns: str, memories: int, samples: int) -> None:
    """Fill namespace `ns` through the coordinator (memories) and raw (metrics history)."""
    import redis

    from memory.bench.common import make_coordinator

    client = redis.Redis.from_url(url, decode_responses=False)
    coord = make_coordinator(client, ns, load_knowledge=True)
    rng = random.Random(7)
    topics = ("running", "sleep", "diet", "work", "family", "travel", "reading", "music")
    for i in range(memories):
        topic = topics[i % len(topics)]
        coord.add_episodic(
            USER,
            f"Note {i} about {topic}: the user mentioned {topic} detail {rng.randint(1, 999)}",
            event_type="preference" if i % 3 == 0 else "interaction",
            tags=[topic],
        )
    coord.close()

    keys = Keys(ns)
    now = int(time.time() * 1000)
    start = now - DAY_MS + 60_000
    step = (now - start) / max(samples, 1)
    client.delete(keys.metrics_latency)  # the seeding's own samples are newer than the history
    pipe = client.pipeline(transaction=False)
    for i in range(samples):
        ts = int(start + i * step)
        mtype, op, ms, hit = TURN[i % len(TURN)]
        fields = {
            "ts": ts,
            "type": mtype,
            "op": op,
            "ms": round(rng.lognormvariate(0, 0.5) * ms, 3),
            "hit": "" if hit is None else ("1" if rng.random() < 0.8 else "0"),
        }
        pipe.xadd(keys.metrics_latency, fields, id=f"{ts}-{i}")
        if i % 5000 == 4999:
            pipe.execute()
    pipe.hset(
        keys.metrics_counters,
        mapping={
            "embed_cache_local_hit": 800,
            "embed_cache_redis_hit": 300,
            "embed_cache_miss": 500,
            "extraction_stored": 120,
            "extraction_duplicate": 40,
        },
    )
    for d in range(30):
        entry = {"at_ms": now - d * DAY_MS, "consolidated": d % 4, "expired": d % 3}
        pipe.lpush(keys.maintenance_history, json.dumps({**entry, "active_before": 300}))
    pipe.execute()
    client.close()


def run_page() -> tuple[float, float]:
    """(a first visit, a rerun of the same session: what opening a section or changing a
    filter costs). `st.cache_data` is emptied first, so a visit never finds the previous
    visit's data."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "pages" / "stats.py"), default_timeout=120)
    at.session_state["user_id"] = USER
    at.session_state["session_id"] = "s-load"
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        if at.exception:
            raise SystemExit(f"The page failed: {at.exception[0].value}")
    return times[0], times[1]


def profile_one_run() -> None:
    """Profile the page's own code: AppTest runs it in a thread of its own, through
    `exec_func_with_error_handling`, so the profiler wraps that call."""
    from streamlit.runtime.scriptrunner import script_runner

    prof = cProfile.Profile()
    original = script_runner.exec_func_with_error_handling

    def profiled(func, ctx):  # type: ignore[no-untyped-def]
        return prof.runcall(original, func, ctx)

    script_runner.exec_func_with_error_handling = profiled  # type: ignore[assignment]
    try:
        run_page()
    finally:
        script_runner.exec_func_with_error_handling = original
    pstats.Stats(prof).sort_stats("cumulative").print_stats(45)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--samples", type=int, default=50_000)
    p.add_argument("--memories", type=int, default=300)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="stats-load-"))
    server = EmbeddedRedis(data_dir, free_port(), PROJECT_ROOT)
    url = server.start()
    ns = "load" + uuid.uuid4().hex[:8]
    try:
        seed(url, ns, args.memories, args.samples)
        os.environ.update(
            REDIS_URL=url,
            MEMORY_NAMESPACE=ns,
            OLLAMA_HOST=f"http://127.0.0.1:{free_port()}",  # nothing listens: memory-only
            MAINTENANCE_INTERVAL_S="0",
        )
        Settings()  # fail here, not inside the page, if the environment is wrong
        cold = run_page()[0]
        runs = [run_page() for _ in range(args.runs)]
        visits, reruns = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"Stats page, {args.memories} memories, {args.samples} latency samples, "
            f"{args.runs} runs: a visit median {statistics.median(visits):.2f} s "
            f"(min {min(visits):.2f}, max {max(visits):.2f}), a rerun (a click) median "
            f"{statistics.median(reruns):.2f} s; first visit with resources {cold:.2f} s"
        )
        if args.profile:
            profile_one_run()
    finally:
        from ui import resources

        resources.release_all()
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
