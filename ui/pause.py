"""Pause and resume on episodic memories: a paused memory stays listed, exported and counted,
but is never recalled nor in the user profile until it is resumed."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memory.service import MemoryService
from ui import state
from ui.context import PageContext
from ui.errors import run_action


def pause_toggle(ctx: PageContext, mtype: str, row: dict[str, Any], key: str) -> None:
    """One memory's ⏸/▶ button (a sidebar row); only episodic memories pause."""
    if mtype != "episodic":
        return
    paused = bool(row.get("paused"))
    st.button(
        "",
        key=f"{key}_pause",
        icon="▶️" if paused else "⏸️",
        help="Resume: use this memory again"
        if paused
        else "Pause: keep this memory but do not use it until you resume it",
        on_click=_on_pause,
        args=(ctx.coordinator, ctx.user_id, [str(row["id"])], not paused),
    )


def pause_actions(place: Any, ctx: PageContext, ids: list[str]) -> None:
    """Pause / Resume for the rows ticked in the Memories page's episodic table."""
    for paused, label, icon in ((True, "Pause", "⏸️"), (False, "Resume", "▶️")):
        place.button(
            label,
            key=f"{label.lower()}_sel_episodic",
            icon=icon,
            on_click=_on_pause,
            args=(ctx.coordinator, ctx.user_id, ids, paused),
        )


def _on_pause(coord: MemoryService, user_id: str, ids: list[str], paused: bool) -> None:
    what = "Pausing" if paused else "Resuming"
    pause = coord.update_memory
    done = sum(int(run_action(what, pause, user_id, "episodic", i, paused=paused)[0]) for i in ids)
    if done:
        state.flash(f"{'Paused' if paused else 'Resumed'} {done}.")
