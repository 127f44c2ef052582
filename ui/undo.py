"""The one delete model of the app: every delete of memories and every forget of a topic is
carried out only after a short undo window (`request_delete`/`offer`, `settle` on every run,
`notice_slot`); nothing is deleted while its Undo is on screen, and Undo only clears the mark."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
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
    return {memory_id for _, memory_id in p["items"]} if p else set()


def pending_of(user_id: str) -> list[tuple[str, str]]:
    """`(type, id)` of the user's memories whose delete waits: counts leave them out too."""
    p = pending()
    return list(p["items"]) if p is not None and p["user_id"] == user_id else []


def request_delete(
    coord: MemoryService,
    user_id: str,
    items: list[tuple[str, str, str]],
    origin: str,
    as_admin: bool = False,
) -> None:
    """Mark memories `(type, id, text)` for deletion; `origin`: where the Undo is offered."""
    what = f"“{md_text(snippet(items[0][2], 50))}”" if len(items) == 1 else f"{len(items)} memories"
    ids = [(t, i) for t, i, _ in items]
    run = partial(_delete, user_id, ids, as_admin)
    offer(coord, origin, f"🗑️ Deleted {what}", f"Kept {what}.", run, user_id=user_id, items=ids)


def offer(
    coord: MemoryService,
    origin: str,
    said: str,
    kept: str,
    run: Callable[[MemoryService], None],
    *,
    user_id: str = "",
    items: list[tuple[str, str]] | None = None,
) -> None:
    """Put `run` behind an Undo offered at `origin` (an earlier pending one is carried out
    first): `said` names it while Undo is offered, `kept` is said when Undo is clicked;
    `items`: the user's memories `(type, id)` it deletes, left out of lists meanwhile."""
    _carry_out(coord)
    st.session_state[KEY] = {
        "user_id": user_id,
        "items": list(items or []),
        "origin": origin,
        "said": said,
        "kept": kept,
        "run": run,
        "at": time.time(),
        "offered": False,  # set by the run that shows its Undo
    }


def undo() -> None:
    """Keep the memories: the Undo button's callback (it runs before `settle` could carry
    the delete out)."""
    p = pending()
    st.session_state[KEY] = None
    if p is not None:
        state.flash(p["kept"], "info")


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
    if p is not None:
        p["run"](coord)


def _delete(
    user_id: str, items: list[tuple[str, str]], as_admin: bool, coord: MemoryService
) -> None:
    for mtype, memory_id in items:
        run_action("Deleting the memory", coord.delete_memory, user_id, mtype, memory_id, as_admin)


def notice_slot(coord: MemoryService, origin: str) -> bool:
    """Where the Undo of an action asked for at `origin` shows; True while one waits. The
    container is always there (tabs after it keep their place, so the open tab stays open
    when the notice goes); the notice, redrawn every second, only while such an action waits."""
    slot = st.container()
    p = pending()
    if p is None or p["origin"] != origin:
        return False
    with slot:
        undo_notice(coord, origin)
    return True


@st.fragment(run_every=1.0)
def undo_notice(coord: MemoryService, origin: str) -> None:
    """The pending action asked for at `origin`, the seconds left and its Undo button; carried
    out when the window has passed. The button has a line of its own: beside the text it was
    cut short."""
    if st.session_state.get(f"undo_delete_{origin}"):  # Undo was clicked: memories kept
        st.rerun()  # the whole page: the memories are listed again
    p = pending()
    if p is None or p["origin"] != origin:
        return
    left = UNDO_S - (time.time() - float(p["at"]))
    if left <= 0:
        _carry_out(coord)
        st.rerun()  # the whole page: lists elsewhere may show the memory
    st.caption(f"{p['said']} · {math.ceil(left)} s to undo")
    st.button("Undo", key=f"undo_delete_{origin}", icon=":material/undo:", on_click=undo)
