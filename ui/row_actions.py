"""The controls on one memory row of the sidebar's lists: edit, pin, pause, delete (with Undo),
one small function each, and the memory editor that answers and the profile use too. Every
change goes through the coordinator; every delete through ui/undo.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from memory.models import is_blank
from memory.service import MemoryService
from ui import state, undo
from ui.errors import run_action
from ui.format import (
    REMEMBERED_KINDS,
    event_label,
    md_text,
    memory_text,
    saved_message,
    snippet,
)
from ui.pause import pause_toggle

if TYPE_CHECKING:
    from ui.context import PageContext


def row_controls(ctx: PageContext, mtype: str, row: dict[str, Any], key: str) -> None:
    with st.container(horizontal=True, gap="small", key=f"{key}_actions"):
        _edit(ctx, mtype, row, key)
        _pin(ctx, mtype, row, key)
        pause_toggle(ctx, mtype, row, key)
        _delete(ctx, mtype, row, key)


def _edit(ctx: PageContext, mtype: str, row: dict[str, Any], key: str) -> None:
    with st.popover(
        "", icon=":material/edit:", help="Edit this memory", key=state.popover_key(f"{key}_edit")
    ):
        edit_fields(ctx, mtype, row, key, f"{key}_edit")


def edit_fields(
    ctx: PageContext,
    mtype: str,
    row: dict[str, Any],
    key: str,
    popover: str,
    *,
    label: str = "Memory",
    or_else: str = "delete it",
) -> None:
    """A memory's text (and kind, when it has one) and Save, inside a popover that saving
    closes: a row's ✏️, an answer's remembered line, a line of what I know about you."""
    st.text_area(label, value=memory_text(row), key=f"{key}_text", height=90)
    kind = str(row.get("event_type") or "")
    if mtype == "episodic" and kind in REMEMBERED_KINDS:
        st.selectbox(
            "Kind",
            REMEMBERED_KINDS,
            index=REMEMBERED_KINDS.index(kind),
            format_func=event_label,
            key=f"{key}_kind",
        )
    st.button(
        "Save",
        key=f"{key}_save",
        type="primary",
        on_click=_on_save,
        args=(ctx.coordinator, ctx.user_id, mtype, row, key, popover, or_else),
    )


def _on_save(
    coord: MemoryService,
    user_id: str,
    mtype: str,
    row: dict[str, Any],
    key: str,
    popover: str,
    or_else: str,
) -> None:
    ss = st.session_state
    text = str(ss.get(f"{key}_text") or "").strip()
    changes: dict[str, Any] = {"text": text} if text != memory_text(row) else {}
    kind = ss.get(f"{key}_kind")
    if kind and kind != row.get("event_type"):
        changes["event_type"] = kind
    if save_edit(coord, user_id, mtype, str(row["id"]), changes, or_else=or_else):
        state.close_popover(popover)


def save_edit(
    coord: MemoryService,
    user_id: str,
    mtype: str,
    memory_id: str,
    changes: dict[str, Any],
    *,
    or_else: str = "delete it",
    as_admin: bool = False,
) -> bool:
    """Every editor's save, from its callback: an emptied text is refused with a sentence
    (`or_else`: the other way out, since deleting is its own action), no change is said; True
    once saved (the caller closes its editor)."""
    if is_blank(changes.get("text", "-")):
        state.flash(
            f"The text cannot be empty: write what should be remembered, or {or_else}.", "warning"
        )
        return False
    if not changes:
        state.flash("Nothing changed.", "info")
        return False
    ok, rec = run_action(
        "Saving the memory", coord.update_memory, user_id, mtype, memory_id, as_admin, **changes
    )
    if ok:
        state.flash(saved_message(memory_text(rec), changes))
    return ok


def _pin(ctx: PageContext, mtype: str, row: dict[str, Any], key: str) -> None:
    pinned = bool(row.get("pinned"))  # records are decoded: a bool
    st.button(
        "",
        key=f"{key}_pin",
        # pinned: the filled (primary) pin; icon names are read aloud ("keep icon"), so
        # none with an underscore
        icon=":material/keep:",
        type="primary" if pinned else "secondary",
        help="Pinned: kept when memories are cleaned up. Click to unpin."
        if pinned
        else "Pin: keep it when memories are cleaned up",
        on_click=_on_pin,
        args=(ctx.coordinator, ctx.user_id, mtype, row, not pinned),
    )


def _on_pin(
    coord: MemoryService, user_id: str, mtype: str, row: dict[str, Any], pinned: bool
) -> None:
    ok, _ = run_action(
        "Pinning", coord.update_memory, user_id, mtype, str(row["id"]), pinned=pinned
    )
    if ok:
        what = md_text(snippet(memory_text(row), 60))
        state.flash(f"{'Pinned' if pinned else 'Unpinned'} “{what}”.")


def _delete(ctx: PageContext, mtype: str, row: dict[str, Any], key: str) -> None:
    st.button(
        "",
        key=f"{key}_del",
        icon=":material/delete:",
        help=f"Delete this memory (Undo is offered for {undo.UNDO_S:g} seconds)",
        on_click=undo.request_delete,
        args=(ctx.coordinator, ctx.user_id, [(mtype, str(row["id"]), memory_text(row))], "sidebar"),
    )
