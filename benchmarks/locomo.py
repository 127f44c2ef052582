"""`python -m benchmarks locomo`: turn-level evidence recall on LoCoMo through the app's path.

Each conversation becomes one user. Every dialogue turn is written with the normal bulk write
path (`MemoryCoordinator.add_episodic_many`) as an episodic `interaction`:

    description  "Caroline (8 May 2023): I went to a LGBTQ support group yesterday ..."
                 (+ " [image: <caption>]" when the turn shares a picture)
    context      "replying to Melanie: <the previous turn, first 200 characters>"
    session_id   "session_<n>"
    timestamp    the session's date and time, + 1 minute per turn (the data gives only the
                 session start; turns keep their order)
    metadata     {"dia_id": "D1:3", "speaker": "Caroline"}

A conversation with an assistant (a speaker named "Assistant", as in the personal-memory file)
is stored as the app stores a chat: each user message is one `interaction` whose context is
the assistant's reply ("Assistant answered: ...", `memory.stores.episodic.interaction_context`,
what `store_interaction` writes); the reply is not a memory of its own. Before this, every
assistant acknowledgement was a memory of its own that repeated the preference before it and
competed with it. Embedding: the bulk path embeds description + context.

Each question with evidence (LoCoMo's categories 1-4; a question of another data set without
one is asked as "uncategorised"; category 5, adversarial, is skipped) then goes through
`MemoryCoordinator.search` (the episodic hybrid recall the agent's context uses) with k = the
largest requested k, and

    recall@k = |evidence turns among the top k| / |evidence turns|, averaged over questions
    MRR      = 1 / rank of the first evidence turn (0 if none in the top max-k)

A hit holds its own turn and, in a chat, the assistant's reply stored as its context: an
evidence turn the assistant said ("what did you recommend?") counts as found with the message
it answered. (LoCoMo's and the personal file's evidence are the speakers' and the user's turns.)

Evidence ids are used as the file has them (a few malformed ones can never match).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks import common, results
from benchmarks.common import (
    Progress,
    add_common_args,
    int_list,
    percentiles,
    run_bench,
    stamp,
    table,
)
from benchmarks.prompt_level import PromptRow, prompt_row
from benchmarks.prompt_level import summary as prompt_summary
from memory.coordinator import MemoryCoordinator
from memory.models import RecallHit
from memory.queries import SearchFilter
from memory.stores.episodic import interaction_context

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: LoCoMo's category 5 (adversarial: no evidence) is skipped; a question of another data set with
#: evidence but no LoCoMo category is asked too, under this one
UNCATEGORISED = 0
CATEGORY_NAMES = {UNCATEGORISED: "uncategorised", **CATEGORIES}
ADVERSARIAL = 5
#: session dates as other data sets write them, after LoCoMo's "1:56 pm on 8 May, 2023":
#: ISO 8601 and LongMemEval's "2023/05/20 (Sat) 02:21"
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%Y/%m/%d (%a) %H:%M", "%Y/%m/%d")
TURN_SPACING = timedelta(minutes=1)
REPLY_CHARS = 200
#: The speaker name of an assistant in a chat (the personal file): see `turn_items`.
ASSISTANT = "assistant"


def parse_session_date(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' (LoCoMo), '2023-05-08 13:56' (ISO 8601) or '2023/05/20 (Sat)
    02:21' (LongMemEval) -> datetime (UTC, when the value names no zone)."""
    text = str(value).strip()
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        d = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a session date in a known format (LoCoMo's '1:56 pm on 8 May, "
            "2023', ISO 8601 '2023-05-08 13:56', or '2023/05/20 (Sat) 02:21')"
        ) from None
    # one clock for the stored time and the date written into the text
    return d.astimezone(UTC) if d.tzinfo else d.replace(tzinfo=UTC)


