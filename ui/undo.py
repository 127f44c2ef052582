"""A short undo window for the sidebar's 🗑️: the delete is carried out only afterwards.

    request_delete(...)   the 🗑️ callback: the memory is marked pending and hidden from the list
    settle(coord)         every run, in page_setup: a pending delete that was already offered
                          for undo is carried out now (the user moved on: any interaction)
    undo_notice(coord)    "Deleted “…” · Undo", redrawn every second by a fragment; after
                          UNDO_S seconds without a click the delete is carried out

A memory is never deleted while its Undo is on screen, and Undo only clears the mark: nothing
has to be restored. If the browser tab closes inside the window, the memory stays.
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from memory.service import MemoryService
from ui import state
from ui.errors import run_action
from ui.format import md_text, snippet

#: Seconds the Undo stays offered when nothing else happens.
UNDO_S = 8.0
KEY = "pending_delete"


def pending() -> dict[str, Any] | None:
    value = st.session_state.get(KEY)
    return value if isinstance(value, dict) else None


def pending_id() -> str | None:
    p = pending()
    return str(p["memory_id"]) if p else None


def request_delete(
    coord: MemoryService, user_id: str, mtype: str, memory_id: str, text: str
) -> None:
    """Mark one memory for deletion (an earlier pending one is carried out first)."""
    _carry_out(coord)
    st.session_state[KEY] = {
        "user_id": user_id,
        "mtype": mtype,
        "memory_id": memory_id,
        "text": text,
        "at": time.time(),
        "offered": False,  # set by the run that shows its Undo
    }


def undo() -> None:
    st.session_state[KEY] = None


def settle(coord: MemoryService) -> None:
    """Carry out a pending delete whose Undo was already offered; mark a new one offered."""
    p = pending()
    if p is None:
        return
    if p["offered"]:
        _carry_out(coord)
    else:
        p["offered"] = True


def _carry_out(coord: MemoryService) -> None:
    p = pending()
    st.session_state[KEY] = None
    if p is None:
        return
    # only the user's own memories are listed in the sidebar: no shared fact goes this way
    run_action("Deleting the memory", coord.delete_memory, p["user_id"], p["mtype"], p["memory_id"])


@st.fragment(run_every=1.0)
def undo_notice(coord: MemoryService) -> None:
    """The pending delete with its Undo button; carried out when the window has passed."""
    p = pending()
    if p is None:
        return
    if time.time() - float(p["at"]) >= UNDO_S:
        _carry_out(coord)
        st.rerun()  # the whole page: lists elsewhere may show the memory
    c1, c2 = st.columns([4, 2], vertical_alignment="center")
    c1.caption(f"🗑️ Deleted “{md_text(snippet(p['text'], 50))}”")
    if c2.button("Undo", key="sb_undo_delete", icon=":material/undo:"):
        undo()
        state.flash(f"Kept: {snippet(p['text'], 60)}", "info")
        st.rerun()  # the whole page: the memory is listed again
