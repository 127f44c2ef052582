"""The Stats page's data (pandas frames) and its plotly figures, every figure drawn by one
builder (`figure`): the same title, legend, margins, value axis and a date axis whose labels
never overlap at a phone's width. No Streamlit calls here."""

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
    fmt_day,
    own_date_ms,
)

HEIGHT = 320
#: Titles start below plotly's toolbar strip (on a phone-width chart they ran under it)
TOOLBAR_PX = 34
DAY_MS, MINUTE_MS = 86_400_000, 60_000
#: Most date ticks on an axis: five labels such as "Nov 2026" fit a phone's 320 px of plot.
MAX_DATE_TICKS = 5
#: Steps of a daily axis, smallest first, so a tick falls on a whole day, week or month.
DAY_STEPS, MONTH_STEPS = (1, 2, 7, 14), (1, 2, 3, 6, 12)
DATE_FORMATS = [  # the label follows the step; plotly takes the first range holding it
    {"dtickrange": [None, MINUTE_MS - 1], "value": f"{CHART_TIME}:%S"},  # a burst of answers
    {"dtickrange": [MINUTE_MS, DAY_MS - 1], "value": CHART_TIME},
    {"dtickrange": [DAY_MS, 14 * DAY_MS], "value": CHART_DAY},
    {"dtickrange": ["M1", None], "value": CHART_MONTH},
]
#: The series colours by the words a chart shows (a hover names a bar by its colour's column)
SERIES_COLORS = {SERIES_LABELS.get(t, t): c for t, c in TYPE_COLORS.items()}
BLUE, ORANGE, GREEN, RED, GREY = "#4C78A8", "#F28E2B", "#59A14F", "#E15759", "#BAB0AC"


def figure(
    kind: Literal["bar", "hbar", "line", "donut"],
    df: pd.DataFrame,
    *,
    x: str,
    y: str | list[str],
    title: str,
    daily: bool = False,
    height: int = HEIGHT,
    legend: bool = True,
    **px_args: Any,
) -> go.Figure:
    """One Stats chart from a frame: bars (`bar`, horizontal `hbar`), lines or a donut (x names
    the slices, y sizes them), with plotly express's own arguments. Shared: a memory type's
    colour, the title top-left under the toolbar, the legend in one row under it, a value axis
    from zero, and an x column of dates on the date axis (`daily`: one bar per day)."""
    px_args.setdefault("color_discrete_map", SERIES_COLORS)
    if kind == "donut":
        fig = px.pie(df, names=x, values=y, hole=0.55, **px_args)
    elif kind == "line":
        fig = px.line(df, x=x, y=y, **px_args)
    else:
        fig = px.bar(df, x=x, y=y, orientation="h" if kind == "hbar" else "v", **px_args)
    if kind != "donut" and px_args.get("text") is not None:
        fig.update_traces(textposition="outside", cliponaxis=False)
    fig.update_layout(
        height=height,
        # a bar's value beside its end needs room on the right (it was cut at the edge)
        margin={
            "l": 8,
            "r": 48 if kind == "hbar" else 8,
            "t": (84 if legend else 48) + TOOLBAR_PX,
            "b": 8,
        },
        title={
            "text": title,
            "x": 0,
            "y": 1,
            "yref": "container",
            "pad": {"t": TOOLBAR_PX},
            "xanchor": "left",
            "yanchor": "top",
            "font": {"size": 16},
        },
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "title": None},
        showlegend=legend,
        hoverlabel={"namelength": -1},
    )
    if kind in ("bar", "line"):
        fig.update_yaxes(rangemode="tozero")
        if pd.api.types.is_datetime64_any_dtype(df[x]):
            date_axis(fig, df[x], daily=daily)
    elif kind == "hbar":
        fig.update_xaxes(rangemode="tozero")
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


def _utc(ms: pd.Series) -> pd.Series:
    return pd.to_datetime(ms, unit="ms", utc=True).dt.tz_convert(None)


def type_words(types: pd.Series) -> pd.Series:
    return types.map(SERIES_LABELS).fillna(types)


# --- time taken ----------------------------------------------------------------------------

