"""Memories page: browse, filter, search, add, edit, delete, export and import memories, and
maintenance (merge proposals, last report, undo), and forgetting a topic."""

from __future__ import annotations

import streamlit as st

from ui import undo
from ui.browse import episodic_tab, procedural_tab, semantic_tab, short_term_tab
from ui.counts import counts_of
from ui.errors import guard
from ui.forget import forget_and_clear_tab
from ui.format import TYPE_HELP, md_text, type_label
from ui.layout import page_setup
from ui.maintenance import maintenance_tab
from ui.manage import add_tab, search_tab, transfer_tab
from ui.phone import tabs_wrap_when_narrow
from ui.user_profile import TITLE as PROFILE_TITLE
from ui.user_profile import user_profile_panel

ctx = page_setup("Memories", "🗂️")
st.title("🗂️ Memories")
st.caption(
    f"Everything the agent remembers about **{md_text(ctx.user_id)}**, by memory type. "
    "Select rows to edit, pin, pause or delete them; changes apply to the next answer."
)

# folded: open, the profile's lines would push the tables below the fold
with st.expander(f"🪪 {PROFILE_TITLE}", expanded=False):
    user_profile_panel(ctx, "page")

with guard("Counting memories"):
    # ui/counts.py: the same numbers the load's message and Stats give; like the tables, not
    # the memories whose delete waits for its Undo
    leaving_out = undo.pending_of(ctx.user_id)
    shown = counts_of(ctx.coordinator, ctx.user_id, leaving_out)
    counts = {
        "episodic": shown.memories,
        "semantic": shown.facts + shown.shared,
        "procedural": shown.procedures,
        "short_term": len(ctx.coordinator.recent_messages(ctx.user_id, ctx.session_id, n=200)),
    }
    tile_help = {
        **TYPE_HELP,
        "episodic": "What is remembered about you now. Not counted: the conversation itself "
        "(logged exchanges), replaced memories kept as history"
        + (f", {shown.paused} paused (kept, not used)" if shown.paused else ", paused ones")
        + ". The table below lists those too when asked.",
    }
    cols = st.columns(4)
    for col, (mtype, n) in zip(cols, counts.items(), strict=True):
        col.metric(type_label(mtype), n, help=tile_help[mtype], border=True)
    if shown.shared > 0:  # the load's message and Stats count only the facts the user added
        st.caption(
            f"{type_label('semantic')}: {shown.facts} fact{'s' * (shown.facts != 1)} "
            f"{md_text(ctx.user_id)} added and {shown.shared} built-in fact"
            f"{'s' * (shown.shared != 1)} every user shares."
        )

#: The tabs, each with what draws it
TABS = {
    type_label("episodic"): episodic_tab,
    type_label("semantic"): semantic_tab,
    type_label("procedural"): procedural_tab,
    type_label("short_term"): short_term_tab,
    "🔎 Search": search_tab,
    "➕ Add": add_tab,
    "⇅ Import / export": transfer_tab,
    "🩺 Maintenance": maintenance_tab,
    "🗑️ Forget": forget_and_clear_tab,
}
tabs_wrap_when_narrow()  # nine tabs are wider than a phone
for tab, render in zip(st.tabs(list(TABS)), TABS.values(), strict=True):
    with tab:
        render(ctx)
