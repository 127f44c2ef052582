"""Evidence that reaches the prompt: what of a question's evidence the model would actually see.

Recall@k counts evidence among the top k hits; the model sees less: the memory block keeps the
hits above RECALL_MIN_SCORE, best first, only while they fit its token budget. For each
question this runs the agent's own recall call and rendering:

    ctx   = coordinator.retrieve_all_context(user, SESSION, question,
                RecallOptions(include_short_term=False, include_procedural=False))
                                                                 (k as the agent asks)
    block = memory.block.render_memory_block(ctx, budget_tokens=BUDGET)

and records which evidence turns have a line in the block (a chat's reply turn counts when its
message's line shows the reply whole: not shortened, not dropped to fit), and the block's
estimated tokens
(`memory.tokens.estimate_tokens`, which errs high: the fence and section titles included).
Short-term and procedural memory are left out: a benchmark question has no session and no
tool pattern; semantic facts (the built-in knowledge) are in, as in a chat, and take room.

    evidence_share  share of a question's evidence turns with a line in the block, averaged
    all_evidence    share of questions with every evidence turn in the block
    any_evidence    share of questions with at least one
    tokens          the block's estimated tokens per question (mean, p50, p95)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchmarks.common import percentiles
from memory.block import episodic_lines, render_memory_block, shown_reply
from memory.coordinator import MemoryCoordinator
from memory.queries import RecallOptions
from memory.stores.episodic import exchange_reply

#: The session the questions are asked in (recall reads no short-term memory here).
SESSION = "bench-prompt"


@dataclass
class PromptRow:
    share: float  # evidence turns in the block / evidence turns
    tokens: int
    lines: int  # memory lines in the block


def prompt_row(
    coord: MemoryCoordinator, user: str, question: str, evidence: list[str], budget: int
) -> PromptRow:
    """Recall and render as the agent does; which of `evidence` (dia ids) got a line."""
    ctx = coord.retrieve_all_context(
        user, SESSION, question, RecallOptions(include_short_term=False, include_procedural=False)
    )
    # The access counts this recall leaves (off the answer path) are written before the next
    # question, as a user's next message comes seconds later: otherwise they race its search.
    coord.bookkeeping.drain()
    block = render_memory_block(ctx, budget_tokens=budget, nonce="bench")
    # A hit is in the block when its line is (lines are kept best first while they fit), each
    # line of the block credited to one hit only (two turns can read alike: "Thanks!"); the
    # reply a chat message got, when its line shows it whole (not shortened, not left out).
    left = Counter(block.text.split("\n"))
    shown: set[str] = set()
    for h in ctx.episodic:
        lines = episodic_lines(h, ctx.query)  # with the reply first, when it may be shown
        line = next((x for x in lines if left[x] > 0), None)
        if line is None:
            continue
        left[line] -= 1
        meta = h.record.get("metadata") or {}
        shown.add(str(meta.get("dia_id", "")))
        reply = exchange_reply(h.record.get("event_type"), h.record.get("context"))
        if meta.get("reply_dia_id") and line != lines[-1] and shown_reply(h, ctx.query) == reply:
            shown.add(str(meta["reply_dia_id"]))
    share = sum(1 for e in evidence if e in shown) / len(evidence) if evidence else 0.0
    return PromptRow(share=share, tokens=block.tokens, lines=block.lines)


def summary(rows: list[PromptRow]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n_questions": 0}
    tokens = [float(r.tokens) for r in rows]
    return {
        "n_questions": n,
        "evidence_share": round(sum(r.share for r in rows) / n, 4),
        "all_evidence": round(sum(1 for r in rows if r.share >= 1.0) / n, 4),
        "any_evidence": round(sum(1 for r in rows if r.share > 0) / n, 4),
        "tokens_mean": round(sum(tokens) / n, 1),
        "tokens": percentiles(tokens, (50, 95)),
        "lines_mean": round(sum(r.lines for r in rows) / n, 2),
    }
