"""The "Execution details" expander under each answer: why the agent answered as it did, from
the turn's `TurnResult` (its tabs: docs/app.md, "Chat"). Text from users, memories and models
is shown escaped (`md_text`), image-free (`no_images`) or in `st.code`, never as markup."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import streamlit as st

from agent.prompt import SECTION_TITLES, BlockLine, neutralise, read_block, unfenced
from agent.replies import answer_hits, in_prompt, is_conversation
from agent.speed import speed_text
from agent.types import BudgetSplit, StoredMemory, ToolCallRecord, TurnResult, WindowReport
from memory import words
from memory.models import (
    BAND_HIGH,
    BAND_MODERATE,
    MemoryContext,
    ProceduralSuggestion,
    RecallHit,
)
from ui.format import (
    about_words,
    band_badge,
    event_label,
    fmt_day,
    fmt_duration,
    md_text,
    no_images,
    plain_text,
    type_label,
)

if TYPE_CHECKING:  # pandas is imported where a table is built: not for the first page
    import pandas as pd
#: How many memories the lead line names (the rest are counted).
LEAD_NAMED = 4
#: Words of a memory the lead line quotes (cut at a word, with "…").
LEAD_CHARS = 40


DANGLING = frozenset("a an and at by for from in my of on or the to with".split())


def short(text: str, n: int = LEAD_CHARS) -> str:
    """The start of a memory's text, cut at a word boundary."""
    words = " ".join(text.split())
    if len(words) <= n:
        return words
    kept = (words[:n].rsplit(" ", 1)[0] or words[:n]).split(" ")
    while len(kept) > 1 and kept[-1].lower().strip(",;:.") in DANGLING:
        kept.pop()  # "…for a half marathon in…" reads better without the "in"
    return " ".join(kept).rstrip(",;:.") + "…"


def used(r: TurnResult) -> tuple[list[RecallHit], list[RecallHit]]:
    """The episodic and semantic memories the answer used: those that reached the model, or
    those a memory-only answer listed (agent.replies.answer_hits)."""
    rec = r.recalled
    if r.mode != "memory-only":
        return in_prompt(r.memory_block, rec.episodic), in_prompt(r.memory_block, rec.semantic)
    listed = answer_hits(rec, r.stored)
    episodic = [h for h in listed if h.memory_type == "episodic"]
    return episodic, [h for h in listed if h.memory_type != "episodic"]


def used_ids(r: TurnResult) -> set[str]:
    """Ids of the memories the answer used (`used`)."""
    episodic, facts = used(r)
    return {h.id for h in (*episodic, *facts)}


