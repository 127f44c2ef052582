"""Benchmarks of the memory system, run as `python -m memory bench latency|locomo|bands|...`.

    latency   recall/store latency, ingest rate, cache-hit latency and Redis memory per memory
    locomo    LoCoMo turn-level evidence recall through the app's recall path
    bands     how the relevance bands and the search floor fall on a LoCoMo-format file
    pages     time to a usable page in a real browser: a cold first open, Stats (the app
              runs as a subprocess; this package never imports it)
    report    BENCHMARKS.md, printed from the recorded results (`memory.bench.report`)

latency, locomo and bands start a private embedded Redis unless `--redis-url` is given; with
`--record` they also write their headline figures, command, commit, date, machine and embedder
to `benchmarks/results/` (`memory.bench.results`), the only source of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse

__all__ = ["add_bench_parser"]


def add_bench_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `bench` and its sub-commands on the `python -m memory` parser."""
    from memory.bench import bands, latency, locomo, pages, report

    p = subparsers.add_parser("bench", help="benchmarks: latency, locomo, bands, pages, report")
    sub = p.add_subparsers(dest="bench_command", required=True)
    latency.add_parser(sub)
    locomo.add_parser(sub)
    bands.add_parser(sub)
    pages.add_parser(sub)
    report.add_parser(sub)
