"""Memories page: browse, filter, search, add, edit, delete, export and import memories, and
maintenance (merge proposals, last report, undo), and forgetting a topic."""

from __future__ import annotations

import streamlit as st

from memory import ListQuery
from ui.browse import episodic_tab, procedural_tab, semantic_tab, short_term_tab
from ui.errors import guard
from ui.forget import forget_tab
from ui.format import REMEMBERED_KINDS, TYPE_HELP, md_text, type_label
from ui.layout import page_setup
from ui.maintenance import maintenance_tab
from ui.manage import add_tab, cleanup_tab, search_tab, transfer_tab
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
    # Episodic: as the table shows it by default (logged exchanges are the conversation)
    counts = {
        t: ctx.coordinator.list_memories(
            ctx.user_id,
            t,
            ListQuery(page_size=1, event_types=REMEMBERED_KINDS if t == "episodic" else None),
        )[1]
        for t in ("episodic", "semantic", "procedural")
    }
    counts["short_term"] = len(ctx.coordinator.recent_messages(ctx.user_id, ctx.session_id, n=200))
    cols = st.columns(4)
    for col, (mtype, n) in zip(cols, counts.items(), strict=True):
        col.metric(type_label(mtype), n, help=TYPE_HELP[mtype], border=True)

tabs = st.tabs(
    [
        type_label("episodic"),
        type_label("semantic"),
        type_label("procedural"),
        type_label("short_term"),
        "🔎 Search",
        "➕ Add",
        "⇅ Import / export",
        "🧹 Clean up",
        "🩺 Maintenance",
        "🧹 Forget a topic",
    ]
)
for tab, render in zip(
    tabs,
    (
        episodic_tab,
        semantic_tab,
        procedural_tab,
        short_term_tab,
        search_tab,
        add_tab,
        transfer_tab,
        cleanup_tab,
        maintenance_tab,
        forget_tab,
    ),
    strict=True,
):
    with tab:
        render(ctx)
