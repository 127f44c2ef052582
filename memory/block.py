"""The memory block: recalled memories as one fenced DATA block for a model's prompt, one JSON line
each, fences neutralised (docs/agent.md, "The prompt: memories are data, not instructions"). It
lives below the agent because `python -m benchmarks locomo --prompt-budget` measures it."""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from memory.health import about_health
from memory.models import BAND_HIGH, MemoryContext, ProfileLine, RecallHit
from memory.recall.statements import asks_what_was_said, request_kind
from memory.stores.episodic import exchange_reply
from memory.tokens import estimate_tokens
from memory.writing import StoredMemory

NO_MEMORY_NOTE = "(nothing relevant remembered yet)"
#: How a logged exchange's line goes on to what the assistant answered then, and when it does:
#: docs/agent.md, "The prompt: memories are data, not instructions".
ANSWERED = ", you answered "
#: Characters of that reply shown, about (cut at a word, " …" added; the store keeps 600).
BLOCK_REPLY_CHARS = 300
#: The user profile's fixed share of a prompt, title included, whatever the window: a few
#: standing facts (diet, goals, injuries, how they like answers) that search would not match.
PROFILE_TOKENS = 150
PROFILE_TITLE = "About the user (user profile: their standing memories):"


def unfenced(text: str) -> str:
    """A memory's text as it stands inside the fence (fence markers broken)."""
    return text.replace("<<<", "‹‹‹").replace(">>>", "›››")


#: characters that end a line for `str.splitlines` (and some readers) but that JSON leaves raw
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def neutralise(text: str) -> str:
    """One line of data: JSON-encoded (escapes quotes, newlines, control chars and the Unicode
    line separators), fences broken."""
    return json.dumps(unfenced(text), ensure_ascii=False).translate(_LINE_BREAKS)


@dataclass
class BlockLine:
    """One line of a rendered memory block, read back for a person (the details' Prompt tab):
    a section `title`, or a memory with its `label`, `text` (decoded), `note` and, for a
    logged exchange, the `reply` the assistant gave (decoded)."""

    kind: Literal["title", "memory", "note"]
    text: str
    label: str = ""
    note: str = ""
    reply: str = ""


_MEMORY_LINE = re.compile(r"^- \[(?P<label>[^\]]*)\] ")
#: what follows a memory's text: `(note)`, then for a logged exchange `, you answered "reply"`
_AFTER_TEXT = re.compile(r"^\((?P<note>[^()]*)\)(?P<answered>" + re.escape(ANSWERED) + r")?")


def read_block(block: str) -> list[BlockLine]:
    """The lines of a memory block as rendered by `render_memory_block`, fence left out."""
    out: list[BlockLine] = []
    for raw in block.splitlines():
        line = raw.strip()
        if not line or (line.startswith("<<<") and line.endswith(">>>")):
            continue
        m = _MEMORY_LINE.match(line)
        if m is not None:
            try:
                text, end = json.JSONDecoder().raw_decode(line, m.end())
            except ValueError:
                out.append(BlockLine("note", line))
                continue
            rest = line[end:].strip()
            after = _AFTER_TEXT.match(rest)
            reply = ""
            if after is None:  # not a line this module wrote: keep what follows as the note
                note = rest
            else:
                note = after["note"]
                if after["answered"]:
                    try:
                        reply = str(json.JSONDecoder().raw_decode(rest, after.end())[0])
                    except ValueError:
                        reply = rest[after.end() :]
            out.append(BlockLine("memory", str(text), label=m["label"], note=note, reply=reply))
        elif line.endswith(":"):
            out.append(BlockLine("title", line[:-1]))
        else:
            out.append(BlockLine("note", line))
    return out


def label(value: Any) -> str:
    """A memory's label (kind, category) as it appears in `[...]`: the same neutralising as the
    text, without the quotes, and no `]` to end the bracket early. The store validates labels;
    this also covers records written before it did."""
    return neutralise(str(value))[1:-1].replace("[", "(").replace("]", ")")


