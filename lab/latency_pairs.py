"""Before/after pairs of the latency bench (machines here are noisy: pairs share the load).

    python -m lab.latency_pairs --before /tmp/before --after . --runs 3 --out scratch/pairs

runs `python -m benchmarks latency --json --quiet` (`python -m memory bench latency ...` in a
checkout from before the benchmarks left the memory package) in the two checkouts alternately
(before, after, before, ...), `--runs` times each, so that the machine's load falls on both
alike; keeps each run's JSON in --out and prints the table BENCHMARKS.md quotes (each run, the
median), then the warm recall's stages (each arm's median p50/p95). `--sizes 1000`: only the
1k step (minutes, not the 100k fill).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Figure = Callable[[dict[str, Any]], float]


def _size(run: dict[str, Any], user_memories: int) -> dict[str, Any]:
    return next(s for s in run["sizes"] if s["user_memories"] == user_memories)


FIGURES: list[tuple[str, Figure]] = [
    ("warm p95 at 1k (100 per user)", lambda r: _size(r, 100)["retrieve_warm_ms"]["p95"]),
    ("warm p50 at 1k", lambda r: _size(r, 100)["retrieve_warm_ms"]["p50"]),
    ("warm p95 at 10k (1,000 per user)", lambda r: _size(r, 1000)["retrieve_warm_ms"]["p95"]),
    ("warm p95 at 100k (10k per user)", lambda r: _size(r, 10000)["retrieve_warm_ms"]["p95"]),
    ("warm p50 at 100k", lambda r: _size(r, 10000)["retrieve_warm_ms"]["p50"]),
    ("cold p95 at 100k", lambda r: _size(r, 10000)["retrieve_cold_ms"]["p95"]),
    ("ingest, memories/s", lambda r: r["ingest"]["per_second"]),
    ("Redis bytes per memory at 100k", lambda r: _size(r, 10000)["bytes_per_memory"]),
]


def run_once(checkout: Path, out: Path, sizes: str | None = None) -> dict[str, Any]:
    bench = (
        ["benchmarks"]
        if (checkout / "benchmarks" / "__main__.py").exists()
        else ["memory", "bench"]
    )
    cmd = [sys.executable, "-m", *bench, "latency", "--json", "--quiet"]
    cmd += ["--sizes", sizes] if sizes else []
    done = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{checkout}: {' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    out.write_text(done.stdout)
    return dict(json.loads(done.stdout))


def rows(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines = []
    for name, figure in FIGURES:
        cells = []
        if any(not _has(r, figure) for arm in ("before", "after") for r in runs[arm]):
            continue  # a size these runs left out (--sizes)
        for arm in ("before", "after"):
            values = [figure(r) for r in runs[arm]]
            cells += [" / ".join(f"{v:g}" for v in values), f"{statistics.median(values):g}"]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return lines


def _has(run: dict[str, Any], figure: Figure) -> bool:
    try:
        figure(run)
    except StopIteration:
        return False
    return True


def stage_rows(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Per size and stage of the warm recall (`timings_ms`): each arm's median of its runs'
    p50 and p95."""
    lines = []
    for size in runs["before"][0]["sizes"]:
        n = size["user_memories"]
        stages = size["retrieve_warm_ms"]["stages"]
        for stage in stages:
            cells = []
            for arm in ("before", "after"):
                warm = [_size(r, n)["retrieve_warm_ms"]["stages"].get(stage) for r in runs[arm]]
                for q in ("p50", "p95"):
                    cells.append(f"{statistics.median(w[q] for w in warm if w):g}")
            lines.append(f"| {size['size']:,} | {stage} | {' | '.join(cells)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--before", type=Path, required=True, help="checkout of the code before")
    ap.add_argument("--after", type=Path, default=Path("."), help="checkout of the code after")
    ap.add_argument("--runs", type=int, default=3, help="runs of each arm")
    ap.add_argument("--out", type=Path, required=True, help="folder for each run's JSON")
    ap.add_argument("--sizes", help="the bench's --sizes (default: its own)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for i in range(1, args.runs + 1):
        for arm in ("before", "after"):
            checkout = getattr(args, arm).resolve()
            run = run_once(checkout, args.out / f"{arm}-{i}.json", args.sizes)
            runs[arm].append(run)
            load = os.getloadavg()[0]
            print(f"{arm} {i} {time.strftime('%H:%M:%S')} commit {run['commit']} load {load:.2f}")
    print("| figure | before: each run | median | after: each run | median |")
    print("|---|---|---|---|---|")
    print("\n".join(rows(runs)))
    print("\n| memories | warm stage | before p50 | p95 | after p50 | p95 |")
    print("|---|---|---|---|---|---|")
    print("\n".join(stage_rows(runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
