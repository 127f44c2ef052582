"""Stats page: latency per memory type and operation, hit rates, cache, counts, extraction."""

from __future__ import annotations

import time

import streamlit as st

from ui import charts, resources
from ui.errors import guard
from ui.format import SERIES_LABELS, fmt_duration, md_text
from ui.layout import page_setup

WINDOWS = {
    "Last 15 minutes": 15 * 60,
    "Last hour": 3600,
    "Last 24 hours": 86400,
    "Last 7 days": 7 * 86400,
    "All time": None,
}
RECALL_OPS = ("search", "recall", "retrieve", "query")

ctx = page_setup("Stats", "📊")
st.title("📊 Stats")
c1, c2, c3 = st.columns([4, 2, 1], vertical_alignment="bottom")
c1.caption(
    "How the memory system performs: latency of every memory operation, how often recall "
    "finds something, how often embeddings come from the cache, and what extraction stored."
)
window = c2.selectbox("Window", list(WINDOWS), index=2, key="stats_window")
c3.button("Refresh", key="stats_refresh", icon="🔄", use_container_width=True)

seconds = WINDOWS[window]
since_ms = int((time.time() - seconds) * 1000) if seconds else 0
samples, counters, counts, rows_by_type = [], {}, {}, {}
# Latency, hit rates, the cache, extraction and maintenance are measured over every user of the
# store: an admin's view (everyone is one without sign-in). A signed-in user sees their own.
store_wide = ctx.is_admin
if store_wide:
    with guard("Loading metrics"):
        samples = ctx.coordinator.latency_samples(since_ms=since_ms)
        counters = ctx.coordinator.metric_counters()
else:
    st.info(
        "Latency, recall hit rates, the embedding cache, extraction and maintenance are "
        "measured over every user of this store, so they are shown to admins only. Below: "
        "your own memories.",
        icon="🔒",
    )
with guard("Counting memories"):
    for mtype in ("episodic", "semantic", "procedural"):
        rows, total = ctx.coordinator.list_memories(ctx.user_id, mtype, page_size=1000)
        counts[mtype] = total
        rows_by_type[mtype] = rows
    counts["short_term"] = len(ctx.coordinator.recent_messages(ctx.user_id, ctx.session_id, n=200))

df = charts.samples_frame(samples)
if not df.empty and (df["op"] == "retrieve_all_context").any():
    recall = df[df["op"] == "retrieve_all_context"]  # the whole recall before an answer
elif not df.empty:
    recall = df[df["op"].str.contains("|".join(RECALL_OPS), case=False)]
else:
    recall = df
hr = charts.hit_rate_frame(df)
cache_rate = charts.cache_hit_rate(counters)

m1, m2, m3, m4, m5 = st.columns(5)
m1.metric(
    "Memories",
    sum(counts.values()),
    help=f"Episodic and procedural memories of {md_text(ctx.user_id)}, "
    "semantic facts (shared by all users) and the messages of the current session",
    border=True,
)
if store_wide:  # the other tiles measure every user
    m2.metric(
        "Recall p95",
        fmt_duration(recall["ms"].quantile(0.95)) if not recall.empty else "–",
        help="95th percentile of the whole recall before an answer (all memory types)",
        border=True,
    )
    # the whole recall ("all" types) when answers were given, else every recall/search
    overall = hr[hr["type"] == "all"] if (not hr.empty and (hr["type"] == "all").any()) else hr
    hits, misses = (int(overall["hits"].sum()), int(overall["misses"].sum())) if len(hr) else (0, 0)
    m3.metric(
        "Recall hit rate",
        f"{hits / (hits + misses):.0%}" if hits + misses else "–",
        help="Recalls before an answer that found at least one memory above the relevance "
        "threshold",
        border=True,
    )
    m4.metric(
        "Embedding cache hits",
        f"{cache_rate:.0%}" if cache_rate is not None else "–",
        help="Texts whose embedding came from the cache (all time)",
        border=True,
    )
    m5.metric("Operations measured", len(df), help=f"In the window: {window.lower()}", border=True)

