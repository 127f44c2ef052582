"""Does the metrics thread's flush land in timed recalls? (research, not a test)

Builds the latency bench's store as it is at its 100k step (1k and 10k filled and measured
first), then times 200 warm recalls the bench's way with the metrics recorder flushing every
0.5 s (as shipped) and every 5 s, three rounds, alternating (0.5 s first in each round):

    python -m lab.metrics_flush_ab
"""

from __future__ import annotations

import time

from benchmarks import latency as L
from lab.profile_recall import bench_state


def main() -> None:
    with bench_state() as (_, coord, emb, rng, base):
        for _ in range(3):
            for interval in (0.5, 5.0):
                coord.metrics._interval = interval  # the flush loop reads it each wait
                time.sleep(interval + 0.1)  # the wait under the old interval ends first
                res = L._retrieve(coord, emb, [base[i % 20] for i in range(200)], rng)
                fetch = res["stages"]["fetch"]["p95"]
                print(f"flush every {interval} s: warm p50 {res['p50']} p95 {res['p95']} ms, "
                      f"fetch p95 {fetch} ms", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
