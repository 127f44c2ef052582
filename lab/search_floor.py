"""How the relevance bands and the search floor fall on a data file; fits the floor.

    python -m lab.search_floor --data ../shared/bench/personal/personal-dev.json [--record]

Ingests a LoCoMo-format file as `bench locomo` does (`benchmarks.locomo.ingest`) and asks
every question through `MemoryCoordinator.search` with no minimum score, keeping the top `k`
(20) hits. Each hit is evidence (it holds one of the question's evidence turns) or not. Per
band (high, moderate, low at or above the floor, below the floor) the command reports:

    hits       how many of the top-k hits fall there
    evidence   how many of those are evidence
    precision  evidence / hits: how often a hit of that band is what the question needs
    share      the band's share of all the evidence hits found in the top k

and the floor it fits: the highest score that keeps `KEEP` (95%) of the evidence hits found,
the one parameter of the fit. Search shown to people stops below `memory.models.SHOWN_FLOOR`
(set from this fit); recall for the prompt and the recall benchmarks are not floored.
`--record` writes the bands' precision and share, the floor in use and the fitted one to
`benchmarks/results/` (bench "bands"), where BENCHMARKS.md reads them.
"""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks.common import Progress, add_common_args, run_bench, stamp, table
from benchmarks.locomo import add_data_args, data_from_args, ingest, questions, turns_held
from memory.coordinator import MemoryCoordinator
from memory.models import BAND_HIGH, BAND_MODERATE, SHOWN_FLOOR
from memory.queries import SearchFilter

#: the share of the evidence hits found that the fitted floor keeps
KEEP = 0.95
TOP_K = 20
BANDS = ("high", "moderate", "low", "below floor")


def band_of(score: float, floor: float) -> str:
    """The band a hit shows in, or "below floor" when search would not show it."""
    if score >= BAND_HIGH:
        return "high"
    if score >= BAND_MODERATE:
        return "moderate"
    return "low" if score >= floor else "below floor"


def fit_floor(evidence_scores: list[float], keep: float = KEEP) -> float:
    """The highest score that keeps `keep` of the evidence hits (0.0 without any)."""
    if not evidence_scores:
        return 0.0
    ranked = sorted(evidence_scores, reverse=True)
    return ranked[max(0, int(keep * len(ranked) + 0.5) - 1)]


def band_table(scored: list[tuple[float, bool]], floor: float) -> dict[str, dict[str, Any]]:
    """Per band: hits, evidence hits, precision and the band's share of the evidence found."""
    found = sum(1 for _, ev in scored if ev)
    out: dict[str, dict[str, Any]] = {}
    for band in BANDS:
        mine = [ev for s, ev in scored if band_of(s, floor) == band]
        n_ev = sum(mine)
        out[band] = {
            "hits": len(mine),
            "evidence": n_ev,
            "precision": round(n_ev / len(mine), 4) if mine else 0.0,
            "share": round(n_ev / found, 4) if found else 0.0,
        }
    return out


def run(
    coord: MemoryCoordinator,
    data: list[dict[str, Any]],
    *,
    k: int = TOP_K,
    progress: Progress | None = None,
    user_prefix: str = "bands-",
) -> dict[str, Any]:
    """Ingest, ask every question; the result dict of `--json`."""
    progress = progress or Progress(quiet=True)
    stamped = stamp()
    ingest(coord, data, progress, user_prefix)
    scored: list[tuple[float, bool]] = []
    top_bands: list[str] = []  # the band of each question's best evidence hit
    n_questions = 0
    for sample in data:
        user = user_prefix + sample["sample_id"]
        for q in questions(sample):
            gold = {str(e) for e in q["evidence"]}
            hits = coord.search(user, str(q["question"]), k=k, where=SearchFilter(min_score=0.0))
            marks = [(h.score, bool(set(turns_held(h)) & gold)) for h in hits]
            scored.extend(marks)
            best = max((s for s, ev in marks if ev), default=None)
            top_bands.append("none in top k" if best is None else band_of(best, SHOWN_FLOOR))
            n_questions += 1
            progress(f"questions {n_questions}")
    progress.done(f"asked {n_questions} questions")
    fitted = fit_floor([s for s, ev in scored if ev])
    return {
        "n_questions": n_questions,
        "k": k,
        "keep": KEEP,
        "fitted_floor": round(fitted, 4),
        "floor": SHOWN_FLOOR,
        "bands": band_table(scored, SHOWN_FLOOR),
        "best_evidence_band": {b: top_bands.count(b) for b in (*BANDS, "none in top k")},
        **stamped,
    }


def render(result: dict[str, Any]) -> str:
    rows = [
        [band, s["hits"], s["evidence"], s["precision"], s["share"]]
        for band, s in result["bands"].items()
    ]
    best = ", ".join(f"{b} {n}" for b, n in result["best_evidence_band"].items())
    return (
        table(["band", "hits", "evidence", "precision", "share"], rows)
        + f"\n\n{result['n_questions']} questions, top {result['k']} hits each; "
        f"floor {result['floor']} (fit keeping {result['keep']:.0%} of the evidence found: "
        f"{result['fitted_floor']})\nbest evidence hit per question: {best}\n"
        f"commit {result['commit']}, {result['date']}"
    )


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """The record's figures: per band, its hits' precision and its share of the evidence
    found; the floor in use and the one the fit gives."""
    out: dict[str, Any] = {"questions": result["n_questions"], "floor": result["floor"]}
    out["fitted_floor"] = result["fitted_floor"]
    for band, s in result["bands"].items():
        name = band.replace(" ", "_")
        out[f"{name}_precision"] = s["precision"]
        out[f"{name}_share"] = s["share"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.search_floor", description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    add_data_args(p)
    add_common_args(p)
    args = p.parse_args(argv)
    data = data_from_args(args)
    progress = Progress(quiet=args.quiet)
    return run_bench(
        args,
        "bands",
        lambda coord: run(coord, data, progress=progress),
        render,
        figures,
        prog="python -m lab.search_floor",
        data=args.data,
    )


if __name__ == "__main__":
    raise SystemExit(main())
