"""The last line of an answer that stored something: "💾 Remembered: …" with Edit and *Forget
this*, or what was masked. Read from the turn's details and each memory looked up again, so
it is the same after a reload and shows later edits."""

from __future__ import annotations

from typing import Any

import streamlit as st

from agent.types import TurnResult
from memory.errors import NotFoundError
from memory.service import MemoryService
from memory.writing import StoredMemory
from ui import state
from ui.context import PageContext
from ui.errors import guard, run_action
from ui.format import md_text, memory_text, snippet
from ui.row_actions import edit_fields

#: The answer's button that forgets what it remembered (not "Undo": that is a delete's).
FORGET = "Forget this"
#: How a stored memory came to be, for the ones a person would call "remembered".
NAMED_HOW = frozenset({"trigger", "llm", "tool", "user"})


def named(r: TurnResult) -> list[StoredMemory]:
    return [m for m in r.stored if m.how in NAMED_HOW and m.memory_type == "episodic"]


def forgotten(ctx: PageContext, r: TurnResult) -> set[str]:
    """Ids of the memories this answer remembered or recalled that are gone (*Forget this*, a
    delete), in one look-up."""
    ids = list(dict.fromkeys([*(m.id for m in named(r)), *(h.id for h in r.recalled.episodic)]))
    gone: set[str] = set()
    with guard("Reading what this answer stored"):
        gone = ctx.coordinator.gone_memories(ctx.user_id, ids) if ids else set()
    return gone


def masked_note(labels: list[str]) -> str:
    return f"🔒 stored without your {', '.join(labels)}"


def remembered_line(ctx: PageContext, r: TurnResult, key: str) -> None:
    """Draw the line (nothing when the turn stored nothing and masked nothing)."""
    if r.private:
        return
    items = named(r)
    if not items and not r.masked:
        return
    live: list[tuple[StoredMemory, str]] = []
    replaced: list[str] = []
    gone: list[StoredMemory] = []
    with guard("Reading what this answer stored"):
        for m in items:
            try:
                rec = ctx.coordinator.get_memory(ctx.user_id, "episodic", m.id)
            except NotFoundError:
                gone.append(m)
                continue
            live.append((m, memory_text(rec) or m.text))
    parts = []
    if live:
        parts.append("💾 Remembered: " + "; ".join(f"“{md_text(snippet(t, 90))}”" for _, t in live))
        replaced = [old_text(ctx, m) for m, _ in live if m.superseded_id]
        if any(replaced):
            parts.append("replaces " + "; ".join(f"“{md_text(t)}”" for t in replaced if t))
    if gone and not live:
        parts.append("Forgotten: not remembered any more")
    if r.masked:
        parts.append(md_text(masked_note(r.masked)))
    with st.container(key=f"remembered_{key}"):
        if not live:
            st.caption(" · ".join(parts))
            return
        c1, c2 = st.columns([6, 4], vertical_alignment="center", gap="small")
        c1.caption(" · ".join(parts))
        # one row at every width (columns stack below 640 px)
        row = c2.container(horizontal=True, wrap=False, vertical_alignment="center")
        with row.popover(
            "Edit",
            icon=":material/edit:",
            type="tertiary",
            help="Edit what was remembered",
            key=state.popover_key(f"rem_pop_{key}"),
        ):
            for m, text in live:
                edit_fields(
                    ctx,
                    "episodic",
                    {"id": m.id, "text": text},
                    f"rem_{key}_{m.id}",
                    f"rem_pop_{key}",
                    label="Remembered",
                    or_else=f"press {FORGET}",
                )
        row.button(
            FORGET,
            key=f"rem_undo_{key}",
            type="tertiary",
            help="Forget what this answer remembered"
            + (": the memory it replaced is recalled again" if any(replaced) else ""),
            on_click=_on_undo,
            args=(ctx.coordinator, ctx.user_id, [(m.id, m.superseded_id) for m, _ in live]),
        )


def old_text(ctx: PageContext, m: StoredMemory) -> str:
    """The words of the memory `m` replaced ("" when it cannot be read)."""
    try:
        rec = ctx.coordinator.get_memory(ctx.user_id, "episodic", str(m.superseded_id))
    except Exception:  # noqa: BLE001 - a name for the replaced memory is a nicety
        return ""
    return snippet(memory_text(rec), 60)


def _on_undo(coord: MemoryService, user_id: str, ids: list[tuple[str, Any]]) -> None:
    done = sum(
        int(run_action("Forgetting the memory", coord.history.undo_write, user_id, mid, old)[0])
        for mid, old in ids
    )
    if done:
        state.flash("Forgotten: that is not remembered any more.", "info")
