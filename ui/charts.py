"""Stats page data shaping (pandas) and plotly figures, all drawn by one builder (`figure`):
the same title, legend, margins and a date axis whose labels never overlap at a phone's width.
No Streamlit calls here."""

from __future__ import annotations

import time
from typing import Any, Literal

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from memory import words
from memory.words import step_word
from ui.format import (
    CHART_DAY,
    CHART_MONTH,
    CHART_TIME,
    SERIES_LABELS,
    TYPE_COLORS,
    TYPE_LABELS,
    own_date_ms,
)

#: The embedding cache's counters in words: a hit (this process's or the store's) is remembered
REMEMBERED, WORKED_OUT = "Remembered from before", "Worked out again"
CACHE_COUNTERS = {
    "embed_cache_local_hit": REMEMBERED,
    "embed_cache_redis_hit": REMEMBERED,
    "embed_cache_miss": WORKED_OUT,
}
CACHE_COLORS = {REMEMBERED: "#59A14F", WORKED_OUT: "#E15759"}
#: The two percentiles every latency chart draws, in words (p50 and p95)
TYPICAL, SLOWEST = "typical", "slowest 1 in 20"
MS = "milliseconds"
HEIGHT = 320
#: Titles start below plotly's toolbar strip (on a phone-width chart they ran under it)
TOOLBAR_PX = 34


DAY_MS = 86_400_000
#: Most date ticks on an axis: five labels such as "Nov 2026" fit a phone's 320 px of plot.
MAX_DATE_TICKS = 5
#: Steps of a daily axis, smallest first, so a tick falls on a whole day, week or month.
DAY_STEPS, MONTH_STEPS = (1, 2, 7, 14), (1, 2, 3, 6, 12)
#: The label follows the step: times within a day, days within a month, then months.
MINUTE_MS = 60_000
DATE_FORMATS = [  # plotly takes the first range holding the step, ends included
    # seconds apart (a burst of answers): "04:42" three times said nothing
    {"dtickrange": [None, MINUTE_MS - 1], "value": f"{CHART_TIME}:%S"},
    {"dtickrange": [MINUTE_MS, DAY_MS - 1], "value": CHART_TIME},
    {"dtickrange": [DAY_MS, 14 * DAY_MS], "value": CHART_DAY},
    {"dtickrange": ["M1", None], "value": CHART_MONTH},
]
TYPE_LINE_COLORS = {TYPE_LABELS[t]: c for t, c in TYPE_COLORS.items() if t in TYPE_LABELS}


def figure(
    kind: Literal["bar", "hbar", "line", "donut"],
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    title: str,
    daily: bool = False,
    height: int = HEIGHT,
    legend: bool = True,
    **px_args: Any,
) -> go.Figure:
    """One Stats chart from a frame: bars (`bar`, horizontal `hbar`), lines or a donut (x
    names the slices, y sizes them), with plotly express's own arguments; an x column of
    dates gets the shared date axis (`daily`: one bar per day)."""
    if kind == "donut":
        fig = px.pie(df, names=x, values=y, hole=0.55, **px_args)
        return style_figure(fig, title=title, height=height, legend=legend, from_zero=None)
    if kind == "line":
        fig = px.line(df, x=x, y=y, **px_args)
    else:
        fig = px.bar(df, x=x, y=y, orientation="h" if kind == "hbar" else "v", **px_args)
    if px_args.get("text") is not None:
        fig.update_traces(textposition="outside", cliponaxis=False)
    dates = df[x] if kind != "hbar" and pd.api.types.is_datetime64_any_dtype(df[x]) else None
    return style_figure(
        fig,
        title=title,
        when=dates,
        daily=daily,
        height=height,
        legend=legend,
        from_zero="x" if kind == "hbar" else "y",
    )


def style_figure(
    fig: go.Figure,
    *,
    title: str,
    when: pd.Series | None = None,
    daily: bool = False,
    height: int = HEIGHT,
    legend: bool = True,
    from_zero: Literal["x", "y", None] = "y",
) -> go.Figure:
    """What every figure shares: its title top-left under the toolbar, the legend in one row
    under it, small margins, a value axis from zero, and the date axis when `when` is its x."""
    fig.update_layout(
        height=height,
        margin={"l": 8, "r": 8, "t": (84 if legend else 48) + TOOLBAR_PX, "b": 8},
        title={
            "text": title,
            "x": 0,
            "xanchor": "left",
            "y": 1,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": TOOLBAR_PX},
            "font": {"size": 16},
        },
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "title": None},
        showlegend=legend,
        hoverlabel={"namelength": -1},
    )
    if when is not None:
        date_axis(fig, when, daily=daily)
    if from_zero:
        fig.update_layout({f"{from_zero}axis": {"rangemode": "tozero"}})
    return fig