def _category_number(q: dict[str, Any]) -> int | None:
    """A question's category as a number, however a file writes it (4, "4", 4.0)."""
    c = q.get("category")
    if isinstance(c, bool):
        return None
    if isinstance(c, int):
        return c
    if isinstance(c, float) and c.is_integer():
        return int(c)
    if isinstance(c, str) and c.strip().isdigit():
        return int(c.strip())
    return None


def category_of(q: dict[str, Any]) -> int:
    """A question's LoCoMo category, or UNCATEGORISED."""
    c = _category_number(q)
    return c if c in CATEGORIES else UNCATEGORISED


def human_date(d: datetime) -> str:
    return f"{d.day} {d:%B %Y}"


def turn_items(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The write-path items (kwargs of `add_episodic_many`) of one LoCoMo conversation."""
    items: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conversation:
        try:
            start = parse_session_date(conversation[f"session_{n}_date_time"])
        except (KeyError, ValueError) as e:
            raise ValueError(f"session_{n}_date_time: {e}") from None
        prev: dict[str, Any] | None = None
        for i, turn in enumerate(conversation[f"session_{n}"]):
            if turn["speaker"].lower() == ASSISTANT and items and prev is not None:
                # A chat with an assistant is stored as the app stores it (store_interaction):
                # the reply is the context of the user's message, not a memory of its own.
                items[-1]["context"] = interaction_context(turn["text"])
                items[-1]["metadata"]["reply_dia_id"] = turn["dia_id"]
                prev = turn
                continue
            text = f"{turn['speaker']} ({human_date(start)}): {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            context = ""
            if prev is not None:
                context = f"replying to {prev['speaker']}: {prev['text'][:REPLY_CHARS]}"
            items.append(
                {
                    "text": text,
                    "event_type": "interaction",
                    "context": context,
                    "session_id": f"session_{n}",
                    "timestamp_ms": int((start + i * TURN_SPACING).timestamp() * 1000),
                    "metadata": {"dia_id": turn["dia_id"], "speaker": turn["speaker"]},
                }
            )
            prev = turn
        n += 1
    return items


def questions(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The questions asked: every one with evidence, except LoCoMo's adversarial ones."""
    return [
        q for q in sample.get("qa", []) if _category_number(q) != ADVERSARIAL and q.get("evidence")
    ]


def load(path: Path, conversations: list[str] | None = None) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of conversations (LoCoMo format).")
    if conversations:
        known = {s["sample_id"] for s in data}
        missing = [c for c in conversations if c not in known]
        if missing:
            raise ValueError(f"Unknown conversation(s) {missing}; the file has {sorted(known)}.")
        data = [s for s in data if s["sample_id"] in conversations]
    for sample in data:  # a bad date or a missing session says so before anything is written
        try:
            turn_items(sample["conversation"])
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{sample.get('sample_id', '?')}: {e}") from None
    return data


def turns_held(hit: RecallHit) -> tuple[str, ...]:
    """The dialogue turns a hit holds: its own, and in a chat the assistant's reply stored as
    its context (an evidence turn the assistant said is found with the message it answered)."""
    meta = hit.record.get("metadata") or {}
    return tuple(str(meta[f]) for f in ("dia_id", "reply_dia_id") if meta.get(f))


def _metrics(
    ranked: list[tuple[str, ...]], gold: list[str], ks: list[int]
) -> tuple[dict[int, float], float]:
    """recall@k and the reciprocal rank; `ranked`: the turns each hit holds, best hit first."""
    rec = {k: sum(1 for g in gold if any(g in held for held in ranked[:k])) / len(gold) for k in ks}
    rr = next((1.0 / (i + 1) for i, held in enumerate(ranked) if set(held) & set(gold)), 0.0)
    return rec, rr


def _summary(rows: list[tuple[dict[int, float], float]], ks: list[int]) -> dict[str, Any]:
    n = len(rows)
    return {
        "n_questions": n,
        "recall_at": {str(k): round(sum(r[0][k] for r in rows) / n, 4) if n else 0.0 for k in ks},
        "mrr": round(sum(r[1] for r in rows) / n, 4) if n else 0.0,
    }


def ingest(
    coord: MemoryCoordinator, data: list[dict[str, Any]], progress: Progress, user_prefix: str
) -> tuple[int, float]:
    """Write every conversation as one user through the bulk path: (turns written, seconds,
    not counting the background work it leaves, which is waited for)."""
    n_turns = 0
    t0 = time.perf_counter()
    for i, sample in enumerate(data, 1):
        items = turn_items(sample["conversation"])
        progress(f"ingest {sample['sample_id']} ({i}/{len(data)}): {len(items)} turns", force=True)
        coord.add_episodic_many(user_prefix + sample["sample_id"], items)
        n_turns += len(items)
    ingest_s = time.perf_counter() - t0
    progress.done(f"ingested {n_turns} turns in {ingest_s:.1f} s")
    coord.bookkeeping.drain()  # the background fit of the statement classifier is done
    return n_turns, ingest_s


def run(
    coord: MemoryCoordinator,
    data: list[dict[str, Any]],
    ks: list[int],
    *,
    min_score: float | None = None,
    progress: Progress | None = None,
    user_prefix: str = "locomo-",
    prompt_budget: int | None = None,
) -> dict[str, Any]:
    """Ingest every conversation, ask every question; the result dict of `--json`. With
    `prompt_budget`, each question also goes through the agent's recall and memory block
    (`benchmarks.prompt_level`)."""
    progress = progress or Progress(quiet=True)
    stamped = stamp()
    ks = sorted(set(ks))
    kmax = max(ks)
    n_turns, ingest_s = ingest(coord, data, progress, user_prefix)

    all_rows: list[tuple[dict[int, float], float]] = []
    by_cat: dict[int, list] = defaultdict(list)
    by_conv: dict[str, list] = defaultdict(list)
    latencies: list[float] = []
    prompt_rows: list[PromptRow] = []
    prompt_by_cat: dict[int, list[PromptRow]] = defaultdict(list)
    total_q = sum(len(questions(s)) for s in data)
    done = 0
    for sample in data:
        user = user_prefix + sample["sample_id"]
        for q in questions(sample):
            t = time.perf_counter()
            hits = coord.search(
                user, str(q["question"]), k=kmax, where=SearchFilter(min_score=min_score)
            )
            latencies.append((time.perf_counter() - t) * 1000)
            ranked = [turns_held(h) for h in hits]
            row = _metrics(ranked, [str(e) for e in q["evidence"]], ks)
            all_rows.append(row)
            by_cat[category_of(q)].append(row)
            by_conv[sample["sample_id"]].append(row)
            if prompt_budget is not None:
                evidence = [str(e) for e in q["evidence"]]
                prow = prompt_row(coord, user, str(q["question"]), evidence, prompt_budget)
                common.collect_garbage(coord)  # what its access counts left (see there)
                prompt_rows.append(prow)
                prompt_by_cat[category_of(q)].append(prow)
            done += 1
            progress(f"questions {done}/{total_q}")
    progress.done(f"asked {done} questions")

    out = _summary(all_rows, ks)
    out.update(
        {
            "by_category": {
                f"{c} {CATEGORY_NAMES[c]}": _summary(by_cat[c], ks) for c in sorted(by_cat)
            },
            "by_conversation": {c: _summary(r, ks) for c, r in by_conv.items()},
            "latency_ms": percentiles(latencies, (50, 95)),
            "ingest_s": round(ingest_s, 2),
            "n_turns": n_turns,
            "min_score": coord.recall.weights.min_score if min_score is None else min_score,
            **stamped,
        }
    )
    if prompt_budget is not None:
        out["prompt"] = {
            "budget_tokens": prompt_budget,
            **prompt_summary(prompt_rows),
            "by_category": {
                f"{c} {CATEGORY_NAMES[c]}": prompt_summary(prompt_by_cat[c])
                for c in sorted(prompt_by_cat)
            },
        }
    return out


def render(result: dict[str, Any]) -> str:
    ks = list(result["recall_at"])
    headers = ["subset", "questions", *[f"R@{k}" for k in ks], "MRR"]
    rows = [["all", result["n_questions"], *result["recall_at"].values(), result["mrr"]]]
    for name, s in {**result["by_category"], **result["by_conversation"]}.items():
        rows.append([name, s["n_questions"], *s["recall_at"].values(), s["mrr"]])
    lat = result["latency_ms"]
    prompt = ""
    if "prompt" in result:
        pr = result["prompt"]
        p_rows = [["all", pr["n_questions"], *_prompt_cells(pr)]]
        for name, s in pr["by_category"].items():
            p_rows.append([name, s["n_questions"], *_prompt_cells(s)])
        prompt = (
            f"\n\nevidence in the agent's memory block (budget {pr['budget_tokens']} tokens):\n"
            + table(
                ["subset", "questions", "evidence", "all", "any", "tokens mean", "p95", "lines"],
                p_rows,
            )
        )
    return (
        table(headers, rows)
        + prompt
        + f"\n\nrecall latency (search incl. query embedding): p50 {lat['p50']} ms, "
        f"p95 {lat['p95']} ms\ningest: {result['n_turns']} turns in {result['ingest_s']} s; "
        f"min_score {result['min_score']}; commit {result['commit']}, {result['date']}"
    )


def _prompt_cells(s: dict[str, Any]) -> list[Any]:
    return [
        s["evidence_share"],
        s["all_evidence"],
        s["any_evidence"],
        s["tokens_mean"],
        s["tokens"]["p95"],
        s["lines_mean"],
    ]


def add_data_args(p: argparse.ArgumentParser) -> None:
    """The data options of the commands that read a LoCoMo file (`data_from_args`)."""
    p.add_argument(
        "--data", required=True, type=Path, help="LoCoMo JSON file (e.g. locomo-dev.json)"
    )
    p.add_argument("--conversations", help="only these sample ids, comma-separated")


def data_from_args(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The conversations `--data` and `--conversations` name; exits saying why it cannot."""
    convs = [c.strip() for c in args.conversations.split(",")] if args.conversations else None
    try:
        return load(args.data, convs)
    except (OSError, ValueError) as e:
        raise SystemExit(f"Cannot read {args.data}: {e}") from None


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "locomo",
        help="LoCoMo turn-level evidence recall through the app's recall path",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_data_args(p)
    p.add_argument(
        "--k",
        type=int_list,
        default="1,5,10,20",
        help="comma-separated cut-offs (default %(default)s)",
    )
    p.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="recall threshold (default: the app's RECALL_MIN_SCORE)",
    )
    p.add_argument(
        "--prompt-budget",
        type=int,
        metavar="TOKENS",
        help="also measure what reaches the agent's memory block at this token budget: the "
        "share of evidence with a line in it and its tokens per question",
    )
    add_common_args(p)
    p.set_defaults(fn=main)


def main(args: argparse.Namespace, settings: Any = None) -> int:
    ks = args.k
    if not ks or min(ks) < 1 or max(ks) > 200:
        raise SystemExit("--k values must be between 1 and 200")
    if args.prompt_budget is not None and not 50 <= args.prompt_budget <= 100_000:
        raise SystemExit("--prompt-budget must be between 50 and 100000 tokens")
    data = data_from_args(args)
    progress = Progress(quiet=args.quiet)
    return run_bench(
        args,
        "locomo",
        lambda coord: run(
            coord,
            data,
            ks,
            min_score=args.min_score,
            progress=progress,
            prompt_budget=args.prompt_budget,
        ),
        render,
        results.locomo_figures,
        data=args.data,
    )
