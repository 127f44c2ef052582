"""What the agent says without a model: the status line of a recall, and the memory-only
reply (labelled; it lists what was stored and recalled, as data for the person to read).
A memory-only reply carries `MEMORY_ONLY_MARK`, so the history sent to a model later leaves
it out (agent/prompt.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from agent.prompt import MEMORY_ONLY_MARK, without_replaced
from agent.types import StoredMemory
from memory import words
from memory.block import shown_reply
from memory.models import MemoryContext


def _day(ms: object) -> str:
    """`14 Nov 2026` (UTC) from a record's timestamp; "" when it has none."""
    if not ms:
        return ""
    try:
        when = datetime.fromtimestamp(int(str(ms)) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return f"{when.day} {when:%b %Y}"


def recall_status(ctx: MemoryContext) -> str:
    """One line for the status box: what the recall found."""
    parts = []
    if ctx.episodic:
        parts.append(f"{len(ctx.episodic)} about you")
    if ctx.semantic:
        parts.append(f"{len(ctx.semantic)} general facts")
    if ctx.procedural is not None:
        parts.append(f"a tool habit ({words.tools_words(ctx.procedural.tool_sequence)})")
    if ctx.short_term:
        parts.append(f"{len(ctx.short_term)} recent messages")
    return "Recalled " + ", ".join(parts) if parts else "Nothing recalled"


def memory_only_reply(
    reason: str,
    ctx: MemoryContext,
    stored: list[StoredMemory],
    *,
    state: str = "offline",
    saved: bool | None = True,
) -> str:
    """`state`: offline, failed (the server answered with an error) or not available;
    `saved`: whether the exchange was stored (the reply says so only when it was); None for
    a turn that stores nothing by design (an answer given again), which says nothing of it."""
    what = (
        "The language model server failed"
        if state == "failed"
        else f"The language model is {state}"
    )
    lines = [
        f"{what}, {MEMORY_ONLY_MARK}",
        reason,
    ]
    lines.append("")
    if saved is False:
        lines.append("I could NOT save your message: it will not be in this chat's history.")
    # What was remembered is not copied into the reply: the line under the answer names it
    # and follows an edit or an undo (ui/remembered.py; the CLI prints what was stored).
    if saved and stored:
        lines.append("I saved your message and remembered what it told me.")
    elif saved:
        lines.append("I saved your message.")
    elif stored:
        lines.append("What it told me is remembered all the same.")
    lines.append("")
    hits = [*without_replaced(ctx.episodic, stored), *ctx.semantic]
    if hits:
        lines.append("What I remember that may be relevant:")
        for h in hits:
            kind = h.record.get("event_type")
            et = words.kind_word(kind) if kind else str(h.record.get("category") or "Fact")
            answered = shown_reply(h, ctx.query)  # "" but for a remembered exchange
            # dated: "you ran 27 km" from two months ago must not read as this week
            day = _day(h.record.get("timestamp")) if h.memory_type == "episodic" else ""
            lines.append(
                f"- {et}: {h.text} ({f'{day}; ' if day else ''}{words.band_word(h.band)})"
                + (f"; I answered then: {answered}" if answered else "")
            )
    else:
        lines.append("I have no memories relevant to this message yet.")
    if ctx.procedural is not None:
        lines.append(
            "For questions like this I would normally have "
            + words.tools_words(ctx.procedural.tool_sequence)
            + f" ({ctx.procedural.confidence:.0%} sure)."
        )
    return "\n".join(lines).strip()
