"""`python -m benchmarks qa`: answer accuracy on LoCoMo-style questions, through the agent.

What it measures: how often the agent's model answers a question about a long past
conversation correctly when it gets (a) what the agent's own recall finds, (b) nothing, or
(c) exactly the turns that hold the answer. Everything but the model is the agent's: the
recall call, the fenced memory block, the system rules and the context budget
(`agent.answering.Answerer`, offered no tools). No judge model: a reply is scored against the
short gold answer by text.

    ingest   as `python -m benchmarks locomo` does (`benchmarks.locomo.turn_items` +
             `MemoryCoordinator.add_episodic_many`, one user per conversation, a private
             embedded Redis unless --redis-url), only the conversations whose questions are asked
    ask      each question with evidence, LoCoMo's adversarial category 5 left out
             (`benchmarks.locomo.questions`), in file order,
             in session "bench-qa"; nothing is stored by asking (recall's own bookkeeping,
             access counts and the query-cache note, is all that is written):
               memory  ctx = coordinator.retrieve_all_context(user, "bench-qa", question,
                       RecallOptions(include_short_term=False, include_procedural=False))
               none    an empty MemoryContext: the model sees the question alone
               oracle  only the question's evidence turns, with the text they were ingested
                       with, as "high" episodic hits
    score    normalise (lower case; numbers canonical: "7.0" -> "7", "1,000" -> "1000",
             "seven" -> "7", "twenty-one" -> "21"; apostrophes dropped, other punctuation and
             symbols a space; articles a/an/the dropped; spaces collapsed), then
               contains  the normalised gold answer occurs in the normalised reply as whole
                         words; a gold answer that is one number instead matches when any
                         number in the reply equals it ("7" == "seven" == "7.0", but not "17")
               F1        SQuAD-style token F1 between normalised reply and gold answer
             A verbose reply that holds the answer gets `contains` but a low F1: F1 mostly
             rewards short answers; compare modes on the same model, not models on F1.

How to read it:

- memory vs none: what the memory adds for this model (none is what the model guesses from
  the question alone);
- oracle: the ceiling when recall gives exactly the right turns; oracle - memory is what better
  recall could still add, 1 - oracle what the model (and the prompt) lose even then;
- prompt tokens: the planned prompt (`WindowReport.split.prompt`), what the server counted
  (`prompt_eval_count`, over the questions it reported it for), and the memory block alone.

The agent's rules were written for a wellness assistant (rule 1 asks for a tool for any
number or date, and no tools are offered here): that is the prompt measured. Questions whose
request fails (`LLMError`) count as wrong with an empty reply, and are reported in `failed`.

Status: this has only been run here against the fake Ollama of the tests (there is no real
model on these machines), so no accuracy figure of a real model exists yet; the numbers the
fake gives only check the plumbing.
"""

from __future__ import annotations

import argparse
import math
import re
import secrets
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from agent.answering import Answerer
from agent.config import AgentSettings
from agent.errors import LLMError
from agent.llm import LLM, OllamaLLM
from agent.tools.registry import ToolContext, ToolRegistry
from agent.turn_state import AnswerState, TurnState
from agent.types import TurnEvent
from benchmarks import results
from benchmarks.common import (
    Progress,
    add_output_args,
    run_bench,
    stamp,
    table,
)
from benchmarks.locomo import (
    CATEGORY_NAMES,
    add_data_args,
    category_of,
    data_from_args,
    ingest,
    questions,
    turn_items,
)
from memory.coordinator import MemoryCoordinator
from memory.models import MemoryContext, MemoryType, RecallHit, ScoreParts
from memory.queries import RecallOptions

MODES = ("memory", "none", "oracle")
SESSION = "bench-qa"
#: The same users as `python -m benchmarks locomo`.
USER_PREFIX = "locomo-"
MODES_NOTE = (
    "modes: memory = the agent's own recall of the ingested conversation; none = no memories "
    "(the model guesses from the question); oracle = only the evidence turns (the ceiling when "
    "recall finds exactly the right turns). memory - none = what memory adds for this model."
)

