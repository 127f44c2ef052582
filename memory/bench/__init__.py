"""Benchmarks of the memory system, run as `python -m memory bench latency|locomo|report`.

    latency   recall/store latency, ingest rate, cache-hit latency and Redis memory per memory
    locomo    LoCoMo turn-level evidence recall through the app's recall path
    report    BENCHMARKS.md, printed from the recorded results (`memory.bench.report`)

latency and locomo start a private embedded Redis unless `--redis-url` is given; with
`--record` they also write their headline figures, command, commit, date, machine and embedder
to `benchmarks/results/` (`memory.bench.results`), the only source of BENCHMARKS.md. The
developers' measurements (the search floor's fit, page times in a browser, the recall fit)
live in `lab/` and record through the same module.
"""

from __future__ import annotations

import argparse

__all__ = ["add_bench_parser"]


def add_bench_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `bench` and its sub-commands on the `python -m memory` parser."""
    from memory.bench import latency, locomo, report

    p = subparsers.add_parser("bench", help="benchmarks: latency, locomo, report")
    sub = p.add_subparsers(dest="bench_command", required=True)
    latency.add_parser(sub)
    locomo.add_parser(sub)
    report.add_parser(sub)
