"""What the agent says without a model: the status line of a recall, and the memory-only
reply (labelled; what was stored, and the few memories that answer the message, grouped by
what they are, as data for the person to read), stored as shown and marked memory-only: the
history sent to a model later leaves it out (agent/prompt.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from agent.prompt import MEMORY_ONLY_MARK
from agent.types import StoredMemory
from memory import words
from memory.block import read_block, shown_reply, unfenced, without_replaced
from memory.models import MemoryContext, RecallHit, shown_hits
from memory.recall.scoring import NEIGHBOUR_FLOOR
from memory.stores.quotes import ANSWER_QUOTE, listed, md_literal

#: At most this many memories answer a message without a model: the few that answer it.
ANSWER_MEMORIES = 5
#: A memory-only answer lists a memory at least this likely to answer the message. Fitted by
#: `python -m benchmarks floor` on the development files (the answer's own floor), rounded:
#: the fit lands on search's `SHOWN_FLOOR`, so a higher floor would cost evidence there.
ANSWER_FLOOR = 0.12
#: The groups a memory-only answer lists its memories under, by kind (a fact: "semantic").
GROUPS = {
    "health_event": "Health",
    "goal": "Goals",
    "preference": "Preferences",
    "fact": "About you",
    "milestone": "Milestones",
    "correction": "Corrections",
    "feedback": "Feedback",
    "interaction": "Earlier conversations",
    "summary": "Earlier conversations",
    "semantic": "General knowledge",
}
#: Kinds that log the chat itself (the user's own questions), not something known about them
CONVERSATION_KINDS = frozenset({"interaction", "summary"})
NOTHING_YET = "I have nothing about that yet."
#: How the notice of a reply given while the model is offline starts (`memory_only_reply`)
OFFLINE_NOTICE = "The language model is offline"


def _day(ms: object) -> str:
    """`14 Nov 2026` (UTC) from a record's timestamp; "" when it has none."""
    if not ms:
        return ""
    try:
        when = datetime.fromtimestamp(int(str(ms)) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return f"{when.day} {when:%b %Y}"


def in_prompt(memory_block: str, hits: list[RecallHit]) -> list[RecallHit]:
    """The hits whose text reached the model (the block may have left some out to fit)."""
    texts = {line.text for line in read_block(memory_block) if line.kind == "memory"}
    return [h for h in hits if unfenced(h.text) in texts]


def recall_status(ctx: MemoryContext) -> str:
    """One line for the status box: what the recall found."""
    parts = []
    if ctx.episodic:
        parts.append(f"{len(ctx.episodic)} about you")
    if ctx.semantic:
        parts.append(f"{len(ctx.semantic)} general facts")
    if ctx.procedural is not None:
        tools = words.tools_words(ctx.procedural.tool_sequence)
        parts.append(f"a way of working I learned ({tools})")
    if ctx.short_term:
        parts.append(f"{len(ctx.short_term)} recent messages")
    return "Checked " + ", ".join(parts) if parts else "No memory checked"


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
    lines = [f"{what}, {MEMORY_ONLY_MARK}", reason, ""]
    if saved is False:
        lines.append("I could NOT save your message: it will not be in this chat's history.")
    # The reply does not say what, or that anything, was remembered: it is redrawn as shown
    # (a forgotten memory's line aside: memory/stores/quotes.py), while the line under it
    # names what was remembered and follows an edit or a *Forget this* (ui/remembered.py).
    if saved:
        lines.append("I saved your message.")
    lines.append("")
    hits = answer_hits(ctx, stored)
    if hits:
        lines.append("What I remember about this:")
        for group, mine in grouped(hits):
            lines += ["", f"**{group}**", *(_answer_line(h, ctx.query) for h in mine)]
    else:
        lines.append(NOTHING_YET)
    if (proc := ctx.procedural) is not None:
        # its own paragraph: a line right under the list would join its last bullet
        lines += [
            "",
            "For questions like this I would normally have "
            + words.tools_words(proc.tool_sequence)
            + f" ({proc.confidence:.0%} sure).",
        ]
    return "\n".join(lines).strip()


def without_offline_notice(text: str, instead: str = "") -> str:
    """A memory-only reply without its offline notice (that line and the one saying what to
    run), `instead` in their place: the chat shows the offline state in its banner, so this
    is the reply a person reads, and the one the chat's history stores. A server that failed
    keeps its notice: that is news."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(OFFLINE_NOTICE) and line.endswith(MEMORY_ONLY_MARK):
            return "\n".join(lines[:i] + ([instead] if instead else []) + lines[i + 2 :]).strip()
    return text


def answer_hits(
    ctx: MemoryContext, stored: list[StoredMemory], floor: float = ANSWER_FLOOR
) -> list[RecallHit]:
    """The memories a memory-only answer gives, best first: those at or above `floor` that
    match the message on their own (`only_a_neighbour`), at most `ANSWER_MEMORIES`; not one
    this turn just replaced."""
    kept, _ = shown_hits([*without_replaced(ctx.episodic, stored), *ctx.semantic], floor)
    return [h for h in kept if not only_a_neighbour(h)][:ANSWER_MEMORIES]


def only_a_neighbour(hit: RecallHit) -> bool:
    """Is the hit recalled only for being said next to a strong hit in its chat (its score no
    more than the floor a neighbour gets from its seed, `NEIGHBOUR_FLOOR` of it)? The prompt
    keeps such a turn beside its seed, where it can be the answer; in a memory-only list it
    stands alone and reads as unrelated ("I prefer short answers" for "How far did I run")."""
    return hit.parts.neighbour > 0 and hit.score <= NEIGHBOUR_FLOOR * hit.parts.neighbour + 1e-4


def kind_of(hit: RecallHit) -> str:
    """An episodic memory's kind, or "semantic" for a fact."""
    episodic = hit.memory_type == "episodic"
    return str(hit.record.get("event_type") or "fact") if episodic else "semantic"


def is_conversation(hit: RecallHit) -> bool:
    """Is the hit a logged exchange or a summary of one (the chat, not a memory of the user)?"""
    return kind_of(hit) in CONVERSATION_KINDS


def grouped(hits: list[RecallHit]) -> list[tuple[str, list[RecallHit]]]:
    """The hits under their group's words, the group of the best hit first, best first inside."""
    groups: dict[str, list[RecallHit]] = {}
    for h in hits:
        groups.setdefault(GROUPS.get(kind_of(h), "Other"), []).append(h)
    return list(groups.items())


def _answer_line(h: RecallHit, query: str) -> str:
    answered = shown_reply(h, query)  # "" but for a remembered exchange
    # dated: "you ran 27 km" from two months ago must not read as this week
    day = _day(h.record.get("timestamp")) if h.memory_type == "episodic" else ""
    line = listed(h.text) + (f" ({day})" if day else "")
    if not answered:
        return line
    # what was answered is data: a quote inside the item, line by line (a list stays a list),
    # each line literal text, never markup or a heading of the reply
    said = [ANSWER_QUOTE + md_literal(x) for x in answered.splitlines() if x.strip()]
    return "\n".join([f"{line}; I answered then:", *said])
