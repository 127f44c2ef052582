"""`python -m benchmarks floor`: where search shown to people stops, fitted on questions that
have an answer in the store and on questions that have none.

    python -m benchmarks floor --data personal-dev.json locomo-dev.json \\
        --unanswerable tests/data/unanswerable.json [--record]

Ingests each LoCoMo-format file (`benchmarks.locomo.ingest`) with the built-in facts the app
loads, and searches as the app's search box does: episodic and semantic, merged best first,
no minimum score, the top `K` (5) hits. Two kinds of question:

    answerable    the files' questions whose evidence is among their top K hits; one keeps
                  its evidence shown at floor f when an evidence hit of its top K scores ≥ f
    unanswerable  the set's questions (`tests/data/unanswerable.json`, written for this: no
                  turn of the files answers them), each asked of the users it names; one
                  shows nothing at floor f when no hit scores ≥ f

The fit: the floor that maximises (answerable kept + unanswerable showing nothing), both
shares over the files together; it is the one parameter fitted, and on these development
files (no held-out split: the figures are fitted-on figures). Per file, the command reports
both shares at the floor in use (`memory.models.SHOWN_FLOOR`, the fit rounded) and at the
fitted one, and per relevance band the precision of its hits. `--record` writes one record per
file (bench "floor"), where BENCHMARKS.md reads them. Recall for the prompt is not floored;
its R@5 is `python -m benchmarks locomo`'s.

The answer without a model lists memories from the recall before an answer
(`retrieve_all_context`), not from the search box, at or above a floor of its own
(`agent.replies.ANSWER_FLOOR`): a short answer should not list what search would still show.
That floor is fitted the same way on the same questions: of the questions whose list at the
search floor (at most `ANSWER_MEMORIES`) holds their evidence, the share whose answer still
does, plus the unanswerable questions it answers with nothing. Per file, the command reports
both shares at the answer floor in use and how many memories it lists per question.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agent.replies import ANSWER_FLOOR, ANSWER_MEMORIES, answer_hits
from benchmarks import results
from benchmarks.common import Progress, add_output_args, bench_coordinator, stamp, table
from benchmarks.locomo import ingest, load, questions, turns_held
from memory.coordinator import MemoryCoordinator
from memory.models import (
    BAND_HIGH,
    BAND_MODERATE,
    SHOWN_FLOOR,
    MemoryContext,
    MemoryType,
    RecallHit,
    shown_hits,
)
from memory.queries import RecallOptions, SearchFilter

__all__ = ["add_parser", "band_of", "band_table", "fit_floor", "read_unanswerable", "shares"]

#: hits searched per question (R@5's cut-off)
K = 5
BANDS = ("high", "moderate", "low", "below floor")
#: floors the output also shows both shares at (the trade-off the fit chose from)
CURVE = (0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.2)
USER_PREFIX = "floor-"


def band_of(score: float, floor: float) -> str:
    """The band a hit shows in, or "below floor" when search would not show it (a floor above
    BAND_MODERATE leaves no low hit shown, and only the moderate ones at or above it)."""
    if score < floor:
        return "below floor"
    if score >= BAND_HIGH:
        return "high"
    return "moderate" if score >= BAND_MODERATE else "low"


def band_table(scored: list[tuple[float, bool]], floor: float) -> dict[str, dict[str, Any]]:
    """Per band: hits, evidence hits, and precision (how often a hit of it is evidence)."""
    out: dict[str, dict[str, Any]] = {}
    for band in BANDS:
        mine = [ev for s, ev in scored if band_of(s, floor) == band]
        out[band] = {
            "hits": len(mine),
            "evidence": sum(mine),
            "precision": round(sum(mine) / len(mine), 4) if mine else 0.0,
        }
    return out


def shares(evidence_best: list[float], unanswerable_best: list[float], floor: float) -> dict:
    """At `floor`: the share of answerable questions whose best evidence hit stays shown, and
    the share of unanswerable ones that show nothing (their best hit is below it)."""
    kept = sum(1 for s in evidence_best if s >= floor)
    nothing = sum(1 for s in unanswerable_best if s < floor)
    return {
        "evidence_kept": round(kept / len(evidence_best), 4) if evidence_best else 0.0,
        "unanswerable_nothing": (
            round(nothing / len(unanswerable_best), 4) if unanswerable_best else 0.0
        ),
    }


def fit_floor(evidence_best: list[float], unanswerable_best: list[float]) -> float:
    """The floor that maximises evidence kept + unanswerable showing nothing; of equal ones
    the lowest (it keeps the most). Candidates: 0 and every observed score, as floors just
    above an unanswerable question's best hit or at an answerable one's evidence."""
    candidates = sorted({0.0, *evidence_best, *(_above(s) for s in unanswerable_best)})

    def gain(f: float) -> float:
        s = shares(evidence_best, unanswerable_best, f)
        return s["evidence_kept"] + s["unanswerable_nothing"]

    return max(candidates, key=lambda f: (gain(f), -f))


def _above(score: float) -> float:
    """The smallest floor a hit of `score` falls below (4 decimals, as scores are shown)."""
    return round(score + 0.0001, 4)


def read_unanswerable(path: Path, users: list[str]) -> list[tuple[str, str]]:
    """(user, question) pairs of the set: `every_user` asked of each of `users`, `by_user` of
    its user when that user is in the data."""
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    pairs = [(u, str(q)) for q in spec.get("every_user", []) for u in users]
    pairs += [(u, str(q)) for u, qs in spec.get("by_user", {}).items() if u in users for q in qs]
    return pairs


def _search(coord: MemoryCoordinator, user: str, question: str) -> list[RecallHit]:
    """The app's search box: both types, no minimum score, best first, the top K."""
    every = SearchFilter(min_score=0.0)
    hits = [
        *coord.search(user, question, MemoryType.EPISODIC, k=K, where=every),
        *coord.search(user, question, MemoryType.SEMANTIC, k=K, where=every),
    ]
    return sorted(hits, key=lambda h: h.score, reverse=True)[:K]