# ---- scoring -------------------------------------------------------------------------------

_UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_ARTICLES = {"a", "an", "the"}
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL_POINT_RE = re.compile(r"(?<=\d)\.(?=\d)")
_POINT = "\x00"


def _canonical_number(token: str) -> str:
    value = float(token)
    return str(int(value)) if value.is_integer() else repr(value)


def tokens(text: str) -> list[str]:
    """The normalised words of `text` (see the module docstring)."""
    s = str(text).lower().replace("'", "").replace("\u2019", "")
    s = _THOUSANDS_RE.sub("", s)
    s = _DECIMAL_POINT_RE.sub(_POINT, s)
    s = "".join(" " if unicodedata.category(c)[0] in "PS" else c for c in s)
    words = s.replace(_POINT, ".").split()
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in _TENS:
            value = _TENS[w]
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if 1 <= _UNITS.get(nxt, 0) <= 9:
                value += _UNITS[nxt]
                i += 1
            out.append(str(value))
        elif w in _UNITS:
            out.append(str(_UNITS[w]))
        elif _NUMBER_RE.fullmatch(w):
            out.append(_canonical_number(w))
        elif w not in _ARTICLES:
            out.append(w)
        i += 1
    return out


def normalise(text: str) -> str:
    return " ".join(tokens(text))


def _number(token: str) -> float | None:
    return float(token) if _NUMBER_RE.fullmatch(token) else None


def as_number(gold: Any) -> float | None:
    """The gold answer's value when it is one number ("7", 7, "7.0", "seven"), else None."""
    toks = tokens(str(gold))
    return _number(toks[0]) if len(toks) == 1 else None


def numbers_in(text: str) -> list[float]:
    return [v for v in (_number(t) for t in tokens(text)) if v is not None]


def contains(reply: str, gold: Any) -> bool:
    """The gold answer is in the reply: as a number when it is one, else as whole words."""
    value = as_number(gold)
    if value is not None:
        return any(math.isclose(v, value) for v in numbers_in(reply))
    g = normalise(str(gold))
    return bool(g) and f" {g} " in f" {normalise(reply)} "


def f1(reply: str, gold: Any) -> float:
    """SQuAD-style token F1 of the normalised reply against the normalised gold answer."""
    pred, ref = tokens(reply), tokens(str(gold))
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


# ---- asking --------------------------------------------------------------------------------


@dataclass
class Row:
    """One asked question and what came of it."""

    category: int
    contains: bool
    f1: float
    prompt_tokens: int | None
    prompt_eval_count: int | None
    memory_tokens: int | None
    failed: bool


def select(data: list[dict[str, Any]], limit: int | None) -> list[tuple[str, dict[str, Any]]]:
    """(sample_id, question) of the questions to ask, in file order, the first `limit` (a
    question without a gold answer cannot be scored: it is not asked)."""
    out = [(s["sample_id"], q) for s in data for q in questions(s) if "answer" in q]
    return out if limit is None else out[:limit]


def evidence_hits(items: list[dict[str, Any]], evidence: list[Any]) -> tuple[list[RecallHit], int]:
    """The oracle's hits: the ingested turns the evidence ids name, with the text they were
    ingested with (a reply of an assistant names the user's message it is stored with), and
    how many evidence ids name no turn."""
    by_id: dict[str, dict[str, Any]] = {}
    for it in items:
        meta = it["metadata"]
        by_id[str(meta["dia_id"])] = it
        if meta.get("reply_dia_id"):
            by_id.setdefault(str(meta["reply_dia_id"]), it)
    hits: list[RecallHit] = []
    seen: set[str] = set()
    missing = 0
    for ev in evidence:
        turn = by_id.get(str(ev))
        if turn is None:
            missing += 1
            continue
        dia = str(turn["metadata"]["dia_id"])
        if dia in seen:
            continue
        seen.add(dia)
        hits.append(
            RecallHit(
                id=f"oracle-{dia}",
                memory_type=MemoryType.EPISODIC,
                text=turn["text"],
                score=1.0,
                band="high",
                parts=ScoreParts(),
                # with its context: the block shows a chat message's reply from it
                record={
                    "event_type": "interaction",
                    "timestamp": turn["timestamp_ms"],
                    "context": turn.get("context", ""),
                },
            )
        )
    return hits, missing


