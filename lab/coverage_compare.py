"""Per-file coverage before and after a change to the tests (issue 43's rule: no product file
loses more than a point of line coverage, and the total is not lower).

Make each report with `make coverage` (or the same pytest command by hand) in its checkout,
then `.venv/bin/python -m coverage json -o FILE` there, and compare:

    .venv/bin/python -m lab.coverage_compare BEFORE.json AFTER.json [--min-change 1.0]

It prints a markdown table of the product files whose line coverage moved by at least
`--min-change` points (or that exist on one side only), then the totals, and exits 1 when a
file lost more than a point or the total line coverage fell.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRODUCT = ("memory/", "agent/", "ui/", "pages/", "app.py")
ALLOWED_LOSS = 1.0  # points of line coverage a file may lose


@dataclass(frozen=True)
class FileCoverage:
    statements: int
    covered: int
    branches: int
    covered_branches: int

    @property
    def lines_pct(self) -> float:
        return 100.0 * self.covered / self.statements if self.statements else 100.0

    @property
    def branches_pct(self) -> float:
        return 100.0 * self.covered_branches / self.branches if self.branches else 100.0


def product_files(
    report: dict[str, Any], prefixes: tuple[str, ...] = PRODUCT
) -> dict[str, FileCoverage]:
    """The report's files under the product's folders, by path relative to the checkout."""
    out: dict[str, FileCoverage] = {}
    for name, data in report["files"].items():
        if not name.startswith(prefixes):
            continue
        s = data["summary"]
        branches, covered_branches = s.get("num_branches", 0), s.get("covered_branches", 0)
        out[name] = FileCoverage(
            s["num_statements"], s["covered_lines"], branches, covered_branches
        )
    return out


def total(files: dict[str, FileCoverage]) -> FileCoverage:
    return FileCoverage(
        sum(f.statements for f in files.values()),
        sum(f.covered for f in files.values()),
        sum(f.branches for f in files.values()),
        sum(f.covered_branches for f in files.values()),
    )


def _pct(f: FileCoverage | None) -> str:
    return "—" if f is None else f"{f.lines_pct:.1f}"


def compare(
    before: dict[str, FileCoverage], after: dict[str, FileCoverage], min_change: float
) -> tuple[list[str], list[str]]:
    """(markdown lines, files that lost more than ALLOWED_LOSS points or the total's fall)."""
    rows, losses = [], []
    for name in sorted(before.keys() | after.keys()):
        b, a = before.get(name), after.get(name)
        delta = None if a is None or b is None else a.lines_pct - b.lines_pct
        if delta is not None and abs(delta) < min_change:
            continue
        if delta is not None and delta < -ALLOWED_LOSS:
            losses.append(f"{name}: {delta:+.1f} points")
        shown = "only " + ("before" if a is None else "after") if delta is None else f"{delta:+.1f}"
        rows.append(f"| {name} | {_pct(b)} | {_pct(a)} | {shown} |")
    tb, ta = total(before), total(after)
    if ta.lines_pct < tb.lines_pct:
        losses.append(f"total: {ta.lines_pct - tb.lines_pct:+.2f} points")
    lines = [
        "| file | lines % before | lines % after | change |",
        "| --- | ---: | ---: | ---: |",
        *rows,
        f"| **total lines** ({tb.covered}/{tb.statements} → {ta.covered}/{ta.statements}) "
        f"| {tb.lines_pct:.2f} | {ta.lines_pct:.2f} | {ta.lines_pct - tb.lines_pct:+.2f} |",
        f"| **total branches** ({tb.covered_branches}/{tb.branches} → "
        f"{ta.covered_branches}/{ta.branches}) | {tb.branches_pct:.2f} | {ta.branches_pct:.2f} "
        f"| {ta.branches_pct - tb.branches_pct:+.2f} |",
    ]
    return lines, losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="`coverage json` report before the change")
    parser.add_argument("after", type=Path, help="`coverage json` report after the change")
    parser.add_argument("--min-change", type=float, default=1.0, help="points a row needs")
    args = parser.parse_args(argv)
    before = product_files(json.loads(args.before.read_text()))
    after = product_files(json.loads(args.after.read_text()))
    lines, losses = compare(before, after, args.min_change)
    print("\n".join(lines))
    print(f"\n{len(before)} product files before, {len(after)} after.")
    for loss in losses:
        print(f"LOST {loss}")
    return 1 if losses else 0


if __name__ == "__main__":
    raise SystemExit(main())