def _recalled(coord: MemoryCoordinator, user: str, question: str) -> MemoryContext:
    """The recall a memory-only answer lists from (a new chat: no recent messages)."""
    return coord.retrieve_all_context(
        user,
        "s-floor-bench",
        question,
        RecallOptions(include_short_term=False, include_procedural=False),
    )


def answer_lists(ctx: MemoryContext) -> tuple[list[RecallHit], list[RecallHit]]:
    """(the search floor alone, the memory-only answer's list at the search floor) from one
    recall; the answer's own floor keeps the head of the second (both are best first)."""
    floored, _ = shown_hits([*ctx.episodic, *ctx.semantic])
    return floored[:ANSWER_MEMORIES], answer_hits(ctx, [], floor=SHOWN_FLOOR)


def answer_shares(
    asked: list[tuple[bool, float, int, list[float]]], unanswered: list[list[float]], floor: float
) -> dict:
    """At the answer's `floor`. `asked`: per answerable question (the search floor's list
    holds evidence, the best evidence score of the answer's list or 0, how many the search
    floor lists, the scores the answer's list holds); `unanswered`: those scores per
    unanswerable question."""
    had = [a for a in asked if a[0]]
    listed = [sum(1 for s in a[3] if s >= floor) for a in asked]
    s = shares([a[1] for a in had], [max(u, default=0.0) for u in unanswered], floor)
    return {
        "answer_evidence_kept": s["evidence_kept"],
        "answer_unanswerable_nothing": s["unanswerable_nothing"],
        "floor_listed": round(sum(a[2] for a in asked) / len(asked), 2) if asked else 0.0,
        "answer_listed": round(sum(listed) / len(asked), 2) if asked else 0.0,
    }


