"""Stats page: what the memory does, in plain words first (three tiles: what it remembers,
how many answers used it, how long recall takes), then the charts that have data. The
engineering detail (every stage's latency, hit rates per type, the cache, extraction,
maintenance) sits in expanders that run only when opened."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import streamlit as st

from memory import ListQuery
from memory.service import MemoryService
from ui import charts, resources
from ui.counts import Counts, counts_of
from ui.errors import guard
from ui.format import REMEMBERED_KINDS, fmt_day, md_text
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
if store_wide:
    c1, c2, c3 = st.columns([4, 2, 1], vertical_alignment="bottom")
    c1.caption(
        "What the memory does: what it remembers, how many answers used it and how long "
        "recalling took. Details per stage and memory type are in the sections below."
    )
    window = c2.selectbox("Window", list(WINDOWS), index=2, key="stats_window")
    c3.button("Refresh", key="stats_refresh", icon="🔄", width="stretch")  # a rerun reads anew
else:
    st.info(
        "How fast recall is and how often answers use memory are measured over every user of "
        "this store, so they are shown to admins only. Below: your own memories.",
        icon="🔒",
    )


def seconds(ms: float) -> str:
    """A time in seconds short enough for a tile at a phone's width ("0.012 seconds")."""
    s = float(ms) / 1000
    if s < 0.001:
        return "under 0.001 seconds"
    said = f"{s:.2g}" if s < 10 else f"{s:.0f}"
    return f"{said} second{'' if said == '1' else 's'}"


@dataclass(frozen=True)
class Remembered:
    """What the page shows of one user's memories; shared by sessions (never changed)."""

    rows: dict[str, list[dict[str, Any]]]  # per type: the growth charts' rows
    counts: Counts
    activity: list[dict[str, Any]]


