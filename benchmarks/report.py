"""`python -m benchmarks report`: BENCHMARKS.md, rendered from the committed result records.

The page is generated, never edited: a bench run with `--record` adds a record to
`benchmarks/results/` (`benchmarks.results`), and this command prints the page from the
records (the current ones: for each bench and data file, the newest run's commit, machine and
embedder, its runs pooled by their median), the speed figures per kind of CPU (the newest
timed runs on each: the embedder's speed and graph depend on the CPU's flags), the goals
(each checked here against the figures, so "met" cannot drift from the numbers) and the
decisions (`benchmarks/decisions.json`: what was measured, what it did, whether it shipped).
`tests/unit/test_bench_report.py` checks that the committed BENCHMARKS.md is this command's
output byte for byte.
"""

from __future__ import annotations

import argparse
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.results import HELD_OUT, RESULTS_DIR, figure, load_records, results_dir

__all__ = [
    "DECISIONS_FILE",
    "add_parser",
    "current_runs",
    "render_headline",
    "render_report",
    "runs_per_cpu",
]

DECISIONS_FILE = RESULTS_DIR.parent / "decisions.json"

#: (bench, data file) of each group of figures the page shows
PERSONAL = ("locomo", "personal-dev.json")
LOCOMO = ("locomo", "locomo-dev.json")
CV_PERSONAL = ("cross-validation", "personal-dev.json")
CV_LOCOMO = ("cross-validation", "locomo-dev.json")
LATENCY = ("latency", None)
PAGES = ("pages", None)
FLOOR_PERSONAL = ("floor", "personal-dev.json")
FLOOR_LOCOMO = ("floor", "locomo-dev.json")

Run = tuple[str, str | None]
#: the kind of CPU of a record written before records described their CPU
NOT_RECORDED = "CPU not recorded"


def current_runs(records: list[dict[str, Any]]) -> dict[Run, list[dict[str, Any]]]:
    """For each (bench, data): the newest record and every record of the same commit, machine
    and embedder (repeated runs of one command, pooled)."""
    out: dict[Run, list[dict[str, Any]]] = {}
    for key in dict.fromkeys((r["bench"], r["data"]) for r in records):
        mine = [r for r in records if (r["bench"], r["data"]) == key]
        newest = mine[-1]  # records come sorted by date
        same = ("commit", "machine", "embedder", "command")
        out[key] = [r for r in mine if all(r[f] == newest[f] for f in same)]
    return out


def cpu_kind_of(record: dict[str, Any]) -> str:
    """The record's kind of CPU (`benchmarks.results.cpu_kind`); older records lack it."""
    return str(record.get("cpu", {}).get("kind") or NOT_RECORDED)


def runs_per_cpu(records: list[dict[str, Any]], run: Run) -> dict[str, list[dict[str, Any]]]:
    """For each kind of CPU that ran `run`: its current runs there (as `current_runs`)."""
    mine = [r for r in records if (r["bench"], r["data"]) == run]
    return {
        kind: current_runs([r for r in mine if cpu_kind_of(r) == kind])[run]
        for kind in dict.fromkeys(cpu_kind_of(r) for r in mine)
    }


@dataclass(frozen=True)
class Goal:
    label: str
    run: Run
    name: str
    op: Callable[[float, float], bool]
    limit: float
    show: Callable[[float], str]
    #: a second condition on the gap between the fitted-on and the held-out side
    gap: tuple[str, str] | None = None


def _r(v: float) -> str:
    return f"{v:.2f}"


def _ms(v: float) -> str:
    return f"{v:.1f} ms"


def _s(v: float) -> str:
    return f"{v:.1f} s"