def _date(ms: Any) -> str:
    """A date as "20 Nov 2026": as clear to a model as 2026-11-20 and cheaper (a tokenizer
    that splits numbers into digits spends 10 tokens on the ISO date, 7 on this)."""
    try:
        d = datetime.fromtimestamp(int(ms) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"  # not %b: that follows the locale


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def without_replaced(
    hits: Sequence[RecallHit], stored_now: Sequence[StoredMemory]
) -> list[RecallHit]:
    """Recall runs before this turn stores its memories: drop the hits a memory stored now
    replaced (the old weight goal), so the old value is not offered next to the new one."""
    replaced = {m.superseded_id for m in stored_now if m.superseded_id}
    return [h for h in hits if h.id not in replaced]


#: Each section's title by its name, in the block's reading order (the words table's
#: `block_sections` says them to people). A line is `- [kind] "text" (relevance, date)`; its
#: section title says which memory type it is and, once, what the parts are: the words
#: "episodic/", "relevance:" and an ISO date on every line were a third of a LoCoMo line's tokens.
SECTION_TITLES = {
    "profile": PROFILE_TITLE,
    "stored": "Stored from the current message:",
    "summary": "Earlier in this conversation (summary of turns no longer shown), "
    "(relevance, date):",
    "episodic": 'About this user (episodic, most relevant first), [kind] "memory" '
    "(relevance, date):",
    "semantic": 'General knowledge (semantic), [semantic/topic] "fact" (relevance):',
    "procedural": "Learned tool pattern (procedural, a suggestion):",
}


def _hit_line(hit: RecallHit, label: str) -> str:
    when = _date(hit.record.get("timestamp"))
    extra = hit.band + (f", {when}" if when else "")
    return f"- [{label}] {neutralise(hit.text)} ({extra})"


def episodic_lines(hit: RecallHit, query: str = "") -> tuple[str, ...]:
    """An episodic memory's line; for a logged exchange whose reply may be shown (`ANSWERED`),
    first the line with it (shown when the block has room for it)."""
    line = _hit_line(hit, _episodic_label(hit))
    reply = shown_reply(hit, query)
    return (line + ANSWERED + neutralise(reply), line) if reply else (line,)


def shown_reply(hit: RecallHit, query: str = "") -> str:
    """The part of an exchange's stored reply its line may show for the request `query` (""
    for none: not an exchange, or its message asked nothing and `query` does not ask what was
    answered)."""
    reply = exchange_reply(hit.record.get("event_type"), hit.record.get("context"))
    if not reply or not (asks_something(hit.text) or asks_what_was_said(query)):
        return ""
    if len(reply) > BLOCK_REPLY_CHARS:
        reply = reply[:BLOCK_REPLY_CHARS].rsplit(" ", 1)[0] + " …"
    return reply


def asks_something(message: str) -> bool:
    """A question, or a request for advice, a recommendation or a plan."""
    return message.rstrip().endswith("?") or request_kind(message) is not None


def _episodic_label(hit: RecallHit) -> str:
    et = hit.record.get("event_type")
    if et == "summary":  # says what a whole stretch of talk was, not one thing the user said
        return "summary of an earlier conversation"
    return label(et) if et else "episodic"


def _semantic_label(hit: RecallHit) -> str:
    # a category is free text (any label a person typed): the prefix keeps it from looking
    # like one of the block's own labels ("stored/fact", "summary of this conversation")
    cat = hit.record.get("category")
    return f"semantic/{label(cat)}" if cat else "semantic"


@dataclass
class ProfileFit:
    """The user profile as a prompt carries it: `sent`, (line, as written in the block) in the
    block's order, and the lines `left_out` for want of room (`PROFILE_TOKENS`)."""

    sent: list[tuple[ProfileLine, str]]
    left_out: list[ProfileLine]


def must_send(line: ProfileLine) -> bool:
    """A pinned line, or one about health or safety (an allergy, a medicine): never left out."""
    return line.pinned or about_health(line.text)


def fit_profile(profile: Sequence[ProfileLine]) -> ProfileFit:
    """The lines of the profile (read in its order: memory.user_profile) a prompt carries:
    every line `must_send` keeps, then the others that fit `PROFILE_TOKENS` with the title (a
    line too long for the room left is skipped, not cut). The one rule for the prompt and for
    the pages that show what is sent."""
    written = [(p, f"- [profile/{label(p.kind.value)}] {neutralise(p.text)}") for p in profile]
    used = estimate_tokens(PROFILE_TITLE + "\n")
    kept: set[int] = set()
    for i, (p, line) in enumerate(written):
        if must_send(p):
            kept.add(i)
            used += estimate_tokens(line + "\n")
    for i, (_, line) in enumerate(written):
        cost = estimate_tokens(line + "\n")
        if i not in kept and used + cost <= PROFILE_TOKENS:
            kept.add(i)
            used += cost
    return ProfileFit(
        sent=[w for i, w in enumerate(written) if i in kept],
        left_out=[p for i, (p, _) in enumerate(written) if i not in kept],
    )


def profile_lines(profile: Sequence[ProfileLine]) -> list[tuple[str, str]]:
    """(memory id, line) of the user profile's lines a prompt carries (`fit_profile`)."""
    return [(p.id, line) for p, line in fit_profile(profile).sent]


def profile_tokens(profile: Sequence[ProfileLine]) -> int:
    """What the profile's section costs in a block (0 with no line)."""
    return _profile_cost([line for _, line in profile_lines(profile)])


def _profile_cost(lines: Sequence[str]) -> int:
    return estimate_tokens("\n".join([PROFILE_TITLE, *lines]) + "\n") if lines else 0


@dataclass
class MemoryBlock:
    """The fenced block as injected, and how much of the recall fitted."""

    text: str
    nonce: str
    lines: int
    omitted: int
    tokens: int
    #: of `tokens`, the user profile's section
    profile_tokens: int = 0


#: A conversation summary is not a search result (its score says nothing about this message):
#: it ranks as a memory recall judged just highly relevant, after every memory recall judged
#: more relevant to the message and before the moderate and weak ones.
SUMMARY_VALUE = BAND_HIGH


@dataclass
class _Candidate:
    """One memory line the block may hold: its section (the block's reading order), its value
    to this message (which lines stay when not all fit) and the line, with its reply first
    when it may show one."""

    section: int
    value: float
    lines: tuple[str, ...]


def render_memory_block(
    context: MemoryContext,
    *,
    stored_now: Sequence[StoredMemory] = (),
    budget_tokens: int = 1500,
    nonce: str | None = None,
) -> MemoryBlock:
    """Render recalled memories as a fenced data block within `budget_tokens`. The lines kept
    are chosen by their value to this message (`_candidates`), best first while they fit; the
    block shows them grouped by section, best first within each."""
    nonce = nonce or secrets.token_hex(4)
    titles, candidates = _candidates(context, stored_now)
    head, tail = f"<<<MEMORY {nonce}>>>", f"<<<END MEMORY {nonce}>>>"
    # Room for the fence and the notes, so the whole block stays within the budget; each line
    # is counted with its line break (a token of its own for the model).
    used = sum(
        estimate_tokens(t + "\n") for t in (head, tail, _omitted(len(candidates)), NO_MEMORY_NOTE)
    )
    kept: list[tuple[_Candidate, str]] = []  # best first: (candidate, the line it shows)
    titled: set[int] = set()
    for cand in sorted(candidates, key=lambda c: -c.value):  # stable: ties keep block order
        short = cand.lines[-1]
        cost = estimate_tokens(short + "\n")
        if cand.section not in titled:
            cost += estimate_tokens(titles[cand.section] + "\n")
        if used + cost <= budget_tokens:
            kept.append((cand, short))
            titled.add(cand.section)
            used += cost
    upgraded: list[int] = []  # lines now showing their reply, best first
    for i, (cand, short) in enumerate(kept):  # best first, while the room left holds them
        if len(cand.lines) > 1:
            extra = estimate_tokens(cand.lines[0] + "\n") - estimate_tokens(short + "\n")
            if used + extra <= budget_tokens:
                kept[i] = (cand, cand.lines[0])
                upgraded.append(i)
                used += extra
    omitted = len(candidates) - len(kept)
    block = _assemble(head, tail, titles, kept, omitted, nonce)
    while block.tokens > budget_tokens and upgraded:  # rounding: a reply goes before a line
        i = upgraded.pop()
        kept[i] = (kept[i][0], kept[i][0].lines[-1])
        block = _assemble(head, tail, titles, kept, omitted, nonce)
    while block.tokens > budget_tokens and kept:  # rounding: drop the least valuable line
        kept.pop()
        omitted += 1
        block = _assemble(head, tail, titles, kept, omitted, nonce)
    return block


def _candidates(
    context: MemoryContext, stored_now: Sequence[StoredMemory]
) -> tuple[list[str], list[_Candidate]]:
    """The block's section titles, in reading order, and every line it may hold with its value
    to this message: the memories stored from the message first (the model must not store them
    again), recalled memories by their score (the probability that the message needs them),
    the conversation summary at `SUMMARY_VALUE`, a tool pattern by how closely it matches times
    its confidence. The user profile comes first and is always kept (`profile_lines` fits it
    to its own cap); searched memories do not repeat its lines."""
    titles: list[str] = []
    out: list[_Candidate] = []

    def section(name: str, lines: list[tuple[float, tuple[str, ...]]]) -> None:
        if lines:
            out.extend(_Candidate(len(titles), value, texts) for value, texts in lines)
            titles.append(SECTION_TITLES[name])

    replaced = {m.superseded_id for m in stored_now if m.superseded_id}  # as without_replaced
    profile = profile_lines([p for p in context.profile if p.id not in replaced])
    section("profile", [(math.inf, (line,)) for _, line in profile])
    in_profile = {mid for mid, _ in profile}
    section(
        "stored",
        [
            (math.inf, (f"- [stored/{label(m.event_type or m.memory_type)}] {neutralise(m.text)}",))
            for m in stored_now
        ],
    )
    summary = context.session_summary
    if summary is not None:
        section("summary", [(SUMMARY_VALUE, (_hit_line(summary, "summary of this conversation"),))])
    carried = in_history(context)
    episodic = [
        h
        for h in without_replaced(context.episodic, stored_now)
        if (summary is None or h.id != summary.id) and h.id not in in_profile and not carried(h)
    ]
    section("episodic", [(h.score, episodic_lines(h, context.query)) for h in episodic])
    section("semantic", [(h.score, (_hit_line(h, _semantic_label(h)),)) for h in context.semantic])
    proc = context.procedural
    if proc is not None and proc.tool_sequence:
        seq = " -> ".join(proc.tool_sequence)
        desc = (
            f"for questions like {proc.query_pattern!r} the tool sequence {seq} worked "
            f"before (confidence {proc.confidence:.2f}, {proc.executions} runs"
            + (", recommended" if proc.recommended else ", not yet recommended")
            + ")"
        )
        section(
            "procedural",
            [(proc.similarity * proc.confidence, (f"- [procedural] {neutralise(desc)}",))],
        )
    return titles, out


def in_history(context: MemoryContext) -> Callable[[RecallHit], bool]:
    """Whether a hit is an exchange of this chat whose message the prompt's history already
    carries (`context.short_term`): its line would spend the block's room on words sent
    anyway (a dinner question's allergy lost its place to the chat's own earlier questions)."""
    said = {m.content.strip() for m in context.short_term if m.role == "user"}

    def carried(hit: RecallHit) -> bool:
        record = hit.record
        return (
            record.get("event_type") == "interaction"
            and record.get("session_id") == context.session_id
            and hit.text.strip() in said
        )

    return carried


def _assemble(
    head: str,
    tail: str,
    titles: Sequence[str],
    kept: Sequence[tuple[_Candidate, str]],
    omitted: int,
    nonce: str,
) -> MemoryBlock:
    """The block with the kept lines grouped under their section titles, in reading order."""
    out = [head]
    for section, title in enumerate(titles):
        lines = [line for cand, line in kept if cand.section == section]
        if lines:
            out.append(title)
            out.extend(lines)
    if not kept:
        out.append(NO_MEMORY_NOTE)
    if omitted:
        out.append(_omitted(omitted))
    out.append(tail)
    text = "\n".join(out)
    profile = [line for cand, line in kept if titles[cand.section] == PROFILE_TITLE]
    return MemoryBlock(
        text=text,
        nonce=nonce,
        lines=len(kept),
        omitted=omitted,
        tokens=estimate_tokens(text),
        profile_tokens=_profile_cost(profile),
    )


def _omitted(n: int) -> str:
    return f"({n} more memories omitted to fit the token budget)"