def run(
    coord: MemoryCoordinator,
    files: dict[str, list[dict[str, Any]]],
    unanswerable: Path,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Ingest every file, ask both kinds of question, fit; the result dict of `--json`."""
    progress = progress or Progress(quiet=True)
    stamped = stamp()
    per_file: dict[str, dict[str, Any]] = {}
    for name, data in files.items():
        ingest(coord, data, progress, USER_PREFIX)
        scored: list[tuple[float, bool]] = []
        evidence_best: list[float] = []
        n_questions = 0
        asked: list[tuple[bool, float, int, list[float]]] = []
        for sample in data:
            user = USER_PREFIX + sample["sample_id"]
            for q in questions(sample):
                gold = {str(e) for e in q["evidence"]}
                marks = [
                    (h.score, bool(set(turns_held(h)) & gold))
                    for h in _search(coord, user, str(q["question"]))
                ]
                scored.extend(marks)
                found = [s for s, ev in marks if ev]
                if found:
                    evidence_best.append(max(found))
                n_questions += 1
                progress(f"{name}: questions {n_questions}")
        users = [s["sample_id"] for s in data]
        unanswerable_best = []
        unanswered: list[list[float]] = []
        for user, question in read_unanswerable(unanswerable, users):
            hits = _search(coord, USER_PREFIX + user, question)
            unanswerable_best.append(max((h.score for h in hits), default=0.0))
            progress(f"{name}: unanswerable {len(unanswerable_best)}")
        # the answers' recalls after every search: a recall's bookkeeping (what it touched)
        # would otherwise move the search figures above
        for sample in data:
            user = USER_PREFIX + sample["sample_id"]
            for q in questions(sample):
                gold = {str(e) for e in q["evidence"]}
                floored, listed = answer_lists(_recalled(coord, user, str(q["question"])))
                kept = any(set(turns_held(h)) & gold for h in floored)
                best = max((h.score for h in listed if set(turns_held(h)) & gold), default=0.0)
                asked.append((kept, best, len(floored), [h.score for h in listed]))
        for user, question in read_unanswerable(unanswerable, users):
            listed = answer_lists(_recalled(coord, USER_PREFIX + user, question))[1]
            unanswered.append([h.score for h in listed])
        progress(f"{name}: answers without a model")
        per_file[name] = {
            "n_questions": n_questions,
            "n_evidence_found": len(evidence_best),
            "n_unanswerable": len(unanswerable_best),
            "evidence_best": evidence_best,
            "unanswerable_best": unanswerable_best,
            "bands": band_table(scored, SHOWN_FLOOR),
            "asked": asked,
            "unanswered": unanswered,
        }
    progress.done("asked every question")
    fitted = fit_floor(
        [s for f in per_file.values() for s in f["evidence_best"]],
        [s for f in per_file.values() for s in f["unanswerable_best"]],
    )
    answer_fitted = fit_floor(
        [a[1] for f in per_file.values() for a in f["asked"] if a[0]],
        [max(u, default=0.0) for f in per_file.values() for u in f["unanswered"]],
    )
    for f in per_file.values():
        f["answer"] = answer_shares(f.pop("asked"), f.pop("unanswered"), ANSWER_FLOOR)
        f["at_floor"] = shares(f["evidence_best"], f["unanswerable_best"], SHOWN_FLOOR)
        f["at_fitted"] = shares(f["evidence_best"], f["unanswerable_best"], fitted)
        f["curve"] = {str(c): shares(f["evidence_best"], f["unanswerable_best"], c) for c in CURVE}
        del f["evidence_best"], f["unanswerable_best"]
    return {
        "k": K,
        "floor": SHOWN_FLOOR,
        "fitted_floor": fitted,
        "answer_floor": ANSWER_FLOOR,
        "fitted_answer_floor": answer_fitted,
        "unanswerable_set": Path(unanswerable).name,
        "files": per_file,
        **stamped,
    }


def render(result: dict[str, Any]) -> str:
    rows = []
    for name, f in result["files"].items():
        at = {"in use": f["at_floor"], "fitted": f["at_fitted"], **f["curve"]}
        floors = {"in use": result["floor"], "fitted": result["fitted_floor"]}
        for which, s in at.items():
            floor = f"{floors[which]} ({which})" if which in floors else which
            rows.append([name, floor, s["evidence_kept"], s["unanswerable_nothing"]])
    bands = [
        [name, band, b["hits"], b["precision"]]
        for name, f in result["files"].items()
        for band, b in f["bands"].items()
    ]
    answers = [
        [name, f["answer"]["answer_evidence_kept"], f["answer"]["answer_unanswerable_nothing"],
         f"{f['answer']['floor_listed']} → {f['answer']['answer_listed']}"]
        for name, f in result["files"].items()
    ]  # fmt: skip
    counts = "; ".join(
        f"{name}: {f['n_evidence_found']} of {f['n_questions']} questions with evidence in the "
        f"top {result['k']}, {f['n_unanswerable']} unanswerable asked"
        for name, f in result["files"].items()
    )
    return (
        table(["file", "floor", "evidence kept", "unanswerable: nothing shown"], rows)
        + "\n\n"
        + table(["file", "band", "hits", "precision"], bands)
        + "\n\nThe answer without a model (from the recall before an answer):\n"
        + table(
            [
                "file",
                "evidence kept (of the floor's)",
                "unanswerable: nothing",
                "listed per question",
            ],
            answers,
        )
        + f"\n\n{counts}\nfloor in use {result['floor']}, fitted on these files "
        f"{result['fitted_floor']}\nthe answer's floor in use {result['answer_floor']}, "
        f"fitted {result['fitted_answer_floor']}\ncommit {result['commit']}, {result['date']}"
    )


def figures(result: dict[str, Any], name: str) -> dict[str, Any]:
    """One file's record: both shares at the floor in use, the floors, and band precision."""
    f = result["files"][name]
    out: dict[str, Any] = {
        "floor": result["floor"],
        "fitted_floor": result["fitted_floor"],
        "answer_floor": result["answer_floor"],
        "fitted_answer_floor": result["fitted_answer_floor"],
        "evidence_kept": f["at_floor"]["evidence_kept"],
        "unanswerable_nothing": f["at_floor"]["unanswerable_nothing"],
        "questions": f["n_questions"],
        "unanswerable_asked": f["n_unanswerable"],
        **f["answer"],
    }
    for band, b in f["bands"].items():
        if b["hits"]:  # a band the floor leaves empty has no precision
            out[f"{band.replace(' ', '_')}_precision"] = b["precision"]
    return out


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "floor",
        help="the search floor: unanswerable questions that show nothing, evidence kept",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", required=True, nargs="+", type=Path, help="LoCoMo-format files")
    p.add_argument(
        "--unanswerable",
        required=True,
        type=Path,
        help="the questions no user of the files can be answered (tests/data/unanswerable.json)",
    )
    add_output_args(p)
    p.set_defaults(fn=_main)


def _main(args: argparse.Namespace) -> int:
    try:
        files = {Path(d).name: load(d) for d in args.data}
        read_unanswerable(args.unanswerable, [])
    except (OSError, ValueError) as e:
        raise SystemExit(f"Cannot read the data: {e}") from None
    with bench_coordinator(args.redis_url, load_knowledge=True) as coord:
        result = run(coord, files, args.unanswerable, progress=Progress(quiet=args.quiet))
        embedder = coord.embedder.model_id
    print(json.dumps(result) if args.json else render(result))
    if args.record:  # one record per file, as the recall fit's cross-validation writes
        for name, path in zip(files, args.data, strict=True):
            results.record_run(
                "floor",
                figures(result, name),
                prog="python -m benchmarks",
                commit=result["commit"],
                embedder=embedder,
                data=path,
                note="the floor fitted on these development files and the unanswerable set",
            )
    return 0