def day_step(first: pd.Timestamp, last: pd.Timestamp) -> int | str:
    """The smallest whole step that keeps a daily axis at `MAX_DATE_TICKS` labels or fewer."""
    days = max((last - first).total_seconds() / 86_400, 0)
    for step in DAY_STEPS:
        if days / step < MAX_DATE_TICKS:
            return step * DAY_MS
    months = days / 30.44
    for step in MONTH_STEPS:
        if months / step < MAX_DATE_TICKS:
            return f"M{step}"
    return f"M{12 * (int(months / 12 / MAX_DATE_TICKS) + 1)}"  # whole years


def date_axis(fig: go.Figure, when: pd.Series, *, daily: bool) -> None:
    """Few, unrotated date ticks in the app's format; a daily axis ticks on whole days, weeks
    or months at the bars' midnights."""
    ticks: dict[str, Any] = {"nticks": MAX_DATE_TICKS}
    if daily and not when.empty:
        first = pd.Timestamp(when.min()).floor("D")
        step = day_step(first, pd.Timestamp(when.max()))
        if isinstance(step, str):  # months: tick on the first of each
            first = first.replace(day=1)
        ticks = {"dtick": step, "tick0": first}
    fig.update_xaxes(
        type="date", tickformatstops=DATE_FORMATS, tickangle=0, hoverformat="%-d %b %Y", **ticks
    )


def _color_for(label: str) -> str:
    for key, color in TYPE_COLORS.items():
        if label.startswith(key) or label.startswith(SERIES_LABELS.get(key, "~")):
            return color
    return TYPE_COLORS["other"]


def _utc(ms: pd.Series) -> pd.Series:
    return pd.to_datetime(ms, unit="ms", utc=True).dt.tz_convert(None)


def type_words(types: pd.Series) -> pd.Series:
    return types.map(SERIES_LABELS).fillna(types)


def _history_frame(history: list[dict[str, Any]]) -> pd.DataFrame:
    """The maintenance runs' totals (`Maintenance.history()`, no dry runs) with each run's day."""
    totals = ["consolidated", "expired", "active_before"]
    df = pd.DataFrame(history, columns=["at_ms", *totals]).sort_values("at_ms")
    df[totals] = df[totals].apply(pd.to_numeric, errors="coerce").fillna(0).astype(int)
    df["day"] = _utc(df["at_ms"]).dt.floor("D")
    return df


# --- latency -----------------------------------------------------------------------------