#: The two percentiles every time chart draws, in words (p50 and p95); times are in seconds
TYPICAL, SLOWEST = "typical", "slowest 1 in 20"
SECONDS = "seconds"
#: Fewest samples in a time bucket for its p95 to be drawn: with fewer, "1 in 20 is slower"
#: is not measured and the line would lie on the median.
P95_MIN_SAMPLES = 20
WHOLE_RECALL = "retrieve_all_context"  # the whole recall before an answer, all memory types
STORED_ANSWER = "store_interaction"  # an answer stored; its hit: it used a memory
#: A time bucket (`bucket_for`, ~30–60 points over the samples' span) and its words
BUCKETS = {
    "1s": "per second",
    "5s": "per 5 seconds",
    "1min": "per minute",
    "5min": "per 5 minutes",
    "30min": "per half hour",
    "3h": "per 3 hours",
    "1D": "per day",
}
BUCKET_SPANS_S = (30, 120, 1800, 3 * 3600, 86400, 7 * 86400)


def samples_frame(samples: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(samples, columns=["ts", "type", "op", "ms", "hit"])
    if df.empty:
        return df.assign(when=pd.Series(dtype="datetime64[ms]"), series=pd.Series(dtype=str))
    df["ms"] = df["ms"].astype(float)
    df = df[df["ms"] > 0].copy()  # deletes are counted with 0 ms: not a time taken
    df["when"] = _utc(df["ts"])
    # Vectorised: a Python call per sample cost a tenth of a second per 50k samples.
    steps = {op: step_word(op) for op in df["op"].unique()}
    df["series"] = type_words(df["type"]) + " · " + df["op"].map(steps)
    return df


def recall_samples(df: pd.DataFrame) -> pd.DataFrame:
    """The samples of the whole recall before an answer (what a user waits for)."""
    return df[df["op"] == WHOLE_RECALL] if not df.empty else df


def answers_using_memory(df: pd.DataFrame) -> tuple[int, int]:
    """(answers that used a memory, answers) among the stored answers in `df`: each stored
    answer's sample says whether its usage record (Memories' *Used in*) lists a memory."""
    if df.empty:
        return 0, 0
    known = df[(df["op"] == STORED_ANSWER) & df["hit"].notna()]
    return int(known["hit"].astype(bool).sum()), len(known)


def bucket_for(df: pd.DataFrame) -> str:
    span_s = (df["when"].max() - df["when"].min()).total_seconds() if not df.empty else 0
    return next((r for r, s in zip(BUCKETS, BUCKET_SPANS_S, strict=False) if span_s <= s), "1D")


def time_points(df: pd.DataFrame) -> pd.DataFrame:
    """Per series and time bucket: the typical and the slowest-1-in-20 seconds, long (series,
    when, percentile, seconds); a slowest point only where its bucket holds
    `P95_MIN_SAMPLES`, so no line and no legend entry stands for what was not measured."""
    g = df.set_index("when").groupby("series")["ms"].resample(bucket_for(df))
    pts = pd.concat({TYPICAL: g.quantile(0.5), SLOWEST: g.quantile(0.95), "n": g.count()}, axis=1)
    pts.loc[pts["n"] < P95_MIN_SAMPLES, SLOWEST] = float("nan")
    long = pts[pts["n"] > 0].drop(columns="n").reset_index()
    long = long.melt(id_vars=["series", "when"], var_name="percentile", value_name="seconds")
    return long.dropna().assign(seconds=lambda f: f["seconds"] / 1000)


def recall_time_figure(recall: pd.DataFrame) -> go.Figure:
    """Two lines only: the typical and a slow recall before an answer."""
    return figure(
        "line",
        time_points(recall),
        x="when",
        y="seconds",
        color="percentile",
        line_dash="percentile",
        color_discrete_map={TYPICAL: BLUE, SLOWEST: ORANGE},
        line_dash_map={TYPICAL: "solid", SLOWEST: "dot"},
        markers=True,
        labels={"when": "", "seconds": SECONDS},
        title="Recall time before an answer",
    ).update_traces(hovertemplate="%{fullData.name}: %{y:.3f} seconds<extra></extra>")


def latency_over_time(df: pd.DataFrame) -> go.Figure:
    """Typical (solid) and slowest 1 in 20 (dotted, same colour) per memory type · step, the
    legend at the figure's foot: beside the plot it took 60 % of a phone's 390 px."""
    pts = time_points(df)
    fig = figure(
        "line",
        pts,
        x="when",
        y="seconds",
        color="series",
        line_dash="percentile",
        line_dash_map={TYPICAL: "solid", SLOWEST: "dot"},
        markers=True,
        labels={"when": "", "seconds": SECONDS},
        title=f"Time per step, {BUCKETS[bucket_for(df)]}",
        # on a phone the legend takes a row per series: the plot keeps its height
        height=max(460, 360 + 24 * pts["series"].nunique()),
    )
    for trace in fig.data:  # px names a trace "series, percentile": one legend entry a series
        series, pct = trace.name.rsplit(", ", 1)
        trace.update(
            name=series,
            legendgroup=series,
            showlegend=pct == TYPICAL,
            hovertemplate=f"{series}, {pct}: %{{y:.3f}} seconds<extra></extra>",
        )
    # at the figure's foot (not the plot's): the margin grows with its rows, so the time
    # labels keep their place above it at any width
    legend = {"x": 0, "xanchor": "left", "yref": "container", "y": 0, "yanchor": "bottom"}
    return fig.update_layout(legend=legend, margin={"t": 48 + TOOLBAR_PX})


def latency_caption(fig: go.Figure) -> str:
    """What the time chart draws, said under it: its dotted lines only when it has one (a
    dotted trace of one period is a lone marker, no line)."""
    if any(t.line.dash == "dot" and len(t.x) > 1 for t in fig.data):
        return f"Solid lines: the {TYPICAL} time; dotted, same colour: the {SLOWEST}."
    return (
        f"Each line: a step's {TYPICAL} time. The {SLOWEST} is drawn too, dotted, once a "
        f"period holds {P95_MIN_SAMPLES} times of a step."
    )


#: The time table's columns, short for a phone (seconds; the count last: the times first)
STEP, TYPICAL_COL, SLOWEST_COL, MAX_COL, TIMES = (
    "Step",
    "Typical",
    "Slow 1 in 20",
    "Slowest",
    "Measured",
)


def latency_table(df: pd.DataFrame) -> pd.DataFrame:
    """Typical, slowest 1 in 20 and slowest seconds, and how often, per type · step."""
    g = df.groupby("series")["ms"]
    out = pd.DataFrame(
        {TYPICAL_COL: g.quantile(0.5), SLOWEST_COL: g.quantile(0.95), MAX_COL: g.max()}
    )
    return (out / 1000).assign(**{TIMES: g.size()}).rename_axis(STEP).reset_index()


def seconds_text(s: float) -> str:
    """A time in seconds as the bars and the table under them say it (`0.012`, `under 0.001`)."""
    return f"{s:.3f}" if s >= 0.001 else "under 0.001"


def latency_rows(table: pd.DataFrame) -> pd.DataFrame:
    """`latency_table` as the page lists it: its times in the words of the bars."""
    return table.assign(
        **{c: table[c].map(seconds_text) for c in (TYPICAL_COL, SLOWEST_COL, MAX_COL)}
    )


def latency_bars(table: pd.DataFrame) -> go.Figure:
    long = table.melt(id_vars=[STEP], value_vars=[TYPICAL_COL, SLOWEST_COL], var_name="pct")
    long["pct"] = long["pct"].map({TYPICAL_COL: TYPICAL, SLOWEST_COL: SLOWEST})
    fig = figure(
        "hbar",
        long,
        x="value",
        y=STEP,
        color="pct",
        color_discrete_map={TYPICAL: BLUE, SLOWEST: ORANGE},
        labels={STEP: "", "value": SECONDS, "pct": ""},
        title="Time per step, whole window",
        text=long["value"].map(seconds_text),
        barmode="group",
        height=max(HEIGHT, 110 + 46 * long[STEP].nunique()),
    )
    fig.update_traces(textfont_size=11)
    return fig.update_yaxes(categoryorder="category descending")


RECALL_OPS = {"recall", "search", WHOLE_RECALL, "embed_query"}
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
    in_group = OP_GROUPS.get(group, OP_GROUPS["All"])
    keep = df["op"].map({op: in_group(op) for op in df["op"].unique()})
    if types:
        keep &= type_words(df["type"]).isin(types)
    return df[keep]


def hit_rate_frame(df: pd.DataFrame) -> pd.DataFrame:
    """How often recall found something, per memory type, from samples with a hit or miss."""
    known = df[df["hit"].notna() & df["op"].isin(RECALL_OPS) & (df["type"] != "embedding")]
    hits = known["hit"].astype(bool)
    g = known.assign(hits=hits, misses=~hits).groupby("type")[["hits", "misses"]].sum()
    g = g.reset_index().assign(rate=lambda f: f["hits"] / (f["hits"] + f["misses"]))
    return g.assign(Type=type_words(g["type"]))


def hit_rate_figure(hr: pd.DataFrame) -> go.Figure:
    fig = figure(
        "bar",
        hr,
        x="Type",
        y="rate",
        color="Type",
        text=hr["rate"].map(lambda r: f"{r:.0%}"),
        hover_data={"hits": True, "misses": True},
        labels={"rate": "found something", "hits": "found", "misses": "found nothing", "Type": ""},
        title="How often recall found something",
        legend=False,
    )
    return fig.update_yaxes(range=[0, 1.1], tickformat=".0%")


#: A question's meaning remembered from an earlier asking (this process's or the store's
#: cache): recall starts without working it out again
SEEN, NEW = "Asked before: recall started sooner", "New question: meaning worked out"
QUESTION_COUNTERS = {
    "embed_cache_local_hit": SEEN,
    "embed_cache_redis_hit": SEEN,
    "embed_cache_miss": NEW,
}


def questions_frame(counters: dict[str, int]) -> pd.DataFrame:
    rows = [
        {"outcome": said, "questions": int(counters.get(k, 0))}
        for k, said in QUESTION_COUNTERS.items()
    ]
    return pd.DataFrame(rows).groupby("outcome", as_index=False, sort=False).sum()


def questions_figure(qf: pd.DataFrame) -> go.Figure:
    seen = qf.set_index("outcome")["questions"].get(SEEN, 0) / max(qf["questions"].sum(), 1)
    fig = figure(
        "donut",
        qf,
        x="outcome",
        y="questions",
        color="outcome",
        color_discrete_map={SEEN: GREEN, NEW: GREY},
        title="Questions asked before",
    )
    fig.update_traces(textinfo="percent", sort=False)
    return fig.add_annotation(text=f"{seen:.0%}<br>asked before", showarrow=False, font_size=16)


# --- memories ------------------------------------------------------------------------------


def counts_figure(counts: dict[str, int]) -> go.Figure:
    df = pd.DataFrame([{"Type": SERIES_LABELS.get(t, t), "count": n} for t, n in counts.items()])
    return figure(
        "bar",
        df,
        x="Type",
        y="count",
        color="Type",
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
        ts = sorted(t for t in map(own_date_ms, rows) if t > 0)
        if not ts:
            continue
        n = list(range(1, len(ts) + 1))
        if now_ms > ts[-1]:
            ts, n = [*ts, now_ms], [*n, n[-1]]
        one = pd.DataFrame({"when": _utc(pd.Series(ts)), "count": n, "type": mtype})
        frames.append(one.groupby("when", as_index=False).last())  # one point per instant
    out = pd.concat(frames) if frames else pd.DataFrame(columns=["when", "count", "type"])
    return out.assign(Type=type_words(out["type"]))


def growth_figure(gf: pd.DataFrame) -> go.Figure:
    return figure(
        "line",
        gf,
        x="when",
        y="count",
        color="Type",
        labels={"when": "", "count": "memories", "Type": ""},
        title="Growth over time",
        line_shape="hv",
    )


def growth_per_day_frame(rows_by_type: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    """New memories per day (UTC) and type, by each memory's own date (the growth chart shows
    the total; this one the pace)."""
    rows = [{"type": t, "ts": own_date_ms(r)} for t, items in rows_by_type.items() for r in items]
    df = pd.DataFrame(rows, columns=["type", "ts"]).query("ts > 0")
    df = df.assign(day=_utc(df["ts"]).dt.floor("D"))
    out = df.groupby(["day", "type"], as_index=False).size().rename(columns={"size": "new"})
    return out.assign(Type=type_words(out["type"])).sort_values(["day", "type"], ignore_index=True)


def growth_per_day_figure(gd: pd.DataFrame) -> go.Figure:
    return figure(
        "bar",
        gd,
        x="day",
        y="new",
        color="Type",
        labels={"day": "", "new": "new memories", "Type": ""},
        title="Growth per day",
        daily=True,
    )


#: What happened to a user's memories per day (`MemoryHistory.per_day` rows), in words
ACTIVITY = {
    "created": ("Remembered", GREEN),
    "replaced": ("Replaced", ORANGE),
    "merged": ("Merged", BLUE),
    "forgotten": ("Forgotten", RED),
    "expired": ("Expired", GREY),
}


def activity_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The activity rows (day, event, count) with a date and the event in words."""
    df = pd.DataFrame(rows, columns=["day", "event", "count"])
    said = {event: word for event, (word, _) in ACTIVITY.items()}
    return df.assign(day=pd.to_datetime(df["day"]), What=df["event"].map(said).fillna(df["event"]))


def activity_figure(af: pd.DataFrame) -> go.Figure:
    return figure(
        "bar",
        af,
        x="day",
        y="count",
        color="What",
        color_discrete_map=dict(ACTIVITY.values()),
        labels={"day": "", "count": "memories", "What": ""},
        title="What happened to your memories, per day",
        daily=True,  # months apart: the bars keep their place in time
        category_orders={"What": [word for word, _ in ACTIVITY.values()]},
    )


def activity_sentence(af: pd.DataFrame) -> str:
    """A single day of activity, said in words (one bar is not a chart)."""
    parts = [
        f"{int(n)} {w.lower()}" for w, n in af.groupby("What", sort=False)["count"].sum().items()
    ]
    return f"On {fmt_day(pd.Timestamp(af['day'].iloc[0]).to_pydatetime())}: {', '.join(parts)}."


# --- learning from chats and maintenance ---------------------------------------------------

#: a memory extraction found again (a duplicate), in words
KNOWN = "already known, not stored again"


def extraction_frame(counters: dict[str, int], outcomes: list[Any] | None = None) -> pd.DataFrame:
    """Extraction outcomes from the `extraction_*` counters; when there are none, from the
    agent's in-process extraction log (jobs by status, memories stored, duplicates)."""
    tally: dict[str, int] = {}
    for k, v in counters.items():
        if k.startswith("extraction_"):
            tally[words.extraction_words(k.removeprefix("extraction_"))] = int(v)
    for o in [] if tally else outcomes or []:
        for said, n in (
            (words.extraction_words(o.status), 1),
            ("memories stored", len(o.stored)),
            (KNOWN, int(o.duplicates)),
        ):
            tally[said] = tally.get(said, 0) + n
    rows = pd.DataFrame(tally.items(), columns=["outcome", "count"])
    return rows.sort_values("count", ascending=False)


def _outcome_color(outcome: str) -> str:
    for color, hints in (
        (RED, ("could not", "made up", "error", "invalid")),
        (GREY, ("already", "without a model")),
        (ORANGE, ("waiting", "retry")),
    ):
        if any(w in outcome.lower() for w in hints):
            return color
    return GREEN


def extraction_figure(ef: pd.DataFrame) -> go.Figure:
    fig = figure(
        "hbar",
        ef,
        x="count",
        y="outcome",
        color="outcome",
        color_discrete_map={o: _outcome_color(o) for o in ef["outcome"]},
        text="count",
        labels={"outcome": "", "count": "jobs / memories"},
        title="Memory extraction outcomes",
        legend=False,
        height=max(HEIGHT, 60 + 36 * len(ef)),
    )
    return fig.update_yaxes(categoryorder="total ascending")


MAINTENANCE_COLORS = {"Merged": BLUE, "Expired": RED}


def maintenance_days(history: list[dict[str, Any]]) -> pd.DataFrame:
    """Per day (UTC) of the real maintenance runs (`Maintenance.history()`): the memories
    consolidated and expired, those taken out of recall (both) and that as a share of the
    active memories before the day's first run (NaN for older runs), the runs."""
    totals = ["consolidated", "expired", "active_before"]
    df = pd.DataFrame(history, columns=["at_ms", *totals]).sort_values("at_ms")
    df[totals] = df[totals].apply(pd.to_numeric, errors="coerce").fillna(0).astype(int)
    df["day"] = _utc(df["at_ms"]).dt.floor("D")
    days = df.groupby("day", as_index=False).agg(
        Merged=("consolidated", "sum"),
        Expired=("expired", "sum"),
        active_before=("active_before", "first"),
        runs=("at_ms", "size"),
    )
    days["saved"] = days["Merged"] + days["Expired"]
    share = days["saved"] / days["active_before"].where(days["active_before"] > 0)
    return days.assign(share=share.round(3))


def maintenance_figure(days: pd.DataFrame) -> go.Figure:
    return figure(
        "bar",
        days,
        x="day",
        y=list(MAINTENANCE_COLORS),
        color_discrete_map=MAINTENANCE_COLORS,
        hover_data={"runs": True},
        labels={"day": "", "value": "memories", "variable": "", "runs": "runs that day"},
        title="Merged and expired per day",
        daily=True,
        barmode="group",
    )


def savings_figure(sf: pd.DataFrame) -> go.Figure:
    fig = figure(
        "bar",
        sf,
        x="day",
        y="saved",
        text=[f"{s:.0%}" if pd.notna(s) else "" for s in sf["share"]],
        hover_data={"active_before": True, "runs": True},
        labels={"day": "", "saved": "memories out of recall", "active_before": "active before"},
        title="Taken out of recall per day",
        daily=True,
        legend=False,
    )
    return fig.update_traces(marker_color=BLUE)
