"""The one delete model of the app: every delete of memories is carried out only after a short
undo window (`request_delete`, `settle` on every run, `notice_slot`); a memory is never deleted
while its Undo is on screen, and Undo only clears the mark."""

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


def pending_ids() -> set[str]:
    """Ids of the memories whose delete waits: lists leave them out while Undo is offered."""
    p = pending()
    return {str(i["memory_id"]) for i in p["items"]} if p else set()


def pending_of(user_id: str) -> list[tuple[str, str]]:
    """`(type, id)` of the user's memories whose delete waits: counts leave them out too."""
    p = pending()
    if p is None or p["user_id"] != user_id:
        return []
    return [(str(i["mtype"]), str(i["memory_id"])) for i in p["items"]]


def request_delete(
    coord: MemoryService,
    user_id: str,
    items: list[tuple[str, str, str]],
    origin: str,
    as_admin: bool = False,
) -> None:
    """Mark memories `(type, id, text)` for deletion (an earlier pending delete is carried out
    first); `origin`: where the Undo is offered (`undo_notice`)."""
    _carry_out(coord)
    st.session_state[KEY] = {
        "user_id": user_id,
        "items": [{"mtype": t, "memory_id": i, "text": x} for t, i, x in items],
        "as_admin": as_admin,
        "origin": origin,
        "at": time.time(),
        "offered": False,  # set by the run that shows its Undo
    }


def undo() -> None:
    """Keep the memories: the Undo button's callback (it runs before `settle` could carry
    the delete out)."""
    p = pending()
    st.session_state[KEY] = None
    if p is not None:
        state.flash(f"Kept {_what(p)}.", "info")


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
    for item in p["items"]:
        run_action(
            "Deleting the memory",
            coord.delete_memory,
            p["user_id"],
            item["mtype"],
            item["memory_id"],
            p["as_admin"],
        )


def _what(p: dict[str, Any]) -> str:
    items = p["items"]
    if len(items) == 1:
        return f"“{md_text(snippet(items[0]['text'], 50))}”"
    return f"{len(items)} memories"


def notice_slot(coord: MemoryService, origin: str) -> None:
    """Where the Undo of a delete asked for at `origin` shows. The container is always there
    (tabs after it keep their place, so the open tab stays open when the notice goes); the
    notice, redrawn every second, only while such a delete waits."""
    slot = st.container()
    p = pending()
    if p is not None and p["origin"] == origin:
        with slot:
            undo_notice(coord, origin)


@st.fragment(run_every=1.0)
def undo_notice(coord: MemoryService, origin: str) -> None:
    """The pending delete asked for at `origin`, with its Undo button; carried out when the
    window has passed. The button has a line of its own: beside the text it was cut short."""
    if st.session_state.get(f"undo_delete_{origin}"):  # Undo was clicked: memories kept
        st.rerun()  # the whole page: the memories are listed again
    p = pending()
    if p is None or p["origin"] != origin:
        return
    if time.time() - float(p["at"]) >= UNDO_S:
        _carry_out(coord)
        st.rerun()  # the whole page: lists elsewhere may show the memory
    st.caption(f"🗑️ Deleted {_what(p)}")
    st.button("Undo", key=f"undo_delete_{origin}", icon=":material/undo:", on_click=undo)
