"""Benchmark results as data: one JSON record per run, committed under `benchmarks/results/`.

A bench command run with `--record` (the product's, or a measurement of the lab's:
`lab.fit_recall`, `lab.page_times`) writes, besides its usual output, a
small record of what it measured and where:

    {"bench": "latency" | "locomo" | "qa" | "cross-validation" | "pages" | "floor" | "real-model",
     "data": "locomo-dev.json" or null,        # the data file's name, when the bench reads one
     "command": "python -m benchmarks ...",  # as typed, without --record
     "commit": "d1626e9", "date": "2026-11-25 17:43",
     "machine": "2 vCPU (...), 24 GB RAM, ...",
     "cpu": {"model": "...", "flags": ["avx2", ...], "kind": "AVX2, no VNNI", "cores": 2},
     "load_average": {"start": [1.2, 0.9, 0.7], "end": [...]},  # 1, 5, 15 min
     "embedder": "all-MiniLM-L6-v2-int8-onnx-tok8v2",   # the model id that embedded
     "figures": {"warm_p95_ms_1k": 3.78, ...},          # a number, or one number per run
     "note": "..."}                                     # optional

The headline figures are flat, named keys (each `*_figures` function says what they mean);
the full result stays what `--json` prints. The CPU's flags that decide how the embedder runs
(AVX2, AVX-512, VNNI: `memory.embeddings.token_int8`), the cores the process may use and the
load average when the measurement started and when it recorded say which machine and how
busy: timings are compared per kind.
A figure given as a list is one value per run of the same command; `python -m benchmarks
report` (`benchmarks.report`) shows their median.
One file per record, so runs recorded on two branches never conflict.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.config import PROJECT_ROOT

__all__ = [
    "BENCHES",
    "HELD_OUT",
    "RESULTS_DIR",
    "cpu_description",
    "cpu_kind",
    "note_start",
    "results_dir",
    "figure",
    "latency_figures",
    "load_records",
    "locomo_figures",
    "machine_description",
    "make_record",
    "qa_figures",
    "record_run",
    "usable_cores",
    "write_record",
]

RESULTS_DIR = PROJECT_ROOT / "benchmarks" / "results"
#: where `--record` writes and `bench report` reads instead (tests: a temporary folder)
RESULTS_DIR_ENV = "BENCH_RESULTS_DIR"
BENCHES = ("latency", "locomo", "qa", "cross-validation", "pages", "bands", "floor", "real-model")
REQUIRED = ("bench", "data", "command", "commit", "date", "machine", "embedder", "figures")
#: Conversations and users of the dev files that the recall model was not fitted on (the
#: fixed split of the fit); a locomo run reports its recall on them apart.
HELD_OUT = ("conv-30", "conv-42", "pref-d03", "pref-d04")
#: the CPU flags that decide how fast, and on which graph, the embedder runs
EMBEDDER_FLAGS = re.compile(r"avx2|avx512\w*|avx_vnni\w*|amx\w*")
#: the load average when this module was first imported: a bench's process imports it at its
#: start (`benchmarks.common`); `note_start` sets it again before a measurement
_load_at_start: list[float] = [round(x, 2) for x in os.getloadavg()]


def note_start() -> None:
    """Take the load average now as the run's start (before its measurement)."""
    _load_at_start[:] = [round(x, 2) for x in os.getloadavg()]


def load_average() -> dict[str, list[float]]:
    """The 1, 5 and 15 minute load averages at the run's start and now."""
    return {"start": list(_load_at_start), "end": [round(x, 2) for x in os.getloadavg()]}


def results_dir() -> Path:
    """`RESULTS_DIR`, or the folder `BENCH_RESULTS_DIR` names."""
    return Path(os.environ.get(RESULTS_DIR_ENV) or RESULTS_DIR)


