"""The benchmarks, beside the product: `python -m benchmarks latency|locomo|floor|qa|report`.

    latency   recall/store latency, ingest rate, cache-hit latency and Redis memory per memory
    locomo    LoCoMo turn-level evidence recall through the app's recall path
    floor     where search stops: unanswerable questions that show nothing, evidence kept
    qa        answer accuracy on LoCoMo-style questions through the agent (needs Ollama)
    report    BENCHMARKS.md, printed from the recorded results (`benchmarks.report`)

The runs start a private embedded Redis unless `--redis-url` is given; with `--record` they
also write a record to `benchmarks/results/` (`benchmarks.results`), the only source of
BENCHMARKS.md. The lab's measurements record through the same module. The product never
imports this package (tests/unit/test_architecture.py).
"""

from __future__ import annotations

import argparse
import logging
import sys

from memory.errors import MemorySystemError
from memory.terminal import for_terminal

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from benchmarks import floor, latency, locomo, qa, report

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="bench", required=True)
    for bench in (latency, locomo, floor, qa, report):
        bench.add_parser(sub)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.fn(args))
    except MemorySystemError as e:
        print(f"error: {for_terminal(str(e), multiline=True)}", file=sys.stderr)
        return 1