GOALS = (
    Goal("personal R@5, held-out users ≥ 0.88, tune − held out ≤ 0.03", PERSONAL,
         "held_out_R@5", operator.ge, 0.88, _r, ("tune_R@5", "held_out_R@5")),
    Goal("personal R@5, cross-validated ≥ 0.88, fitted on − held out ≤ 0.03", CV_PERSONAL,
         "held_out_R@5", operator.ge, 0.88, _r, ("fitted_on_R@5", "held_out_R@5")),
    Goal("LoCoMo R@10, held-out conversations ≥ 0.78, tune − held out ≤ 0.03", LOCOMO,
         "held_out_R@10", operator.ge, 0.78, _r, ("tune_R@10", "held_out_R@10")),
    Goal("LoCoMo R@10, cross-validated ≥ 0.78, fitted on − held out ≤ 0.03", CV_LOCOMO,
         "held_out_R@10", operator.ge, 0.78, _r, ("fitted_on_R@10", "held_out_R@10")),
    Goal("personal evidence in the prompt block ≥ 0.90 (≤ 800 tokens)", PERSONAL,
         "block_evidence", operator.ge, 0.90, _r),
    Goal("LoCoMo evidence in the prompt block ≥ 0.80 (≤ 800 tokens)", LOCOMO,
         "block_evidence", operator.ge, 0.80, _r),
    Goal("warm recall p95 ≤ 5 ms at 1k memories", LATENCY, "warm_p95_ms_1k", operator.le, 5, _ms),
    Goal("warm recall p95 ≤ 10 ms at 100k memories", LATENCY, "warm_p95_ms_100k", operator.le,
         10, _ms),
    Goal("cold recall p95 ≤ 20 ms at 100k memories", LATENCY, "cold_p95_ms_100k", operator.le,
         20, _ms),
    Goal("ingest ≥ 800 memories/s", LATENCY, "ingest_per_s", operator.ge, 800,
         lambda v: f"{v:.0f}/s"),
    Goal("Redis memory ≤ 3.5 KB per memory (100k)", LATENCY, "bytes_per_memory_100k",
         operator.le, 3500, lambda v: f"{v / 1000:.1f} KB"),
    Goal("chat page usable ≤ 2.5 s after a cold first open", PAGES, "cold_open_s", operator.le,
         2.5, _s),
    Goal("the same plus its first answer, sent at once, ≤ 3.0 s", PAGES, "cold_answer_s",
         operator.le, 3.0, _s),
    Goal("Stats page usable ≤ 1.5 s", PAGES, "stats_s", operator.le, 1.5, _s),
    Goal("a memory-only turn, Enter to answer ≤ 0.5 s", PAGES, "answer_s", operator.le, 0.5,
         _s),
)  # fmt: skip

#: rows of the results table: (label, run, figure, format); a block row adds its tokens
RESULT_ROWS = (
    ("Personal preferences R@5, all questions", PERSONAL, "R@5", _r),
    ("Personal preferences R@5, held-out users", PERSONAL, "held_out_R@5", _r),
    ("Personal preferences R@5, cross-validated", CV_PERSONAL, "held_out_R@5", _r),
    ("LoCoMo R@10, all questions", LOCOMO, "R@10", _r),
    ("LoCoMo R@10, held-out conversations", LOCOMO, "held_out_R@10", _r),
    ("LoCoMo R@10, cross-validated", CV_LOCOMO, "held_out_R@10", _r),
    ("Personal evidence in the prompt block", PERSONAL, "block_evidence", _r),
    ("LoCoMo evidence in the prompt block", LOCOMO, "block_evidence", _r),
    ("Recall p95, warm, 1k memories", LATENCY, "warm_p95_ms_1k", _ms),
    ("Recall p95, warm, 100k memories", LATENCY, "warm_p95_ms_100k", _ms),
    ("Recall p95, cold (query embedded), 100k memories", LATENCY, "cold_p95_ms_100k", _ms),
    ("Ingest with real embeddings", LATENCY, "ingest_per_s", lambda v: f"{v:.0f} memories/s"),
    ("Redis memory per memory, 100k", LATENCY, "bytes_per_memory_100k", lambda v: f"{v:,.0f} B"),
    ("Chat page usable, cold first open (browser)", PAGES, "cold_open_s", _s),
    ("Stats page usable (browser)", PAGES, "stats_s", _s),
    ("A memory-only turn, Enter to answer (browser)", PAGES, "answer_s", _s),
    ("Search floor, fitted on both dev files and the unanswerable set", FLOOR_PERSONAL,
     "fitted_floor", lambda v: f"{v:.3f}"),
    ("Search floor in use (the fit, rounded)", FLOOR_PERSONAL, "floor", lambda v: f"{v:.2f}"),
    ("Personal: unanswerable questions whose search shows nothing", FLOOR_PERSONAL,
     "unanswerable_nothing", _r),
    ("LoCoMo: unanswerable questions whose search shows nothing", FLOOR_LOCOMO,
     "unanswerable_nothing", _r),
    ("Personal: evidence found in the top 5 that stays shown", FLOOR_PERSONAL, "evidence_kept",
     _r),
    ("LoCoMo: evidence found in the top 5 that stays shown", FLOOR_LOCOMO, "evidence_kept", _r),
    ("Personal: a high hit is evidence (precision, search top 5)", FLOOR_PERSONAL,
     "high_precision", _r),
    ("Personal: a moderate hit shown is evidence", FLOOR_PERSONAL, "moderate_precision", _r),
    ("Personal: a hit below the floor (not shown) is evidence", FLOOR_PERSONAL,
     "below_floor_precision", _r),
    ("Answer without a model: a floor above search's, fitted on the same questions",
     FLOOR_PERSONAL, "fitted_answer_floor", lambda v: f"{v:.3f}"),
    ("Answer without a model: its floor in use (search's, unless the fit is higher)",
     FLOOR_PERSONAL, "answer_floor", lambda v: f"{v:.2f}"),
    ("Personal: unanswerable questions the answer without a model lists nothing for",
     FLOOR_PERSONAL, "answer_unanswerable_nothing", _r),
    ("LoCoMo: unanswerable questions the answer without a model lists nothing for",
     FLOOR_LOCOMO, "answer_unanswerable_nothing", _r),
    ("Personal: evidence listed at the search floor that the answer still lists",
     FLOOR_PERSONAL, "answer_evidence_kept", _r),
    ("LoCoMo: evidence listed at the search floor that the answer still lists", FLOOR_LOCOMO,
     "answer_evidence_kept", _r),
)  # fmt: skip