def samples_frame(samples: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(samples, columns=["ts", "type", "op", "ms", "hit"])
    if df.empty:
        return df.assign(when=pd.Series(dtype="datetime64[ms]"), series=pd.Series(dtype=str))
    df["ms"] = df["ms"].astype(float)
    df = df[df["ms"] > 0].copy()  # deletes are counted with 0 ms: not a latency
    df["when"] = _utc(df["ts"])
    # Vectorised: a Python call per sample cost a tenth of a second per 50k samples.
    df["series"] = type_words(df["type"]) + " · " + df["op"].map(step_word)
    return df


WHOLE_RECALL = "retrieve_all_context"  # the whole recall before an answer, all memory types


def recall_samples(df: pd.DataFrame) -> pd.DataFrame:
    """The samples of the whole recall before an answer (what a user waits for)."""
    return df[df["op"] == WHOLE_RECALL] if not df.empty else df


STORED_ANSWER = "store_interaction"  # an answer stored; its hit: it used a memory


def answers_using_memory(df: pd.DataFrame) -> tuple[int, int]:
    """(answers that used a memory, answers) among the stored answers in `df`: each stored
    answer's sample says whether its usage record (Memories' *Used in*) lists a memory."""
    if df.empty:
        return 0, 0
    known = df[(df["op"] == STORED_ANSWER) & df["hit"].notna()]
    return int(known["hit"].astype(bool).sum()), len(known)


#: Fewest samples in a time bucket for its p95 to be drawn: with fewer, "1 in 20 is slower"
#: is not measured and the line would lie on the median.
P95_MIN_SAMPLES = 20


def recall_points(recall: pd.DataFrame) -> pd.DataFrame:
    """The recall chart's points: p50 per time bucket, and p95 where a bucket has enough
    samples (`P95_MIN_SAMPLES`)."""
    rule = bucket_for(recall)
    ms = recall.set_index("when")["ms"].resample(rule)
    pts = pd.concat({"p50": ms.quantile(0.5), "p95": ms.quantile(0.95), "n": ms.count()}, axis=1)
    pts = pts[pts["n"] > 0]
    pts.loc[pts["n"] < P95_MIN_SAMPLES, "p95"] = float("nan")
    return pts


def recall_time_figure(recall: pd.DataFrame) -> go.Figure:
    """Two lines only: the typical (p50) and a slow (p95) recall before an answer."""
    pts = recall_points(recall)
    fig = go.Figure()
    for pct, name, color, dash in (
        ("p50", TYPICAL, "#4C78A8", "solid"),
        ("p95", SLOWEST, "#F28E2B", "dot"),
    ):
        fig.add_trace(
            go.Scatter(
                x=pts.index,
                y=pts[pct],
                name=name,
                mode="lines+markers",
                line={"color": color, "width": 2, "dash": dash},
                marker={"size": 4},
                hovertemplate=f"{name}: %{{y:.1f}} {MS}<extra></extra>",
            )
        )
    fig.update_layout(yaxis_title=MS)
    return style_figure(fig, title="Recall time before an answer", when=pd.Series(pts.index))


def bucket_for(df: pd.DataFrame) -> str:
    """A time bucket giving ~30–60 points over the samples' span."""
    if df.empty:
        return "1min"
    span_s = (df["when"].max() - df["when"].min()).total_seconds()
    steps = ((30, "1s"), (120, "5s"), (1800, "1min"), (3 * 3600, "5min"), (86400, "30min"))
    for seconds, rule in steps:
        if span_s <= seconds:
            return rule
    return "3h" if span_s <= 7 * 86400 else "1D"


#: A time bucket (`bucket_for`) as the end of "…, per minute"
BUCKET_WORDS = {
    "1s": "per second",
    "5s": "per 5 seconds",
    "1min": "per minute",
    "5min": "per 5 minutes",
    "30min": "per half hour",
    "3h": "per 3 hours",
    "1D": "per day",
}
#: The latency table's columns: the two percentiles and the slowest, in milliseconds
TYPICAL_COL, SLOWEST_COL, MAX_COL = (
    f"Typical ({MS})",
    f"Slowest 1 in 20 ({MS})",
    f"Slowest ({MS})",
)


def latency_table(df: pd.DataFrame) -> pd.DataFrame:
    """p50/p95/max and count per memory type and operation (the whole window)."""
    if df.empty:
        return pd.DataFrame(
            columns=["Type", "Operation", "Count", TYPICAL_COL, SLOWEST_COL, MAX_COL]
        )
    g = df.groupby(["type", "op"])["ms"]
    out = pd.DataFrame(
        {
            "Count": g.size(),
            TYPICAL_COL: g.quantile(0.5),
            SLOWEST_COL: g.quantile(0.95),
            MAX_COL: g.max(),
        }
    ).reset_index()
    out["type"] = type_words(out["type"])
    out["op"] = out["op"].map(step_word)
    return out.rename(columns={"type": "Type", "op": "Operation"}).sort_values(
        ["Type", "Operation"]
    )


RECALL_OPS = {"recall", "search", "retrieve_all_context", "embed_query"}
BEFORE_ANSWER, SAVING = "Before an answer", "Saving"
OP_GROUPS = {
    BEFORE_ANSWER: lambda op: op in RECALL_OPS,
    SAVING: lambda op: op not in RECALL_OPS,
    "All": lambda op: True,
}


def filter_samples(df: pd.DataFrame, types: list[str] | None, group: str) -> pd.DataFrame:
    """Samples of the chosen memory types (labels) and operation group."""
    if df.empty:
        return df
    keep = df["op"].map(OP_GROUPS.get(group, OP_GROUPS["All"]))
    if types:
        keep &= type_words(df["type"]).isin(types)
    return df[keep]


def latency_over_time(df: pd.DataFrame) -> go.Figure:
    """p50 (solid) and p95 (dotted, same colour) per type · operation, the legend under the
    plot: beside it, it took 60 % of a phone's 390 px."""
    rule = bucket_for(df)
    g = df.set_index("when").groupby("series")["ms"].resample(rule)
    pts = pd.concat({"p50": g.quantile(0.5), "p95": g.quantile(0.95)}, axis=1).dropna()
    pts = pts.reset_index()
    fig = go.Figure()
    for series, part in pts.groupby("series", sort=True):
        color = _color_for(str(series))
        dash = _dash_for(str(series))
        for pct, width, line_dash, show in (("p50", 2.2, dash, True), ("p95", 1.4, "dot", False)):
            fig.add_trace(
                go.Scatter(
                    x=part["when"],
                    y=part[pct],
                    name=str(series),
                    legendgroup=str(series),
                    showlegend=show,
                    mode="lines+markers",
                    line={"color": color, "width": width, "dash": line_dash},
                    marker={"size": 5 if show else 3},
                    hovertemplate=f"{series}, {TYPICAL if show else SLOWEST}: "
                    f"%{{y:.1f}} {MS}<extra></extra>",
                )
            )
    fig.update_layout(yaxis_title=MS)
    style_figure(
        fig,
        title=f"Time per step, {BUCKET_WORDS.get(rule, rule)}",
        when=pts["when"],
        # on a phone the legend takes a row per series: the plot keeps its height
        height=max(460, 360 + 24 * pts["series"].nunique()),
    )
    fig.update_layout(
        # at the figure's foot (not the plot's): the margin grows with its rows, so the
        # time labels keep their place above it at any width
        legend={
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
        },
        margin={"t": 48 + TOOLBAR_PX, "r": 8},
    )
    return fig


def _dash_for(series: str) -> str:
    """Operations of one memory type share a colour; tell them apart by dash."""
    op = series.split(" · ", 1)[-1]
    return {
        step_word("search"): "dash",
        step_word("add"): "dashdot",
        step_word("record"): "dashdot",
        step_word("add_many"): "longdash",
        step_word("store_interaction"): "dashdot",
    }.get(op, "solid")


def latency_bars(table: pd.DataFrame) -> go.Figure:
    long = table.assign(series=table["Type"] + " · " + table["Operation"]).melt(
        id_vars=["series", "Type"],
        value_vars=[TYPICAL_COL, SLOWEST_COL],
        var_name="percentile",
        value_name="ms",
    )
    long["percentile"] = long["percentile"].map({TYPICAL_COL: TYPICAL, SLOWEST_COL: SLOWEST})
    fig = figure(
        "hbar",
        long,
        x="ms",
        y="series",
        color="percentile",
        color_discrete_map={TYPICAL: "#4C78A8", SLOWEST: "#F28E2B"},
        labels={"series": "", "ms": MS, "percentile": ""},
        title="Time per step, whole window",
        text=long["ms"],
        barmode="group",
        height=max(HEIGHT, 110 + 46 * long["series"].nunique()),
    )
    fig.update_traces(texttemplate="%{x:.1f}", textfont_size=11)
    fig.update_yaxes(categoryorder="category descending")
    return fig


# --- hit rates ---------------------------------------------------------------------------


def hit_rate_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Recall hit rate per memory type from samples that recorded a hit or a miss."""
    if df.empty:
        return pd.DataFrame(columns=["type", "Type", "hits", "misses", "rate"])
    known = df[df["hit"].notna() & df["op"].isin(RECALL_OPS) & (df["type"] != "embedding")]
    if known.empty:
        return pd.DataFrame(columns=["type", "Type", "hits", "misses", "rate"])
    hits = known["hit"].astype(bool)
    g = known.assign(h=hits, m=~hits).groupby("type")[["h", "m"]].sum().reset_index()
    g["rate"] = g["h"] / (g["h"] + g["m"])
    g["Type"] = type_words(g["type"])
    return g.rename(columns={"h": "hits", "m": "misses"})


def hit_rate_figure(hr: pd.DataFrame) -> go.Figure:
    fig = figure(
        "bar",
        hr,
        x="Type",
        y="rate",
        color="type",
        color_discrete_map=TYPE_COLORS,
        text=hr["rate"].map(lambda r: f"{r:.0%}"),
        hover_data={"hits": True, "misses": True, "type": False},
        labels={"rate": "found something", "hits": "found", "misses": "found nothing", "Type": ""},
        title="How often recall found something",
        legend=False,
    )
    fig.update_yaxes(range=[0, 1.1], tickformat=".0%")
    return fig


def cache_frame(counters: dict[str, int]) -> pd.DataFrame:
    rows = pd.DataFrame(
        [
            {"outcome": label, "count": int(counters.get(k, 0))}
            for k, label in CACHE_COUNTERS.items()
        ]
    )
    return rows.groupby("outcome", as_index=False, sort=False)["count"].sum()


def cache_hit_rate(counters: dict[str, int]) -> float | None:
    hits = counters.get("embed_cache_local_hit", 0) + counters.get("embed_cache_redis_hit", 0)
    total = hits + counters.get("embed_cache_miss", 0)
    return hits / total if total else None


def cache_figure(counters: dict[str, int]) -> go.Figure:
    cf = cache_frame(counters)
    fig = figure(
        "donut",
        cf,
        x="outcome",
        y="count",
        color="outcome",
        color_discrete_map=CACHE_COLORS,
        title="Reading a question",
    )
    rate = cache_hit_rate(counters)
    fig.update_traces(textinfo="percent", sort=False)
    fig.add_annotation(
        text=f"{rate:.0%}<br>remembered" if rate is not None else "–",
        showarrow=False,
        font_size=16,
    )
    return fig


# --- memory counts -----------------------------------------------------------------------


def counts_figure(counts: dict[str, int]) -> go.Figure:
    df = pd.DataFrame(
        [{"type": t, "Type": SERIES_LABELS.get(t, t), "count": n} for t, n in counts.items()]
    )
    return figure(
        "bar",
        df,
        x="Type",
        y="count",
        color="type",
        color_discrete_map=TYPE_COLORS,
        text="count",
        labels={"Type": "", "count": "memories"},
        title="Memories per type",
        legend=False,
    )


def growth_frame(
    rows_by_type: dict[str, list[dict[str, Any]]], now_ms: int | None = None
) -> pd.DataFrame:
    """Cumulative memories per type over each memory's own date, each series carried on to
    `now_ms` (a single point is no line)."""
    now_ms = int(now_ms if now_ms is not None else time.time() * 1000)
    frames = []
    for mtype, rows in rows_by_type.items():
        ts = [own_date_ms(r) for r in rows]
        ts = sorted(t for t in ts if t > 0)
        if not ts:
            continue
        counts_list = list(range(1, len(ts) + 1))
        if now_ms > ts[-1]:
            ts.append(now_ms)
            counts_list.append(counts_list[-1])
        counts = pd.DataFrame({"when": _utc(pd.Series(ts)), "count": counts_list, "type": mtype})
        frames.append(counts.groupby("when", as_index=False).last())  # one point per instant
    if not frames:
        return pd.DataFrame(columns=["when", "count", "type", "Type"])
    out = pd.concat(frames, ignore_index=True)
    out["Type"] = type_words(out["type"])
    return out


def growth_figure(gf: pd.DataFrame) -> go.Figure:
    return figure(
        "line",
        gf,
        x="when",
        y="count",
        color="Type",
        color_discrete_map=TYPE_LINE_COLORS,
        labels={"when": "", "count": "memories", "Type": ""},
        title="Growth over time",
        line_shape="hv",
    )


# --- extraction --------------------------------------------------------------------------


#: a memory extraction found again (a duplicate), in words
KNOWN = "already known, not stored again"


def extraction_frame(counters: dict[str, int], outcomes: list[Any] | None = None) -> pd.DataFrame:
    """Extraction outcomes from the `extraction_*` counters; when there are none, from the
    agent's in-process extraction log (jobs by status, memories stored, duplicates)."""
    rows = [
        {"outcome": words.extraction_words(k.removeprefix("extraction_")), "count": int(v)}
        for k, v in counters.items()
        if k.startswith("extraction_")
    ]
    if not rows and outcomes:
        tally: dict[str, int] = {}
        for o in outcomes:
            said = words.extraction_words(o.status)
            tally[said] = tally.get(said, 0) + 1
            tally["memories stored"] = tally.get("memories stored", 0) + len(o.stored)
            tally[KNOWN] = tally.get(KNOWN, 0) + int(o.duplicates)
        rows = [{"outcome": k, "count": v} for k, v in tally.items()]
    return pd.DataFrame(rows, columns=["outcome", "count"]).sort_values("count", ascending=False)


def extraction_figure(ef: pd.DataFrame) -> go.Figure:
    def color(outcome: str) -> str:
        o = outcome.lower()
        if any(w in o for w in ("could not", "made up", "error", "invalid")):
            return "#E15759"
        if any(w in o for w in ("already", "without a model")):
            return "#BAB0AC"
        if any(w in o for w in ("waiting", "retry")):
            return "#F28E2B"
        return "#59A14F"

    fig = figure(
        "hbar",
        ef,
        x="count",
        y="outcome",
        color="outcome",
        color_discrete_map={o: color(o) for o in ef["outcome"]},
        text="count",
        labels={"outcome": "", "count": "jobs / memories"},
        title="Memory extraction outcomes",
        legend=False,
        height=max(HEIGHT, 60 + 36 * len(ef)),
    )
    fig.update_yaxes(categoryorder="total ascending")
    return fig


# --- maintenance -------------------------------------------------------------------------

MAINTENANCE_SERIES = {"consolidated": "Consolidated", "expired": "Expired"}
MAINTENANCE_COLORS = {"Consolidated": "#4C78A8", "Expired": "#E15759"}


def maintenance_frame(history: list[dict[str, Any]]) -> pd.DataFrame:
    """Memories consolidated and expired per day (UTC), long format: day, series, count, runs."""
    columns = ["day", "series", "count", "runs"]
    if not history:
        return pd.DataFrame(columns=columns)
    per_day = (
        _history_frame(history)
        .groupby("day")
        .agg(runs=("at_ms", "size"), **{name: (name, "sum") for name in MAINTENANCE_SERIES})
    )
    out = per_day.reset_index().melt(
        id_vars=["day", "runs"], value_vars=list(MAINTENANCE_SERIES), var_name="series"
    )
    out["series"] = out["series"].map(MAINTENANCE_SERIES)
    out = out.rename(columns={"value": "count"})[columns]
    return out.sort_values(["day", "series"], ignore_index=True)


def maintenance_figure(mf: pd.DataFrame) -> go.Figure:
    return figure(
        "bar",
        mf,
        x="day",
        y="count",
        color="series",
        color_discrete_map=MAINTENANCE_COLORS,
        hover_data={"runs": True},
        labels={"day": "", "count": "memories", "series": "", "runs": "runs that day"},
        title="Merged and expired per day",
        daily=True,
        barmode="group",
    )


# --- storage saved and growth per day -------------------------------------------------------


def savings_frame(history: list[dict[str, Any]]) -> pd.DataFrame:
    """Active memories maintenance took out of recall per day (merged or expired), and that
    as a share of the active memories before the day's first run (NaN for older runs)."""
    columns = ["day", "saved", "active_before", "share", "runs"]
    if not history:
        return pd.DataFrame(columns=columns)
    df = _history_frame(history)
    df["saved"] = df["consolidated"] + df["expired"]
    out = df.groupby("day", as_index=False).agg(
        saved=("saved", "sum"), active_before=("active_before", "first"), runs=("at_ms", "size")
    )
    before = out["active_before"].where(out["active_before"] > 0)
    out["share"] = (out["saved"] / before).round(3)
    return out[columns]


def savings_figure(sf: pd.DataFrame) -> go.Figure:
    text = [f"{s:.0%}" if pd.notna(s) else "" for s in sf["share"]]
    fig = figure(
        "bar",
        sf,
        x="day",
        y="saved",
        text=text,
        hover_data={"active_before": True, "runs": True},
        labels={"day": "", "saved": "memories out of recall", "active_before": "active before"},
        title="Taken out of recall per day",
        daily=True,
        legend=False,
    )
    fig.update_traces(marker_color=MAINTENANCE_COLORS["Consolidated"])
    return fig


def growth_per_day_frame(rows_by_type: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    """New memories per day (UTC) and type, by each memory's own date (the cumulative growth
    chart shows the total; this one shows the pace)."""
    rows = [
        {"type": mtype, "ts": own_date_ms(r)}
        for mtype, items in rows_by_type.items()
        for r in items
    ]
    df = pd.DataFrame(rows, columns=["type", "ts"])
    df = df[df["ts"] > 0]
    if df.empty:
        return pd.DataFrame(columns=["day", "type", "Type", "new"])
    df["day"] = _utc(df["ts"]).dt.floor("D")
    out = df.groupby(["day", "type"], as_index=False).size().rename(columns={"size": "new"})
    out["Type"] = type_words(out["type"])
    return out[["day", "type", "Type", "new"]].sort_values(["day", "type"], ignore_index=True)


def growth_per_day_figure(gd: pd.DataFrame) -> go.Figure:
    return figure(
        "bar",
        gd,
        x="day",
        y="new",
        color="Type",
        color_discrete_map=TYPE_LINE_COLORS,
        labels={"day": "", "new": "new memories", "Type": ""},
        title="Growth per day",
        daily=True,
    )
