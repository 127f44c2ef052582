"""The Stats page's detail sections (admins): each one is drawn inside an expander, and only
while it is open. Empty charts are not drawn: a caption says what would fill them."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from ui import charts
from ui.errors import guard

if TYPE_CHECKING:
    from agent import ChatAgent
    from memory.service import MemoryService

#: The time table's step column and rows: three lines of words beside three times at 390 px
STEP_PX, ROW_HEIGHT = 130, 72


#: store -> (its samples' version, their frame): one frame per store, shared by sessions
_FRAMES: dict[str, tuple[str, pd.DataFrame]] = {}


def window_samples(coordinator: MemoryService, store: str, since_s: int | None) -> pd.DataFrame:
    """The window's latency samples as a frame. The recorder keeps those it read (a run
    fetches only the samples added since) and their frame is built once while they are the
    same: a click builds none. Shared: never change it."""
    samples = coordinator.metrics.latency_samples()
    version = f"{len(samples)} {samples[0]['ts']} {samples[-1]['ts']}" if samples else ""
    kept = _FRAMES.get(store)
    if kept is None or kept[0] != version:
        kept = _FRAMES[store] = (version, charts.samples_frame(samples))
    df = kept[1]
    return df[df["ts"] >= (time.time() - since_s) * 1000] if since_s else df


def recall_details(df: pd.DataFrame, window: str) -> None:
    """Latency of every stage per memory type, how often recall found something per type,
    and the numbers."""
    if df.empty:
        st.caption(
            f"No measurements in this window ({window.lower()}) yet. Chat on the **Chat** "
            "page or search on the **Memories** page, then press Refresh."
        )
        return
    f1, f2 = st.columns([3, 2], vertical_alignment="bottom")
    type_options = sorted(charts.type_words(df["type"]).unique())
    types = f1.multiselect(
        "Memory types", type_options, key="stats_types", placeholder="All memory types"
    )
    group = f2.radio(
        "Steps",
        list(charts.OP_GROUPS),
        horizontal=True,
        key="stats_ops",
        help=f"{charts.BEFORE_ANSWER}: what runs before every answer (reading the question, "
        f"recall per type, the whole recall). {charts.SAVING}: adding memories and saving "
        "the conversation.",
    )
    shown = charts.filter_samples(df, types, group)
    if shown.empty:
        st.caption("No measurements for this choice of types and operations.")
    else:
        over_time = charts.latency_over_time(shown)
        st.plotly_chart(over_time, key="chart_latency_time")
        st.caption(charts.latency_caption(over_time))
    table = charts.latency_table(shown if not shown.empty else df)
    a, b = st.columns(2)
    a.plotly_chart(charts.latency_bars(table), key="chart_latency_bars")
    hr = charts.hit_rate_frame(df)
    if hr.empty:
        b.caption("How often recall found something, per memory type, shows once one has run.")
    else:
        b.plotly_chart(charts.hit_rate_figure(hr), key="chart_hit_rate")
    st.caption(
        "Times in seconds over the whole window: the typical one, the one that only 1 in 20 "
        "took longer than, the slowest; and how many times each step was measured."
    )
    st.dataframe(
        charts.latency_rows(table),
        hide_index=True,
        key="latency_table",
        row_height=ROW_HEIGHT,  # tall enough to wrap a step's words: a phone sees the times
        column_config={charts.STEP: st.column_config.TextColumn(pinned=True, width=STEP_PX)},
    )


def cache_and_extraction(counters: dict[str, int], agent: ChatAgent | None) -> None:
    a, b = st.columns(2)
    questions = charts.questions_frame(counters)
    if questions["questions"].sum() == 0:
        a.caption("No question has been asked yet.")
    else:
        a.plotly_chart(charts.questions_figure(questions), key="chart_cache")
    outcomes: list[Any] = []
    if agent is not None:
        with guard("Reading the extraction log"):
            outcomes = agent.background.outcomes()
    ef = charts.extraction_frame(counters, outcomes)
    if ef.empty:
        b.caption(
            "Nothing learned from messages yet: it runs after each chat turn (with a model, or "
            "from phrases like “remember that …” without one)."
        )
    elif len(ef) < 2:
        only = ef.iloc[0]
        b.caption(f"Learning from messages so far: {int(only['count'])} {only['outcome']}.")
    else:
        b.plotly_chart(charts.extraction_figure(ef), key="chart_extraction")


def maintenance(history: list[dict[str, Any]]) -> None:
    days = charts.maintenance_days(history)
    if days.empty:
        st.caption(
            "No maintenance run yet: it runs in the background, or press **Run now** in the "
            "Maintenance tab of the Memories page."
        )
        return
    if days["saved"].sum() == 0:  # runs that merged and expired nothing: no bars to draw
        runs = int(days["runs"].sum())
        st.caption(f"{runs} maintenance run{'s' * (runs != 1)}: nothing to merge or expire yet.")
        return
    st.plotly_chart(charts.maintenance_figure(days), key="chart_maintenance")
    st.caption(
        "Every real maintenance run, all users; dry runs change nothing and are not counted."
    )
    st.plotly_chart(charts.savings_figure(days), key="chart_savings")
    st.caption(
        "Memories merged into another one (kept as history) or expired leave recall: "
        "fewer, cleaner memories to search. The share is of the active memories before "
        "that day's first run."
    )