def usable_cores() -> int:
    """The CPUs this process may run on (a container's or `taskset`'s share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def machine_description() -> str:
    """CPUs this process may use, the CPU model, RAM, OS and Python: enough to tell two
    machines' figures apart."""
    cpus = usable_cores()
    model = _proc_field("/proc/cpuinfo", "model name") or platform.processor() or "?"
    mem_kb = _proc_field("/proc/meminfo", "MemTotal")
    ram = f"{round(int(mem_kb.split()[0]) / 1024**2)} GB RAM" if mem_kb else "RAM ?"
    os_name = _os_release() or platform.system()
    py = ".".join(platform.python_version_tuple()[:2])
    return f"{cpus} vCPU ({model}), {ram}, {os_name}, Python {py}"


def cpu_description(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """The CPU's model, its flags that matter to the embedder, their kind (`cpu_kind`) and the
    cores this process may use."""
    model = _proc_field(str(cpuinfo), "model name") or platform.processor() or "?"
    flags = sorted(set(EMBEDDER_FLAGS.findall(_proc_field(str(cpuinfo), "flags"))))
    return {"model": model, "flags": flags, "kind": cpu_kind(flags), "cores": usable_cores()}


def cpu_kind(flags: list[str]) -> str:
    """What the embedder gets from the CPU: VNNI (its int8 graph, exact) or not; AVX-512 or
    AVX2 for the rest."""
    have = set(flags)
    wide = "AVX-512" if "avx512f" in have else "AVX2" if "avx2" in have else "no AVX2"
    if "avx512_vnni" in have:
        return "AVX-512 VNNI"
    if "avx_vnni" in have:
        return f"{wide}, AVX-VNNI"
    return f"{wide}, no VNNI"


def _proc_field(path: str, name: str) -> str:
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() == name:
                return value.strip()
    except OSError:
        pass
    return ""


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def command_line(argv: list[str], prog: str) -> str:
    """The command as typed (`prog` + its arguments), without `--record` itself."""
    return " ".join([prog, *(shlex.quote(a) for a in argv if a != "--record")])


def make_record(
    bench: str,
    figures: dict[str, Any],
    *,
    command: str,
    commit: str,
    embedder: str,
    data: str | Path | None = None,
    note: str | None = None,
    date: str | None = None,
    machine: str | None = None,
    cpu: dict[str, Any] | None = None,
    load: dict[str, list[float]] | None = None,
) -> dict[str, Any]:
    """A record of this run (the machine, its CPU and the load measured here unless given)."""
    if bench not in BENCHES:
        raise ValueError(f"bench must be one of {BENCHES}, got {bench!r}")
    record: dict[str, Any] = {
        "bench": bench,
        "data": Path(data).name if data is not None else None,
        "command": command,
        "commit": commit,
        "date": date or datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "machine": machine or machine_description(),
        "cpu": cpu or cpu_description(),
        "load_average": load or load_average(),
        "embedder": embedder,
        "figures": figures,
    }
    if note:
        record["note"] = note
    return record


def write_record(record: dict[str, Any], directory: Path = RESULTS_DIR) -> Path:
    """Write `record` as a new file of `directory` (never over another record)."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = "-".join(
        part
        for part in (
            record["date"][:10],
            record["bench"],
            Path(record["data"]).stem if record["data"] else "",
            record["commit"],
        )
        if part
    )
    for n in range(1, 1000):
        path = directory / (f"{stem}.json" if n == 1 else f"{stem}-{n}.json")
        try:
            with path.open("x", encoding="utf-8") as f:
                f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{directory}: too many records named {stem}")


def load_records(directory: Path = RESULTS_DIR) -> list[dict[str, Any]]:
    """Every record of `directory`, oldest first; a malformed one stops with its file name."""
    records = []
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: not a readable JSON record ({e})") from e
        missing = [k for k in REQUIRED if k not in record] if isinstance(record, dict) else REQUIRED
        if missing:
            raise ValueError(f"{path}: a result record needs {', '.join(missing)}")
        if record["bench"] not in BENCHES:
            raise ValueError(f"{path}: unknown bench {record['bench']!r}")
        record["file"] = path.name
        records.append(record)
    return sorted(records, key=lambda r: (r["date"], r["file"]))


def figure(records: list[dict[str, Any]], name: str) -> float | None:
    """The median over `records` (and over each record's runs) of figure `name`; None when no
    record has it."""
    values: list[float] = []
    for r in records:
        v = r["figures"].get(name)
        if isinstance(v, list):
            values.extend(float(x) for x in v)
        elif v is not None:
            values.append(float(v))
    return statistics.median(values) if values else None


# --- the headline figures of each bench's `--json` result ---------------------------------


def size_label(size: int) -> str:
    """1000 -> "1k", 100000 -> "100k" (figure names carry the store size)."""
    return f"{size // 1000}k" if size >= 1000 and size % 1000 == 0 else str(size)


def latency_figures(result: dict[str, Any], sizes: list[int]) -> dict[str, Any]:
    """Warm and cold p95 of `retrieve_all_context`, store p95 and bytes per memory at each
    requested size (`sizes`: the store sizes asked for, which name the figures), and the
    ingest rate."""
    out: dict[str, Any] = {"ingest_per_s": result["ingest"]["per_second"]}
    for asked, s in zip(sizes, result["sizes"], strict=True):
        label = size_label(asked)
        out[f"warm_p95_ms_{label}"] = s["retrieve_warm_ms"]["p95"]
        out[f"cold_p95_ms_{label}"] = s["retrieve_cold_ms"]["p95"]
        out[f"store_p95_ms_{label}"] = s["store_interaction_ms"]["p95"]
        out[f"bytes_per_memory_{label}"] = round(s["bytes_per_memory"])
    return out


def locomo_figures(result: dict[str, Any]) -> dict[str, Any]:
    """Recall@k and MRR over all questions; recall on the held-out conversations and on the
    rest (question-weighted); with `--prompt-budget`, the evidence in the memory block."""
    out: dict[str, Any] = {"questions": result["n_questions"], "MRR": result["mrr"]}
    out.update({f"R@{k}": v for k, v in result["recall_at"].items()})
    by_conv = result.get("by_conversation", {})
    for split, chosen in (
        ("held_out", [c for c in by_conv if c in HELD_OUT]),
        ("tune", [c for c in by_conv if c not in HELD_OUT]),
    ):
        n = sum(by_conv[c]["n_questions"] for c in chosen)
        if not n or len(chosen) == len(by_conv):
            continue  # no split in this data: the figure would be the whole file's
        for k in result["recall_at"]:
            total = sum(by_conv[c]["recall_at"][k] * by_conv[c]["n_questions"] for c in chosen)
            out[f"{split}_R@{k}"] = round(total / n, 4)
    if "prompt" in result:
        p = result["prompt"]
        out.update(
            {
                "block_budget": p["budget_tokens"],
                "block_evidence": p["evidence_share"],
                "block_any": p["any_evidence"],
                "block_all": p["all_evidence"],
                "block_tokens": p["tokens_mean"],
                "block_lines": p["lines_mean"],
            }
        )
    return out


def qa_figures(result: dict[str, Any]) -> dict[str, Any]:
    """Answer accuracy (contains, F1) and the mean prompt and memory tokens per question."""
    return {
        "questions": result["n_questions"],
        "contains": result["contains"],
        "F1": result["f1"],
        "prompt_tokens": result["prompt_tokens"],
        "memory_tokens": result["memory_tokens"],
        "failed": result["failed"],
    }


def record_run(
    bench: str,
    figures: dict[str, Any],
    *,
    prog: str,
    commit: str,
    embedder: str,
    data: str | Path | None = None,
    note: str | None = None,
    directory: Path | None = None,
) -> Path:
    """`--record`: write this run's record and say where on stderr (stdout stays the bench's
    output, byte for byte)."""
    record = make_record(
        bench,
        figures,
        command=command_line(sys.argv[1:], prog),
        commit=commit,
        embedder=embedder,
        data=data,
        note=note,
    )
    path = write_record(record, directory or results_dir())
    print(f"recorded {path}", file=sys.stderr)
    return path