#: the runs whose figures are timings: shown per kind of CPU
SPEED_RUNS = (LATENCY, PAGES)

#: the README's few rows: (label, [(run, figure), ...] joined by " / ", format)
HEADLINE_ROWS = (
    (
        "Personal preferences: the right memory in the top 5 (held-out users / cross-validated)",
        [(PERSONAL, "held_out_R@5"), (CV_PERSONAL, "held_out_R@5")],
        _r,
    ),
    (
        "LoCoMo: evidence turns in the top 10 (held-out conversations / cross-validated)",
        [(LOCOMO, "held_out_R@10"), (CV_LOCOMO, "held_out_R@10")],
        _r,
    ),
    (
        "Evidence that reaches the prompt's memory block, ≤ 800 tokens (personal / LoCoMo)",
        [(PERSONAL, "block_evidence"), (LOCOMO, "block_evidence")],
        _r,
    ),
    (
        "Recall before an answer, p95, query embedding cached (1k / 100k memories)",
        [(LATENCY, "warm_p95_ms_1k"), (LATENCY, "warm_p95_ms_100k")],
        _ms,
    ),
    ("Ingest with real embeddings", [(LATENCY, "ingest_per_s")], lambda v: f"{v:.0f} memories/s"),
)

REPRODUCE = """\
```bash
DEV=../shared/bench   # the dev files: outside the repository (their licences: DEV/*/README.md)
python -m benchmarks locomo --data $DEV/personal/personal-dev.json --prompt-budget 800 --record
python -m benchmarks locomo --data $DEV/locomo/locomo-dev.json --prompt-budget 800 --record
python -m benchmarks latency --record         # sizes 1k, 10k, 100k; 200 timed runs each
python -m lab.page_times browser --record       # a real browser: cold first open, Stats, a turn
python -m benchmarks floor --data $DEV/personal/personal-dev.json $DEV/locomo/locomo-dev.json \\
    --unanswerable tests/data/unanswerable.json --record   # the search floor, fitted
python -m lab.fit_recall --data $DEV/personal/personal-dev.json $DEV/locomo/locomo-dev.json --record
python -m benchmarks qa --data FILE --mode memory|none|oracle --record   # needs Ollama
make real-model   # llama.cpp's server (built once, 20+ min) with two small models: check, chat
python -m benchmarks report > BENCHMARKS.md
```"""


def _fmt_goal(goal: Goal, runs: dict[Run, list[dict[str, Any]]]) -> tuple[str, str]:
    value = figure(runs.get(goal.run, []), goal.name)
    if value is None:
        return "not measured", "-"
    met = goal.op(value, goal.limit)
    text = goal.show(value)
    if goal.gap:
        fitted = figure(runs[goal.run], goal.gap[0])
        if fitted is not None:
            gap = fitted - value
            met = met and gap <= 0.03
            text += f", gap {0.0 if abs(gap) < 0.005 else gap:.2f}"
    return text, "yes" if met else "**no**"


def _block_extra(runs: list[dict[str, Any]]) -> str:
    tokens = figure(runs, "block_tokens")
    return f" at {tokens:.0f} tokens" if tokens is not None else ""