def _memories(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def lead_line(r: TurnResult) -> str:
    """One plain sentence: which of the user's memories the answer used (markdown, escaped).
    The user's earlier questions it recalled are counted apart: they are no memory of them."""
    rec = r.recalled
    episodic, facts = used(r)
    about = [h for h in episodic if not is_conversation(h)]
    talks = len(episodic) - len(about)
    recalled_about = [h for h in rec.episodic if not is_conversation(h)]
    if about:
        n = len(about)
        named = ", ".join(f"“{md_text(short(h.text))}”" for h in about[:LEAD_NAMED])
        more = f" and {n - LEAD_NAMED} more" if n > LEAD_NAMED else ""
        line = f"Used {n} thing{'' if n == 1 else 's'} I know about you: {named}{more}"
    elif talks or r.mode == "memory-only" or not recalled_about:
        line = "Used nothing I know about you"
    else:
        n = len(recalled_about)
        line = (
            f"Checked {n} thing{'' if n == 1 else 's'} about you, but none fitted into the prompt"
        )
    extra = []
    if talks:
        extra.append(f"{talks} earlier conversation{'' if talks == 1 else 's'}")
    if facts:
        extra.append(f"{len(facts)} general fact{'' if len(facts) == 1 else 's'}")
    proc = rec.procedural
    if proc is not None and proc.tool_sequence:
        extra.append(f"a habit it learned ({md_text(words.tools_words(proc.tool_sequence))})")
    if extra:
        line += "; also " + " and ".join(extra)
    line += "."
    if r.private == "incognito":
        line = "Incognito: nothing was recalled from your memory and nothing was stored."
    elif r.private == "re-answer":
        line += " Answered again without the memories you picked; nothing was stored."
    if r.stopped:
        line += " You stopped this answer: nothing was learned from it."
    n = len(r.held_back)
    held = f" ({n} weak match{'es' * (n != 1)} held back)" if n else ""
    if r.unknown_about_user and r.private == "incognito":
        if r.mode == "llm":  # without a model nobody was told anything
            line += " The model was told it knows nothing about you here, so it will not guess."
    elif r.unknown_about_user:
        line += " I don't know you on this: nothing I remember about you was more than a weak match"
        told = ", so the model was told to say so instead of guessing" if r.mode == "llm" else ""
        line += f"{told}{held}."
    return line


def summary_line(r: TurnResult) -> str:
    """One line above the tabs: mode, model, what was recalled, total time."""
    rec = r.recalled
    parts: list[str] = []
    if r.mode == "llm":
        parts.append(f"🤖 {md_text(r.model or 'the model')}")
    else:
        parts.append("📴 memory-only")
    found = {
        "episodic": len(rec.episodic),
        "semantic": len(rec.semantic),
        "procedural": int(rec.procedural is not None),
        "short_term": len(rec.short_term),
    }
    counts = [words.counted_words(n, mtype) for mtype, n in found.items() if n]
    parts.append("looked through " + (", ".join(counts) if counts else "nothing"))
    if rec.episodic or rec.semantic:
        parts.append(f"used {len(used_ids(r)) or 'none'} of the memories")
    if r.tools:
        parts.append(f"used {len(r.tools)} tool{'s' * (len(r.tools) != 1)}")
    if r.stored:
        parts.append(f"remembered {len(r.stored)} new thing{'s' * (len(r.stored) != 1)}")
    if r.window.notes:
        parts.append("📏 see the window note")
    total = r.timings_ms.get("total")  # the agent's whole turn
    if total is not None:
        parts.append(f"⏱ {fmt_duration(total)}")
    return " · ".join(parts)


def status_label(r: TurnResult) -> str:
    """The label the answer's status box ends with (the same after a rerun or a reload):
    `Checked 14 memories, used 5`: what recall brought, and what the answer used of it."""
    checked = len(r.recalled.episodic) + len(r.recalled.semantic)
    label = f"Checked {_memories(checked)}, used {len(used_ids(r)) or 'none'}"
    label = label if checked else "No memory checked"
    if r.tools:
        label += f" · {len(r.tools)} tool call(s)"
    if r.tokens_per_s is not None:
        label += f" · {speed_text(r.tokens_per_s)}"
    if r.limits:
        label += " · ✂️ cut short"
    return label


def limit_lines(r: TurnResult) -> list[str]:
    """The status box's lines for what a cap or time limit cut, each saying what to do."""
    return [f"✂️ {no_images(limit)}" for limit in r.limits]


def render_status(r: TurnResult) -> None:
    """The finished status box of an earlier answer: its label, folded, with the tool calls
    and what was stored, as it stood when the answer was given."""
    box = st.status(status_label(r), state="error" if r.error else "complete", expanded=False)
    for t in r.tools:
        box.write(tool_line(t))
    for m in r.stored:
        box.write(f"💾 {md_text(m.text)}")
    for line in limit_lines(r):
        box.write(line)


def without_forgotten(r: TurnResult, forgotten: Collection[str]) -> TurnResult:
    """The details once *Forget this* or a delete took back memories (`forgotten`: their ids):
    one the turn stored leaves what it stored and the memory block (its line under "stored
    from the current message", and a title left with nothing under it); one it recalled
    stays in the Recalled list and the block (the exact one too) marked as forgotten, without
    its text."""
    gone = {unfenced(m.text) for m in r.stored if m.id in forgotten}
    recalled_gone = {unfenced(h.text) for h in r.recalled.episodic if h.id in forgotten}
    if not gone and not recalled_gone:
        return r
    lines = []
    for raw in r.memory_block.splitlines():
        read = read_block(raw)
        if read and read[0].label.startswith("stored/") and read[0].text in gone:
            continue
        if read and read[0].kind == "memory" and read[0].text in recalled_gone:
            raw = f"- [{read[0].label}] {neutralise(words.FORGOTTEN_TEXT)} ({read[0].note})"
        lines.append(raw)
    after = [read_block(raw) for raw in [*lines[1:], ""]]  # the line after each, read
    kept = [  # a title stays while a line of its own follows (not the fence, not a title)
        raw
        for raw, nxt in zip(lines, after, strict=True)
        if not (read := read_block(raw))
        or read[0].kind != "title"
        or (bool(nxt) and nxt[0].kind != "title")
    ]
    recalled = r.recalled.model_copy(
        update={
            "episodic": [forgotten_hit(h) if h.id in forgotten else h for h in r.recalled.episodic]
        }
    )
    return r.model_copy(
        update={
            "stored": [m for m in r.stored if m.id not in forgotten],
            "memory_block": "\n".join(kept),
            "recalled": recalled,
        }
    )


def forgotten_hit(h: RecallHit) -> RecallHit:
    """A recalled memory forgotten since: its kind and date kept, its text and reply not."""
    record = {k: h.record[k] for k in ("event_type", "timestamp") if k in h.record}
    return h.model_copy(update={"text": words.FORGOTTEN_TEXT, "record": record})


def render_details(r: TurnResult, *, key: str, forgotten: Collection[str] = ()) -> None:
    """`forgotten`: ids of memories the turn stored or recalled that were forgotten since
    (shown without their text, `without_forgotten`)."""
    n_forgotten = sum(m.id in forgotten for m in r.stored)
    n_unrecalled = sum(h.id in forgotten for h in r.recalled.episodic)
    r = without_forgotten(r, forgotten)
    tools, stored, thinking = r.tools, r.stored, r.thinking
    with st.expander("🔍 Execution details"):
        st.markdown(lead_line(r))
        st.caption(summary_line(r))
        if r.error:
            st.warning(no_images(r.error), icon="⚠️")
        for note in r.window.notes:
            st.warning(no_images(note), icon="📏")
        if r.masked:  # stored as a label instead of as typed (secrets, PII_POLICY)
            said = f"Stored without your {', '.join(r.masked)}: each was replaced by a label."
            st.info(md_text(said), icon="🔒")
        names = ["Recalled", f"Tools ({len(tools)})", f"Stored ({len(stored)})", "Prompt"]
        names += ["⚙️ Advanced", *(["💭 Thoughts"] if thinking else [])]
        tabs = st.tabs(names)
        with tabs[0]:
            if n_unrecalled:
                st.caption(f"Forgotten since: {_memories(n_unrecalled)} this answer recalled.")
            _recalled(r.recalled, used_ids(r), incognito=r.private == "incognito")
            if held := r.held_back:  # kept out of the prompt for a question about the user
                st.markdown(
                    f"**Held back** · {len(held)} too weak to use (weaker than a possible match):"
                )
                for h in held:
                    st.markdown(_hit_line(h))
        with tabs[1]:
            _tools(tools)
        with tabs[2]:
            if n_forgotten:
                st.caption(f"Forgotten since: {_memories(n_forgotten)} this answer stored.")
            _stored(stored, r.extraction, r.recalled, forgotten=n_forgotten)
        with tabs[3]:
            _prompt(r)
            _window(r.window, key)
        with tabs[4]:
            _advanced(r, key)
        if thinking:
            with tabs[5]:
                st.caption(
                    "The model's thoughts before it answered. They are never stored, replayed "
                    "as history, summarised or used for memories."
                )
                st.code(thinking, language=None, wrap_lines=True)


BUDGET_PARTS = (
    ("rules", "Rules and notes"),
    ("tools", "Tool schemas"),
    ("profile", "User profile"),
    ("memories", "Memories"),
    ("history", "Earlier messages"),
    ("message", "Your message"),
    ("tool_results", "Tool calls and results"),
    ("reply", "Kept for the answer"),
)


def budget_frame(split: BudgetSplit) -> pd.DataFrame:
    """The window of the last request, part by part (estimated tokens, shown as about as many
    words: `about_words`)."""
    import pandas as pd

    num_ctx = split.num_ctx
    parts = [(label, int(getattr(split, k))) for k, label in BUDGET_PARTS]
    parts = [(label, n) for label, n in parts if n]
    parts.append(("Template and free", max(0, num_ctx - sum(n for _, n in parts))))
    rows = [
        {"Part": label, "Words": about_words(n), "Share": n / num_ctx if num_ctx else 0.0}
        for label, n in parts
    ]
    return pd.DataFrame(rows)


def _window(w: WindowReport, key: str) -> None:
    split = w.split
    if split is None:
        return
    st.markdown(
        f"**What the model could read at once**: about {about_words(split.num_ctx):,} words"
    )
    st.dataframe(
        budget_frame(split),
        hide_index=True,
        key=f"det_{key}_window",
        column_config={
            "Words": st.column_config.NumberColumn("About how many words"),
            "Share": st.column_config.ProgressColumn(
                "Share of what it could read", min_value=0.0, max_value=1.0, format="percent"
            ),
        },
    )
    facts = []
    why = (
        "to fit"
        if split.read_cap is None
        else "so that the slow model reads the prompt in the time an answer may take"
    )
    if split.history_dropped:
        facts.append(f"{split.history_dropped} older message(s) left out {why}")
    if split.memories_omitted:
        facts.append(f"{split.memories_omitted} memories left out {why}")
    if split.tools_left_out:
        facts.append(f"{split.tools_left_out} tool(s) not offered, so memories keep room")
    count = w.prompt_eval_count
    facts.append(
        f"the model server read about {about_words(count):,} words of the prompt"
        if count is not None
        else "the model server did not say how much of the prompt it read"
    )
    if w.done_reason:
        facts.append(ENDED.get(w.done_reason, f"the answer ended ({md_text(w.done_reason)})"))
    st.caption("Estimated, counted to err high: " + "; ".join(facts) + ".")


#: Why the model stopped writing (Ollama's `done_reason`), in words.
ENDED = {
    "stop": "the answer ended where the model finished it",
    "length": "the answer was cut: it reached its length limit",
}


#: A recall score's parts (`RecallHit.parts`) by the Advanced table's column
SCORE_PARTS = {"Vector": "vector", "Keywords": "text", "Recency": "recency",
               "Importance": "importance", "Date": "time", "Preference": "stated",
               "Your fact": "own", "Neighbour": "neighbour"}  # fmt: skip


def hits_frame(hits: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        {
            # how relevant first: on a phone the wide text pushed them past the edge
            "Band": band_badge(h.get("band", "")),
            "Score": float(h.get("score") or 0.0),
            "Memory": plain_text(h.get("text")),
            **{col: float((h.get("parts") or {}).get(p) or 0.0) for col, p in SCORE_PARTS.items()},
        }
        for h in hits
    )


HIT_COLUMNS = {
    "Memory": st.column_config.TextColumn(width="large"),
    "Score": st.column_config.ProgressColumn(
        min_value=0.0,
        max_value=1.0,
        format="%.2f",
        help="Probability that the memory is relevant (fitted model)",
        width="small",
    ),
    "Band": st.column_config.TextColumn(
        "How relevant",
        help=f"{words.band_word('high')} ≥ {BAND_HIGH} · {words.band_word('moderate')} ≥ "
        f"{BAND_MODERATE} · {words.band_word('low')} below",
        width="medium",
    ),
    "Vector": st.column_config.NumberColumn(
        "Meaning", format="%.2f", help="How close in meaning, from 0 to 1"
    ),
    "Keywords": st.column_config.NumberColumn(
        "Words",
        format="%.2f",
        help="Share of the question's words the memory holds, rare words weighing more",
    ),
    "Recency": st.column_config.NumberColumn(
        "Recency", format="%.2f", help="Recency: decays with age"
    ),
    "Importance": st.column_config.NumberColumn("Importance", format="%.2f", help="Importance"),
    "Date": st.column_config.NumberColumn(
        "Date match", format="%.0f", help="1 when dated inside a date the question names"
    ),
    "Preference": st.column_config.NumberColumn(
        "Preference",
        format="%.2f",
        help="For a request for advice or a question about your tastes: how likely the memory "
        "states a preference or constraint of yours (0 for other messages)",
    ),
    "Your fact": st.column_config.NumberColumn(
        "Your fact",
        format="%.0f",
        help="1 when the message asks for advice, a recommendation or a plan and the memory is "
        "one of your own facts (a preference, goal, health event...), not a logged exchange",
    ),
    "Neighbour": st.column_config.NumberColumn(
        "Neighbour",
        format="%.2f",
        help="Own probability (before neighbours) of the best strong hit this memory sits "
        "next to in its chat; it adds to the memory's own evidence",
    ),
}


def _hit_line(h: RecallHit, mark: str = "", why: str = "") -> str:
    """A recalled memory's text, then under it whether it was used, how well it matched, why,
    what kind it is and when."""
    rec = h.record
    kind = rec.get("event_type") or rec.get("category") or ""
    when = "" if built_in(h) else fmt_day(rec.get("timestamp"))
    about = (event_label(str(kind)) if kind else "", f"from {when}" if when else "")
    meta = " · ".join(x for x in (mark, band_badge(h.band), why, *map(md_text, about)) if x)
    return f"- {md_text(h.text)}  \n  :gray[{meta}]"


#: The signals "why" names, in words (their numbers are the Advanced tab's columns).
WHY_SIGNALS = (("vector", "similar meaning"), ("text", "your words"), ("recency", "recent"),
               ("importance", "important"))  # fmt: skip
#: How many signals "why" names, strongest first.
WHY_NAMED = 2


def built_in(h: RecallHit) -> bool:
    """A fact of the knowledge file: its date is the day it was loaded, not the fact's, so no
    screen dates it or calls it recent (recall still scores its recency)."""
    return h.memory_type == "semantic" and "added_by" in h.record and not h.record["added_by"]


def why_words(h: RecallHit) -> str:
    """The strongest signals of a hit's score, in words (`similar meaning, recent`)."""
    parts = h.parts.model_dump()
    signals = [s for s in WHY_SIGNALS if not (s[0] == "recency" and built_in(h))]
    named = [(name, float(parts.get(field) or 0.0)) for field, name in signals]
    ranked = [name for name, v in sorted(named, key=lambda p: -p[1]) if v > 0]
    return ", ".join(ranked[:WHY_NAMED])


#: How a memory of the Recalled tab was used by the answer.
USED_MARK, UNUSED_MARK = "✅ used in this answer", "checked, not used"


def _recalled(rec: MemoryContext, used: set[str], *, incognito: bool = False) -> None:
    """The memories recall checked, each marked with whether the answer used it (a band says
    how well it matched, not that the answer used it)."""
    anything = False
    for mtype, found in (("episodic", rec.episodic), ("semantic", rec.semantic)):
        if not found:
            continue
        anything = True
        n = sum(h.id in used for h in found)
        st.markdown(f"**{type_label(mtype)}** · {len(found)} checked, {n or 'none'} used")
        for h in found:
            why = why_words(h)
            mark = USED_MARK if h.id in used else UNUSED_MARK
            st.markdown(_hit_line(h, mark, why and f"why: {why}"))
    proc = rec.procedural
    if proc is not None:
        anything = True
        st.markdown(f"**{type_label('procedural')}** · {way_of_working(proc)}")
        st.progress(min(max(float(proc.confidence), 0.0), 1.0))
    recent = rec.short_term
    if recent:
        anything = True
        st.markdown(
            f"**{type_label('short_term')}** · {len(recent)} recent messages of this chat "
            "were in context"
        )
    if not anything and incognito:
        st.caption(
            "Incognito: your memory was not searched, and nothing you say here is kept. "
            "Switch incognito off for answers that use what the agent knows about you."
        )
    elif not anything:
        st.caption(
            "Nothing was recalled above the relevance threshold (or auto-recall is switched "
            "off in the sidebar). Tell the agent about yourself and ask again."
        )


def _tools(tools: list[ToolCallRecord]) -> None:
    if not tools:
        st.caption("No tools were called for this answer.")
        return
    for t in tools:
        status = "❌" if t.error else ("∅" if t.empty else "✅")
        st.markdown(f"{status} **{tool_title(t.name)}** · {fmt_duration(t.ms)}")
        c1, c2 = st.columns(2)
        with c1:
            st.caption("Arguments")
            st.json(t.arguments or {}, expanded=1)
        with c2:
            if t.error:
                st.caption("Error")
                st.markdown(f":red[{md_text(t.error)}]")
            else:
                st.caption("Result")
                result = t.result
                if isinstance(result, dict | list):
                    st.json(result, expanded=1)
                else:
                    st.code(str(result), language=None, wrap_lines=True)


#: What learning from a message came to (`TurnResult.extraction`), in words.
LEARNING_WORDS = {
    "pending": "under way",
    "skipped (offline)": "not without a model (what you ask me to remember, and #tags, are kept)",
    "skipped (disabled)": "turned off",
    "skipped (nothing is stored)": "none, nothing is stored for this answer",
    "skipped (nothing personal)": "nothing about you in it",
}


def _stored(
    stored: list[StoredMemory], extraction: str, recalled: MemoryContext, *, forgotten: int = 0
) -> None:
    # The memory a new one replaced is usually among this turn's recalled hits: name it by
    # its text rather than its id.
    known = {h.id: h.text for h in recalled.episodic}
    if not stored and not forgotten:
        st.caption("Nothing new was stored by this turn (besides the chat history).")
    for m in stored:
        kind = event_label(m.event_type) if m.event_type else ""
        how = f"remembered {words.how_words(m.how)}" if m.how else ""
        meta = " · ".join(x for x in (type_label(m.memory_type), kind, how) if x)
        line = f"💾 {md_text(m.text)}  \n:gray[{md_text(meta)}]"
        if m.superseded_id:
            old = known.get(m.superseded_id)
            what = f"“{md_text(old)}”" if old else "an earlier memory"
            line += f"  \n:orange[replaces {what} (kept as history)]"
        st.markdown(line)
    if extraction:
        said = LEARNING_WORDS.get(extraction, extraction)
        st.caption(f"Learning from this message: {no_images(said)}")


def prompt_markdown(
    lines: list[BlockLine],
    procedural: ProceduralSuggestion | None = None,
    undated: Collection[str] = (),
) -> str:
    """The memory block for a person: section titles, then each memory's text with its kind
    and date, and what the assistant answered to a logged exchange (every text escaped), all
    in words (`procedural`: the learned way of working its line describes; `undated`: the
    texts, as in the block, of built-in facts, whose date is left out)."""
    out: list[str] = []
    for line in lines:
        if line.kind == "title":
            out.append(f"\n**{TITLE_WORDS.get(line.text) or md_text(line.text)}**\n")
        elif line.kind == "memory":
            said = md_text(line.text)
            if line.label == "procedural":
                said = way_of_working(procedural)
            meta = " · ".join(
                md_text(x)
                for x in (label_words(line.label), *note_words(line.note, line.text not in undated))
                if x
            )
            answered = f"  \n  ↳ answered: {md_text(line.reply)}" if line.reply else ""
            out.append(f"- {said}{answered}" + (f"  \n  :gray[{meta}]" if meta else ""))
        else:
            said = OMITTED.sub(r"(\1 more memories left out: they did not fit)", line.text)
            out.append(f"\n:gray[{md_text(said)}]\n")
    return "\n".join(out).strip()


#: The block's note of the lines that did not fit, said in words by `prompt_markdown`
OMITTED = re.compile(r"^\((\d+) more memories omitted to fit the token budget\)$")
#: The block's section titles (written for a model, as read back), as a person reads them.
TITLE_WORDS = {
    title.removesuffix(":"): words.table().block_sections[name]
    for name, title in SECTION_TITLES.items()
}


def note_words(note: str, dated: bool = True) -> list[str]:
    """A memory line's note (`high, 26 Nov 2026`): its band in words, then its date (not
    `dated`: the band alone)."""
    parts = [p.strip() for p in note.split(",") if p.strip()]
    if not dated:
        parts = [p for p in parts if p in words.table().bands]
    return [words.band_word(p) if p in words.table().bands else p for p in parts]


def way_of_working(proc: ProceduralSuggestion | None) -> str:
    """A learned tool sequence as the Prompt tab says it (markdown: the pattern escaped)."""
    if proc is None:
        return "A way of working I learned for questions like this one"
    tools = words.tools_words(proc.tool_sequence) or "used no tools"
    trusted = "recommended" if proc.recommended else "not yet trusted"
    return (
        f"For a question like “{md_text(proc.query_pattern)}” I {tools}: "
        f"{proc.confidence:.0%} sure after {proc.executions} "
        f"run{'s' * (proc.executions != 1)}, {trusted}"
    )


#: A block label's section (`profile/goal`), in words.
LABEL_SECTIONS = {"profile": "always kept in mind", "stored": "just remembered", "semantic": "fact"}


def label_words(label: str) -> str:
    """A memory's label in the block, in words: `profile/health_event` → `Health event
    (always kept in mind)`, `semantic/training` → `Training (fact)`."""
    section, _, name = label.rpartition("/")
    if not section and name in words.table().memory_types:
        return type_label(name, with_icon=False)
    word = name.capitalize() if section == "semantic" else words.kind_word(name)
    return f"{word} ({LABEL_SECTIONS.get(section, section)})" if section else word


def tool_line(t: ToolCallRecord) -> str:
    """A tool call's line in the status box, as it streams and after a rerun."""
    return f"{'❌' if t.error else '🔧'} {tool_title(t.name)} · {fmt_duration(t.ms)}"


def tool_title(name: str) -> str:
    """A tool call's title: what it did, capitalised (`Looked up your workouts`)."""
    said = words.tool_words(name)
    return md_text(said[:1].upper() + said[1:])


def _prompt(r: TurnResult) -> None:
    block, tokens = r.memory_block, r.memory_block_tokens
    if not block:
        st.caption("No memory was injected into the prompt.")
        return
    about = f" (about {about_words(tokens):,} words)" if tokens else ""
    given = (
        "No model answered this one: this is what a model would have been given"
        if r.mode == "memory-only"
        else "What the model was given"
    )
    st.caption(
        f"{given} as remembered data{about}, marked off so that it reads them as "
        "memories, not instructions. The exact text is below the list."
    )
    undated = {unfenced(h.text) for h in r.recalled.semantic if built_in(h)}
    st.markdown(prompt_markdown(read_block(block), r.recalled.procedural, undated))
    st.markdown(
        "**The memory block exactly as a model would read it**"
        if r.mode == "memory-only"
        else "**The memory block exactly as sent in the system prompt**"
    )
    st.code(block, language=None, wrap_lines=True)


def _advanced(r: TurnResult, key: str) -> None:
    """For engineers: the scores and their parts, the time per stage, the raw block."""
    st.markdown("**Scores of the recalled memories**")
    shown = False
    for mtype, found in (("episodic", r.recalled.episodic), ("semantic", r.recalled.semantic)):
        hits = [h.model_dump(mode="json") for h in found]
        if not hits:
            continue
        shown = True
        st.caption(type_label(mtype))
        st.dataframe(
            hits_frame(hits), hide_index=True, column_config=HIT_COLUMNS, key=f"det_{key}_{mtype}"
        )
    if not shown:
        st.caption("Nothing was recalled.")
    st.markdown("**Time per stage**")
    df = timings_frame(r)
    if df.empty:
        st.caption("No timings were recorded.")
        return
    st.dataframe(
        df,
        hide_index=True,
        key=f"det_{key}_timings",
        column_config={
            "Seconds": st.column_config.NumberColumn("Seconds", format="%.3f"),
            "Share": st.column_config.ProgressColumn(
                "Share of the turn", min_value=0.0, max_value=1.0, format="percent"
            ),
        },
    )


def stage_label(stage: str) -> str:
    """A timing stage in words (`recall: short_term` -> `Recall · recent messages`)."""
    if stage.startswith("recall: "):
        return "Recall · " + words.step_word(stage[len("recall: ") :])
    said = "recalling memories" if stage == "recall" else words.step_word(stage)
    return said[:1].upper() + said[1:]


def timings_frame(r: TurnResult) -> pd.DataFrame:
    """The time per stage: recall's steps, then the turn's, then the whole answer."""
    import pandas as pd

    timings = {f"recall: {k}": v for k, v in r.recalled.timings_ms.items()}
    timings.update((k, v) for k, v in r.timings_ms.items() if k != "total")
    total = r.timings_ms.get("total") or sum(
        v for k, v in timings.items() if not k.startswith("recall: ")
    )
    rows = [
        {"Stage": stage_label(k), "Seconds": v / 1000, "Share": (v / total if total else 0.0)}
        for k, v in timings.items()
    ]
    if total:
        rows.append({"Stage": "Whole answer", "Seconds": total / 1000, "Share": 1.0})
    return pd.DataFrame(rows)
