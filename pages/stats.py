"""Stats page: what the memory does, in plain words first (three tiles: what it remembers,
how many answers used it, how long recall takes), then the charts that have data. The
engineering detail (every stage's latency, hit rates per type, the cache, extraction,
maintenance) sits in expanders that run only when opened."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memory import ListQuery
from ui import charts, resources
from ui.errors import guard
from ui.format import fmt_duration, md_text
from ui.layout import page_setup
from ui.stats_details import cache_and_extraction, maintenance, recall_details, window_samples

WINDOWS = {
    "Last 15 minutes": 15 * 60,
    "Last hour": 3600,
    "Last 24 hours": 86400,
    "Last 7 days": 7 * 86400,
    "All time": None,
}

ctx = page_setup("Stats", "📊")
st.title("📊 Stats")
# Latency, hit rates, the cache, extraction and maintenance are measured over every user of the
# store: an admin's view (everyone is one without sign-in). A signed-in user sees their own.
store_wide = ctx.is_admin
window = "Last 24 hours"
st.session_state.setdefault("stats_reads", 0)  # bumped by Refresh: read the samples afresh
if store_wide:
    c1, c2, c3 = st.columns([4, 2, 1], vertical_alignment="bottom")
    c1.caption(
        "What the memory does: what it remembers, how many answers used it and how long "
        "recalling took. Details per stage and memory type are in the sections below."
    )
    window = c2.selectbox("Window", list(WINDOWS), index=2, key="stats_window")
    c3.button(
        "Refresh",
        key="stats_refresh",
        icon="🔄",
        use_container_width=True,
        on_click=lambda: st.session_state.update(stats_reads=st.session_state.stats_reads + 1),
    )
else:
    st.info(
        "How fast recall is and how often answers use memory are measured over every user of "
        "this store, so they are shown to admins only. Below: your own memories.",
        icon="🔒",
    )

# What is remembered about this user: their episodic memories, the facts they added and the
# procedures learned from their questions. Shared facts (the knowledge file's, and those an
# admin shared) are the same for every user: counted apart, never as the user's memories.
rows_by_type: dict[str, list[dict[str, Any]]] = {}
counts = {"episodic": 0, "semantic": 0, "procedural": 0}
built_in = 0
with guard("Counting memories"):
    for mtype in counts:
        added_by = ctx.user_id if mtype == "semantic" else None  # facts this user added
        rows, total = ctx.coordinator.list_memories(
            ctx.user_id, mtype, ListQuery(page_size=1000, added_by=added_by)
        )
        rows_by_type[mtype], counts[mtype] = rows, total
    _, recalled_facts = ctx.coordinator.list_memories(
        ctx.user_id, "semantic", ListQuery(page_size=1)
    )
    built_in = max(0, recalled_facts - counts["semantic"])

df = charts.samples_frame([])
if store_wide:
    with guard("Loading metrics"):
        store = f"{ctx.settings.redis_url} {ctx.settings.memory_namespace}"
        df = window_samples(ctx.coordinator, store, WINDOWS[window], st.session_state.stats_reads)
recall = charts.recall_samples(df)

tiles = st.columns(3 if store_wide else 1)
tiles[0].metric(
    "Things I remember about you",
    sum(counts.values()),
    help=f"Memories of {md_text(ctx.user_id)}: {counts['episodic']} episodic (incl. replaced "
    f"ones kept as history), {counts['semantic']} facts they added, {counts['procedural']} "
    "learned procedures. Built-in knowledge shared by every user is not counted.",
    border=True,
)
if store_wide:
    known = recall[recall["hit"].notna()] if not recall.empty else recall
    used = int(known["hit"].astype(bool).sum()) if not known.empty else 0
    tiles[1].metric(
        "Answers that used memory",
        f"{used / len(known):.0%}" if len(known) else "–",
        help=f"Of {len(known)} answers in the window ({window.lower()}, all users): the share "
        "for which recall found at least one memory relevant enough to use.",
        border=True,
    )
    tiles[2].metric(
        "Typical recall time",
        fmt_duration(recall["ms"].median()) if not recall.empty else "–",
        help="Median time to recall memories before an answer (all memory types at once); "
        + (f"1 in 20 took over {fmt_duration(recall['ms'].quantile(0.95))}." if len(recall) else "")
        + f" Window: {window.lower()}, all users.",
        border=True,
    )
if built_in:
    st.caption(
        f"Not counted above: {built_in} built-in fact{'s' if built_in != 1 else ''} every user "
        "shares (the knowledge file, and facts an admin shared)."
    )

if store_wide:
    if recall.empty:
        st.caption(
            "📈 Recall time: no answers in this window yet. Chat on the **Chat** page, then "
            "press Refresh."
        )
    else:
        st.plotly_chart(charts.recall_time_figure(recall), key="chart_recall_time")

gf = charts.growth_frame(rows_by_type)
if gf.empty:
    st.caption(f"🗂️ No memories of {md_text(ctx.user_id)} yet: growth appears once they exist.")
else:
    st.plotly_chart(charts.growth_figure(gf), key="chart_growth")

more = st.expander("Memories per type and per day", key="stats_more_memories", on_change="rerun")
if more.open:
    with more:
        a, b = st.columns(2)
        a.plotly_chart(charts.counts_figure(counts), key="chart_counts")
        gd = charts.growth_per_day_frame(rows_by_type)
        if gd.empty:
            b.caption("No memories yet.")
        else:
            b.plotly_chart(charts.growth_per_day_figure(gd), key="chart_growth_day")

if store_wide:
    # Lazy: an expander with on_change="rerun" reports whether it is open, and its figures
    # are only built then (building every figure took most of the page's run).
    details = st.expander(
        "Recall in detail: every stage and memory type", key="stats_recall", on_change="rerun"
    )
    if details.open:
        with details:
            recall_details(df, window)
    cache_box = st.expander(
        "Embedding cache and memory extraction", key="stats_cache", on_change="rerun"
    )
    if cache_box.open:
        with cache_box, guard("Reading the metrics counters"):
            cache_and_extraction(ctx.coordinator.metric_counters(), ctx.agent)
    upkeep = st.expander("Maintenance", key="stats_maintenance", on_change="rerun")
    if upkeep.open:
        with upkeep, guard("Loading the maintenance history"):
            maintenance(resources.get_maintenance(ctx.agent).history())