def read_remembered(coordinator: MemoryService, user_id: str) -> Remembered:
    """What is remembered about this user: their active episodic memories and the facts
    they added. Logged exchanges are the conversation, not things remembered; replaced
    memories are history. Learned procedures and shared facts (the knowledge file's, and those
    an admin shared) are counted apart, never as the user's memories."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for mtype in ("episodic", "semantic"):
        rows[mtype], _ = coordinator.list_memories(
            user_id,
            mtype,
            ListQuery(
                page_size=1000,
                added_by=user_id if mtype == "semantic" else None,  # facts this user added
                include_superseded=False,
                event_types=REMEMBERED_KINDS if mtype == "episodic" else None,
            ),
        )
    return Remembered(
        rows=rows,
        counts=counts_of(coordinator, user_id),  # the Memories tile's and the load's
        activity=coordinator.history.per_day(user_id),
    )


mine = Remembered({}, Counts(0, 0, 0, 0, 0), [])
store = f"{ctx.settings.redis_url} {ctx.settings.memory_namespace}"
with guard("Counting memories"):
    # read once per write: the user's write counter is the cache's version
    mine = resources.per_version(
        f"stats {store} {ctx.user_id}",
        ctx.write_version,
        lambda: read_remembered(ctx.coordinator, ctx.user_id),
    )
counts = {"episodic": mine.counts.memories, "semantic": mine.counts.facts}
counts["procedural"] = mine.counts.procedures
paused, built_in = mine.counts.paused, mine.counts.shared  # paused: kept, never used

df = charts.samples_frame([])
if store_wide:
    with guard("Loading metrics"):
        df = window_samples(ctx.coordinator, store, WINDOWS[window])
recall = charts.recall_samples(df)

tiles = st.columns(3 if store_wide else 1)
tiles[0].metric(
    "Things I remember about you",
    counts["episodic"] + counts["semantic"],
    help=f"What is remembered about {md_text(ctx.user_id)} now: {counts['episodic']} things "
    f"they told or did and {counts['semantic']} facts they added. Not counted: the conversation "
    "itself (logged exchanges), replaced memories kept as history, paused memories, learned "
    "ways of working and built-in knowledge shared by every user.",
    border=True,
)
if store_wide:
    used, answers = charts.answers_using_memory(df)
    tiles[1].metric(
        "Answers that used memory",
        f"{used / answers:.0%}" if answers else "–",
        help=f"{used} of {answers} answers in the window ({window.lower()}, all users) used "
        "at least one memory: the model was given it, or a reply without the model showed "
        "it (the answers counted under Used in on the Memories page). Incognito answers and "
        "answers given again without a memory are not counted.",
        border=True,
    )
    tiles[2].metric(
        "Typical recall time",
        seconds(recall["ms"].median()) if not recall.empty else "–",
        help="Median time to recall memories before an answer (all memory types at once); "
        + (f"1 in 20 took over {seconds(recall['ms'].quantile(0.95))}." if len(recall) else "")
        + f" Window: {window.lower()}, all users.",
        border=True,
    )
apart = []
if paused:
    apart.append(f"{paused} paused memor{'ies' if paused != 1 else 'y'} (kept, not used)")
if counts["procedural"]:
    n = counts["procedural"]
    apart.append(f"{n} learned way{'s' if n != 1 else ''} of working")
if built_in:
    apart.append(
        f"{built_in} built-in fact{'s' if built_in != 1 else ''} every user shares (with "
        "facts an admin shared)"
    )
if apart:
    st.caption("Not counted above: " + "; ".join(apart) + ".")
if store_wide:  # timings are kept for the whole app, not per person
    st.caption(
        f"The first tile and the memory charts are about {md_text(ctx.user_id)}. The other "
        "tiles, the recall time and the three sections at the foot count everyone who uses "
        "this app."
    )
    if recall.empty:
        st.caption(
            "📈 Recall time: no answers in this window yet. Chat on the **Chat** page, then "
            "press Refresh."
        )
    elif charts.time_points(recall)["when"].nunique() < 2:
        st.caption(
            f"📈 Recall time: {len(recall)} answer{'s' if len(recall) != 1 else ''} in this "
            f"window, typically {seconds(recall['ms'].median())}, the slowest "
            f"{seconds(recall['ms'].max())}. The chart appears once answers span more "
            "than one moment."
        )
    else:
        st.plotly_chart(
            resources.shared_figure(charts.recall_time_figure, recall), key="chart_recall_time"
        )

remembered = {t: mine.rows.get(t, []) for t in ("episodic", "semantic")}
# carried on to this minute, not millisecond: the frame (and its shared figure) can repeat
gf = charts.growth_frame(remembered, now_ms=int(time.time() // 60) * 60_000)
days = {charts.own_date_ms(r) // 86_400_000 for rows in remembered.values() for r in rows}
if gf.empty:
    st.caption(f"🗂️ No memories of {md_text(ctx.user_id)} yet: growth appears once they exist.")
elif len(days) < 2:
    n = counts["episodic"] + counts["semantic"]
    st.caption(
        f"🗂️ All {n} memor{'y' if n == 1 else 'ies'} of {md_text(ctx.user_id)} date from "
        f"{fmt_day(min(charts.own_date_ms(r) for rows in remembered.values() for r in rows))}: "
        "growth over time appears once they span more than one day."
    )
else:
    st.plotly_chart(resources.shared_figure(charts.growth_figure, gf), key="chart_growth")

af = charts.activity_frame(mine.activity)
if af.empty:
    st.caption("🗓️ Nothing has happened to your memories yet.")
elif af["day"].nunique() < 2:
    st.caption("🗓️ " + md_text(charts.activity_sentence(af)))
else:
    st.plotly_chart(resources.shared_figure(charts.activity_figure, af), key="chart_activity")
st.caption(
    "Each memory is counted on its own date (when it happened or was said). Forgotten and "
    "expired memories are only counted: nothing of what they said is kept."
)

more = st.expander("Memories per type and per day", key="stats_more_memories", on_change="rerun")
if more.open:
    with more:
        a, b = st.columns(2)
        a.plotly_chart(charts.counts_figure(counts), key="chart_counts")
        gd = charts.growth_per_day_frame(remembered)
        if gd.empty:
            b.caption("No memories yet.")
        elif gd["day"].nunique() < 2:
            b.caption(f"All {int(gd['new'].sum())} new memories are from one day.")
        else:
            b.plotly_chart(charts.growth_per_day_figure(gd), key="chart_growth_day")

if store_wide:
    # Lazy: an expander with on_change="rerun" reports whether it is open, and its figures
    # are only built then (building every figure took most of the page's run).
    details = st.expander(
        "Recall in detail: every step and memory type", key="stats_recall", on_change="rerun"
    )
    if details.open:
        with details:
            recall_details(df, window)
    cache_box = st.expander(
        "Questions asked before and learning from chats", key="stats_cache", on_change="rerun"
    )
    if cache_box.open:
        with cache_box, guard("Reading the metrics counters"):
            cache_and_extraction(ctx.coordinator.metrics.counters(), ctx.agent)
    upkeep = st.expander("Maintenance", key="stats_maintenance", on_change="rerun")
    if upkeep.open:
        with upkeep, guard("Loading the maintenance history"):
            maintenance(resources.get_maintenance(ctx.agent).history())