def make_answerer(llm: LLM, settings: Any, config: AgentSettings | None = None) -> Answerer:
    """The agent's answerer with no tools: its prompt, memory budget and window planning."""
    return Answerer(
        llm, ToolRegistry([]), config or AgentSettings(), int(settings.memory_prompt_tokens)
    )


def answer_one(
    answerer: Answerer, model: str, user: str, question: str, ctx: MemoryContext
) -> tuple[str, AnswerState, bool]:
    """(reply, state, failed): the agent's answer to `question` given `ctx`, no history."""
    turn = TurnState(user, SESSION, question, model)
    turn.ctx, turn.block.nonce = ctx, secrets.token_hex(4)  # one nonce for every round
    state = turn.answer
    gen: Generator[TurnEvent, None, tuple[str, bool]] = answerer.answer(
        turn, ToolContext(user_id=user, session_id=SESSION)
    )
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        reply, _hit_cap = stop.value
        return str(reply), state, False
    except LLMError:
        return "", state, True


def _mean(values: list[Any], digits: int) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), digits) if vals else None


def summarise(rows: list[Row]) -> dict[str, Any]:
    n = len(rows)
    return {
        "n_questions": n,
        "contains": round(sum(r.contains for r in rows) / n, 4) if n else 0.0,
        "f1": round(sum(r.f1 for r in rows) / n, 4) if n else 0.0,
        "prompt_tokens": _mean([r.prompt_tokens for r in rows], 1),
        "prompt_eval_count": _mean([r.prompt_eval_count for r in rows], 1),
        "memory_tokens": _mean([r.memory_tokens for r in rows], 1),
        "failed": sum(r.failed for r in rows),
    }