if store_wide:
    if df.empty:
        st.info(
            "No measurements in this window yet. Chat on the **Chat** page or search on the "
            "**Memories** page, then press Refresh.",
            icon="📈",
        )
    else:
        f1, f2 = st.columns([3, 2], vertical_alignment="bottom")
        type_options = sorted(df["type"].map(lambda t: SERIES_LABELS.get(t, t)).unique())
        types = f1.multiselect(
            "Memory types", type_options, key="stats_types", placeholder="All memory types"
        )
        group = f2.radio(
            "Operations",
            list(charts.OP_GROUPS),
            horizontal=True,
            key="stats_ops",
            help="Recall path: what runs before every answer (embedding the message, recall "
            "per type, the whole recall). Writes: adding and recording memories.",
        )
        shown = charts.filter_samples(df, types, group)
        if shown.empty:
            st.info("No measurements for this choice of types and operations.", icon="🔎")
        else:
            st.plotly_chart(charts.latency_over_time(shown), key="chart_latency_time")
        table = charts.latency_table(shown if not shown.empty else df)
        a, b = st.columns(2)
        a.plotly_chart(charts.latency_bars(table), key="chart_latency_bars")
        if hr.empty:
            b.info("No recall has recorded a hit or a miss yet.", icon="🎯")
        else:
            b.plotly_chart(charts.hit_rate_figure(hr), key="chart_hit_rate")
        with st.expander("Latency numbers"):
            st.dataframe(
                table,
                hide_index=True,
                key="latency_table",
                column_config={
                    c: st.column_config.NumberColumn(format="%.2f")
                    for c in ("p50 (ms)", "p95 (ms)", "max")
                },
            )

a, b = st.columns(2)
if sum(counts.values()):
    a.plotly_chart(charts.counts_figure(counts), key="chart_counts")
else:
    a.info(f"No memories stored for {md_text(ctx.user_id)} yet.", icon="🗂️")
gf = charts.growth_frame(rows_by_type)
if gf.empty:
    b.info("Growth appears once memories are stored.", icon="📈")
else:
    b.plotly_chart(charts.growth_figure(gf), key="chart_growth")

gd = charts.growth_per_day_frame(rows_by_type)
if not gd.empty:
    st.plotly_chart(charts.growth_per_day_figure(gd), key="chart_growth_day")

if store_wide:
    a, b = st.columns(2)
    if cache_rate is None:
        a.info("The embedding cache has not been used yet.", icon="🧮")
    else:
        a.plotly_chart(charts.cache_figure(counters), key="chart_cache")
    outcomes = []
    if ctx.agent is not None:
        with guard("Reading the extraction log"):
            outcomes = ctx.agent.extraction_log(limit=None)
    ef = charts.extraction_frame(counters, outcomes)
    if ef.empty:
        b.info(
            "No memory extraction yet: it runs after each chat turn (with a model, or from "
            "trigger phrases like “remember that …” in memory-only mode).",
            icon="🧩",
        )
    else:
        b.plotly_chart(charts.extraction_figure(ef), key="chart_extraction")

    history: list[dict[str, int]] = []
    with guard("Loading the maintenance history"):
        history = resources.get_maintenance(ctx.agent).history()
    mf = charts.maintenance_frame(history)
    if mf.empty:
        st.info(
            "No maintenance run yet: it runs in the background, or press **Run now** in the "
            "Maintenance tab of the Memories page.",
            icon="🩺",
        )
    else:
        st.plotly_chart(charts.maintenance_figure(mf), key="chart_maintenance")
        st.caption(
            "Every real maintenance run, all users; dry runs change nothing and are not counted."
        )
        sf = charts.savings_frame(history)
        if sf["saved"].sum() > 0:
            st.plotly_chart(charts.savings_figure(sf), key="chart_savings")
            st.caption(
                "Memories merged into another one (kept as history) or expired leave recall: "
                "fewer, cleaner memories to search. The share is of the active memories before "
                "that day's first run."
            )