def render_report(records: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> str:
    runs = current_runs(records)
    # one source per command run (the cross-validation reads both files in one run), numbered
    # in the order the results table first cites them
    order = list(dict.fromkeys(row[1] for row in RESULT_ROWS if row[1] in runs))
    sources = list(dict.fromkeys(_source(runs[key]) for key in order))
    out = [
        "# Benchmarks",
        "",
        "Generated by `python -m benchmarks report` from the records in `benchmarks/results/`;",
        "do not edit it by hand (a test compares it with the command's output). A bench run with",
        "`--record` adds a record; the history of earlier runs is in git.",
        "",
        "## Machine",
        "",
        "Each kind of CPU the current figures were measured on (the embedder's graph and speed",
        "depend on its flags), with the machines of that kind:",
        "",
    ]
    current = [r for key in order for r in runs[key]]
    for kind in dict.fromkeys(cpu_kind_of(r) for r in current):
        machines = dict.fromkeys(
            f"{_cpu_text(r)}, on {r['machine']}" if r.get("cpu") else r["machine"]
            for r in current
            if cpu_kind_of(r) == kind
        )
        out.append(f"- {kind}: {'; '.join(machines)}")
    out += [
        "",
        "Figures are medians of the recorded runs of one command. Latency depends on the load",
        "of the machine (shared with other test runs), recall figures do not.",
        "",
        "## How to reproduce",
        "",
        REPRODUCE,
        "",
        "Held out = the users and conversations the recall model was not fitted on",
        f"({', '.join(HELD_OUT)}); cross-validated = each conversation and user held out in",
        "turn, the model refitted on the rest. The bench starts a private Redis and removes it.",
        "The search floor is fitted on the same development files and on the unanswerable",
        "questions kept with the tests (`tests/data/unanswerable.json`): its figures are",
        "fitted-on figures, with no held-out split.",
        "",
        "## Current results",
        "",
        "| figure | result | source |",
        "|---|---|---|",
    ]
    for label, key, name, show in RESULT_ROWS:
        group = runs.get(key, [])
        value = figure(group, name)
        if value is None:
            out.append(f"| {label} | not measured | - |")
            continue
        extra = _block_extra(group) if name == "block_evidence" else ""
        out.append(f"| {label} | {show(value)}{extra} | [{sources.index(_source(group)) + 1}] |")
    out += ["", "Sources, by the commit they were measured at:", ""]
    for commit in dict.fromkeys(src[0] for src in sources):
        out.append(f"- at {commit}:")
        for n, src in enumerate(sources, 1):
            if src[0] != commit:
                continue
            group = next(runs[key] for key in order if _source(runs[key]) == src)
            n_runs = sum(_runs_of(r) for r in group)
            runs_text = "1 run" if n_runs == 1 else f"{n_runs} runs, median"
            out.append(f"  - [{n}] `{src[1]}`: {src[2]}, {runs_text}, embedder `{src[3]}`")
    if any(key[0] == "real-model" for key in runs):
        out += _real_models(runs)
    out += _speed_per_cpu(records)
    out += ["", "## Goals", "", "| goal | result | met? |", "|---|---|---|"]
    for goal in GOALS:
        text, met = _fmt_goal(goal, runs)
        out.append(f"| {goal.label} | {text} | {met} |")
    out += ["", "## Decisions", "", "| idea | effect | adopted |", "|---|---|---|"]
    for d in decisions:
        out.append(f"| {d['idea']} | {d['effect']} | {'yes' if d['adopted'] else 'no'} |")
    return "\n".join(out) + "\n"


def _real_models(runs: dict[Run, list[dict[str, Any]]]) -> list[str]:
    """One row per model of `make real-model` (its record has every check and turn)."""
    out = []
    for key in [key for key in runs if key[0] == "real-model"]:
        group = runs[key]
        n = {k: f"{v:g}" for k in group[-1]["figures"] if (v := figure(group, k)) is not None}
        out.append(
            f"| {group[-1].get('model', key[1])} | {n.get('checks_passed')} of "
            f"{n.get('checks_total')} | {n.get('chat_expectations_met')} of "
            f"{n.get('chat_expectations_total')} | {n.get('generated_per_s', '-')} | "
            f"{n.get('reply_s', '-')} s"
            + (f", at most {n['reply_s_max']} s" if "reply_s_max" in n else "")
            + f" | {_load(group[-1])} | `{group[-1]['file']}` |"
        )
    return [
        "",
        "## Real models on this machine",
        "",
        "Each small model behind llama.cpp's server: `python -m agent check` and a scripted",
        "chat of five turns (`make real-model`); its record holds every check and turn. Speeds",
        "follow the load of the shared machine (its 1-minute load average, start–end).",
        "",
        "| model | checks passed | chat expectations met | generated tokens/s | reply (median) "
        "| load (2 cores) | source |",
        "|---|---|---|---|---|---|---|",
        *out,
    ]


def _speed_per_cpu(records: list[dict[str, Any]]) -> list[str]:
    """The timed figures side by side for each kind of CPU, with each run's CPU and load."""
    per_run = {run: runs_per_cpu(records, run) for run in SPEED_RUNS}
    kinds = list(dict.fromkeys(kind for groups in per_run.values() for kind in groups))
    if not kinds:
        return []
    out = [
        "",
        "## Speed per kind of CPU",
        "",
        "The newest timed runs on each kind of CPU (the embedder runs its int8 graph only with",
        "VNNI). The load average (1 minute) at the run's start and end says how busy the machine",
        "was: a busy machine is slower.",
        "",
        "| figure | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for label, run, name, show in RESULT_ROWS:
        if run not in SPEED_RUNS:
            continue
        cells = []
        for kind in kinds:
            value = figure(per_run[run].get(kind, []), name)
            cells.append("-" if value is None else show(value))
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")
    for kind in kinds:
        for run in SPEED_RUNS:
            group = per_run[run].get(kind)
            if group:
                out.append(f"- {kind}, `{group[-1]['command']}`: {_cpu_and_load(group[-1])}")
    return out


def _cpu_text(record: dict[str, Any]) -> str:
    """The CPU's model, its flags and cores (older records: the machine as described)."""
    cpu = record.get("cpu")
    if not cpu:
        return str(record["machine"])
    cores = f", {cpu['cores']} cores" if cpu.get("cores") else ""
    return f"{cpu['model']} ({', '.join(cpu['flags']) or 'no AVX2'}){cores}"


def _cpu_and_load(record: dict[str, Any]) -> str:
    text = _cpu_text(record)
    loaded = record.get("load_average")
    text += f", load {_load(record)} (start–end)" if loaded else ", load not recorded"
    return f"{text}; {record['date']}"


def _load(record: dict[str, Any]) -> str:
    """The 1-minute load average at the run's start and end: the machine is shared, and a
    model's speed follows it."""
    load = record.get("load_average") or {}
    ends = [f"{load[k][0]:g}" for k in ("start", "end") if load.get(k)]
    return "–".join(ends) or "-"


def _source(group: list[dict[str, Any]]) -> tuple[str, str, str, str]:
    first = group[0]
    return first["commit"], first["command"], first["date"], first["embedder"]


def render_headline(records: list[dict[str, Any]]) -> str:
    """The README's results table: a few rows of the same current figures as the report."""
    runs = current_runs(records)
    out = ["| measured on the dev sets ([BENCHMARKS.md](BENCHMARKS.md)) | result |", "|---|---|"]
    for label, cells, show in HEADLINE_ROWS:
        values = [figure(runs.get(run, []), name) for run, name in cells]
        text = " / ".join("-" if v is None else show(v) for v in values)
        if show is _ms:  # one unit for the row: "3.8 / 9.3 ms"
            text = text.replace(" ms / ", " / ")
        out.append(f"| {label} | {text} |")
    return "\n".join(out) + "\n"


def _runs_of(record: dict[str, Any]) -> int:
    lengths = [len(v) for v in record["figures"].values() if isinstance(v, list)]
    return max(lengths, default=1)


def load_decisions(path: Path = DECISIONS_FILE) -> list[dict[str, Any]]:
    items = json.loads(path.read_text(encoding="utf-8"))
    for item in items:
        if not {"idea", "effect", "adopted"} <= set(item):
            raise ValueError(f"{path}: every decision needs idea, effect and adopted: {item}")
    return list(items)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="print BENCHMARKS.md from the recorded results")
    p.add_argument("--headline", action="store_true", help="only the README's results table")
    p.set_defaults(fn=main)


def main(args: argparse.Namespace, settings: Any = None) -> int:
    directory = results_dir()
    if args.headline:
        print(render_headline(load_records(directory)), end="")
        return 0
    decisions = load_decisions(directory.parent / "decisions.json")
    print(render_report(load_records(directory), decisions), end="")
    return 0