def ask(
    coord: MemoryCoordinator | None,
    answerer: Answerer,
    model: str,
    data: list[dict[str, Any]],
    mode: str,
    *,
    limit: int | None = None,
    progress: Progress | None = None,
    user_prefix: str = USER_PREFIX,
) -> dict[str, Any]:
    """Ask the selected questions of `data` (already ingested for mode "memory"); the result
    dict of `--json` without commit, date and data."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "memory" and coord is None:
        raise ValueError("mode 'memory' needs the coordinator the data was ingested with")
    progress = progress or Progress(quiet=True)
    samples = {s["sample_id"]: s for s in data}
    items = {sid: turn_items(s["conversation"]) for sid, s in samples.items()}
    chosen = select(data, limit)
    rows: list[Row] = []
    by_cat: dict[int, list[Row]] = defaultdict(list)
    missing = 0
    for done, (sid, q) in enumerate(chosen, 1):
        user = user_prefix + sid
        question = str(q["question"])
        hits, miss = evidence_hits(items[sid], list(q.get("evidence") or []))
        missing += miss
        if mode == "memory":
            assert coord is not None
            ctx = coord.retrieve_all_context(
                user,
                SESSION,
                question,
                RecallOptions(include_short_term=False, include_procedural=False),
            )
        else:
            ctx = MemoryContext(
                user_id=user,
                session_id=SESSION,
                query=question,
                episodic=hits if mode == "oracle" else [],
            )
        reply, state, failed = answer_one(answerer, model, user, question, ctx)
        split = state.report.split
        gold = q["answer"]
        row = Row(
            category=category_of(q),
            contains=contains(reply, gold),
            f1=f1(reply, gold),
            prompt_tokens=split.prompt if split is not None else None,
            prompt_eval_count=state.report.prompt_eval_count,
            memory_tokens=state.fit.block.tokens if state.fit is not None else None,
            failed=failed,
        )
        rows.append(row)
        by_cat[row.category].append(row)
        progress(f"questions {done}/{len(chosen)} ({mode}, {sum(r.failed for r in rows)} failed)")
    progress.done(f"asked {len(rows)} questions ({mode})")
    out: dict[str, Any] = {"mode": mode, "model": model}
    out.update(summarise(rows))
    out["by_category"] = {f"{c} {CATEGORY_NAMES[c]}": summarise(by_cat[c]) for c in sorted(by_cat)}
    out["evidence_missing"] = missing
    return out


def render(result: dict[str, Any]) -> str:
    headers = [
        "subset",
        "questions",
        "contains",
        "F1",
        "prompt tok",
        "server tok",
        "memory tok",
        "failed",
    ]
    keys = [
        "n_questions",
        "contains",
        "f1",
        "prompt_tokens",
        "prompt_eval_count",
        "memory_tokens",
        "failed",
    ]

    def row(name: str, s: dict[str, Any]) -> list[Any]:
        return [name, *("-" if s[k] is None else s[k] for k in keys)]

    rows = [row("all", result)] + [row(n, s) for n, s in result["by_category"].items()]
    return (
        table(headers, rows)
        + f"\n\nmode {result['mode']}, model {result['model']}; tokens are means per question "
        "(prompt = planned, server = prompt_eval_count where reported, memory = the memory "
        f"block); {result['failed']} failed request(s); {result['evidence_missing']} evidence "
        f"id(s) name no turn\n{MODES_NOTE}\n"
        f"data {result['data']}; {result['n_turns']} turns ingested; commit {result['commit']}, "
        f"{result['date']}"
    )


# ---- command -------------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register `qa` on the sub-parsers of `python -m benchmarks` (sets `fn=main`)."""
    p = sub.add_parser(
        "qa",
        help="answer accuracy on LoCoMo-style questions through the agent's recall and prompt",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_data_args(p)
    p.add_argument("--model", default=None, help="Ollama model (default: OLLAMA_MODEL)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="memory",
        help="memory: the agent's recall (default); none: no memories; oracle: the evidence turns",
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N questions")
    add_output_args(p)
    p.set_defaults(fn=main)
    return p


def main(args: argparse.Namespace, settings: Any = None) -> int:
    """Run the benchmark; 0 when it ran (failed questions are reported, not fatal), 1 when
    the model cannot be reached or is not pulled."""
    from memory.config import Settings

    settings = settings if settings is not None else Settings()
    config = AgentSettings()
    model = args.model or config.ollama_model
    if args.limit is not None and args.limit < 1:
        raise SystemExit("--limit must be at least 1")
    data = data_from_args(args)
    chosen = select(data, args.limit)
    if not chosen:
        raise SystemExit(
            f"{args.data}: no questions with evidence to ask (adversarial category 5 is skipped)"
        )
    asked = {sid for sid, _ in chosen}
    data = [s for s in data if s["sample_id"] in asked]

    llm = OllamaLLM.from_settings(settings, config)
    status = llm.status(model)
    if not status.ok:
        print(f"error: {status.message or f'model {model} is not available'}", file=sys.stderr)
        return 1
    answerer = make_answerer(llm, settings, config)
    progress = Progress(quiet=args.quiet)

    def measure(coord: MemoryCoordinator) -> dict[str, Any]:
        stamped = stamp()
        n_turns, _ = ingest(coord, data, progress, USER_PREFIX)
        result = ask(coord, answerer, model, data, args.mode, limit=args.limit, progress=progress)
        return {**result, "n_turns": n_turns, **stamped}

    return run_bench(
        args,
        "qa",
        measure,
        render,
        results.qa_figures,
        data=args.data,
        note=f"mode {args.mode}, model {model}",
    )
