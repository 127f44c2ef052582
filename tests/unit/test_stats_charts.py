"""The Stats page's frames: p95 only where it is measured, activity said in words for a
single day, each memory by its own date; every date chart on the one date axis (few whole-unit
ticks in the app's date format; the browser test checks they never overlap)."""

from __future__ import annotations

import pandas as pd

from memory.activity import per_day
from ui import charts

DAY = 86_400_000


def _recall(ms: list[float], every_s: int) -> pd.DataFrame:
    t0 = pd.Timestamp("2026-11-26 10:00")
    when = [t0 + pd.Timedelta(seconds=i * every_s) for i in range(len(ms))]
    return pd.DataFrame({"when": when, "ms": ms, "series": "All types · recall"})


def test_the_slowest_1_in_20_is_drawn_and_listed_only_where_a_bucket_measures_it() -> None:
    """The walk saw "slowest 1 in 20" in the legend of a chart that drew no such line."""
    few = charts.time_points(_recall([5.0, 9.0, 40.0], every_s=1))
    assert set(few["percentile"]) == {charts.TYPICAL}
    fig = charts.recall_time_figure(_recall([5.0, 9.0, 40.0], every_s=1))
    assert [t.name for t in fig.data] == [charts.TYPICAL]
    burst = [5.0] * 36 + [50.0] * 4
    two = _recall(burst + burst, every_s=0)
    two.loc[40:, "when"] += pd.Timedelta(hours=1)
    many = charts.time_points(two).pivot(index="when", columns="percentile", values="seconds")
    assert len(many) == 2 and (many[charts.SLOWEST] > many[charts.TYPICAL]).all()
    assert many[charts.TYPICAL].iloc[0] == 0.005  # seconds, as the rest of the app says
    assert [t.name for t in charts.recall_time_figure(two).data] == [charts.TYPICAL, charts.SLOWEST]


def test_the_time_chart_s_caption_names_a_dotted_line_only_when_one_is_drawn() -> None:
    """The walk read "dotted, same colour: the slowest 1 in 20" under a chart with none."""
    few = charts.latency_over_time(_recall([5.0, 9.0, 40.0], every_s=1))
    assert "dotted, same colour" not in charts.latency_caption(few)
    burst = [5.0] * 36 + [50.0] * 4
    one = charts.latency_over_time(_recall(burst, every_s=0))  # one period: a lone marker
    assert [t.line.dash for t in one.data] == ["solid", "dot"]
    assert "dotted, same colour" not in charts.latency_caption(one)  # a second walk saw none
    two = _recall(burst + burst, every_s=0)
    two.loc[40:, "when"] += pd.Timedelta(hours=1)
    many = charts.latency_over_time(two)
    assert "dotted, same colour: the slowest 1 in 20" in charts.latency_caption(many)


def test_own_date_wins_over_the_write_time() -> None:
    assert charts.own_date_ms({"timestamp": 5, "created_at": 9}) == 5
    assert charts.own_date_ms({"created_at": 9}) == 9


def test_activity_per_day_counts_only_and_dates_replacements_by_the_new_memory() -> None:
    june, aug = 1_780_000_000_000, 1_780_000_000_000 + 70 * DAY
    rows = per_day(
        [
            {"id": "a", "timestamp": june, "superseded_by": "b", "event_type": "goal"},
            {"id": "b", "timestamp": aug, "superseded_by": "", "event_type": "goal"},
            {"id": "c", "timestamp": aug, "superseded_by": "", "event_type": "interaction"},
        ],
        [
            {"at_ms": aug, "member_ids": ["x", "y"], "undone": False},
            {"at_ms": aug, "member_ids": ["z"], "undone": True},
        ],  # fmt: skip
        __import__("collections").Counter({("2026-11-26", "forgotten"): 3}),
    )
    got = {(r["day"], r["event"]): r["count"] for r in rows}
    assert got == {
        (charts_day(june), "created"): 1,
        (charts_day(aug), "created"): 1,
        (charts_day(aug), "replaced"): 1,
        (charts_day(aug), "merged"): 2,
        ("2026-11-26", "forgotten"): 3,
    }
    one_day = charts.activity_frame([r for r in rows if r["day"] == "2026-11-26"])
    assert charts.activity_sentence(one_day) == "On 26 Nov 2026: 3 forgotten."


def charts_day(ms: int) -> str:
    from memory.activity import day_of

    return day_of(ms)


def _labels_on_axis(fig) -> int:  # type: ignore[no-untyped-def]
    """How many ticks a daily axis draws over the data's days (its step in days or months)."""
    axis = fig.layout.xaxis
    days = pd.Series(fig.data[0].x).pipe(pd.to_datetime)
    span = (days.max() - days.min()).days
    step = axis.dtick
    step_days = int(step) / DAY if not str(step).startswith("M") else 30.4 * int(str(step)[1:])
    return int(span // step_days) + 1


def test_a_daily_axis_keeps_to_a_few_whole_day_ticks_in_the_app_s_date_format() -> None:
    for days in (2, 5, 14, 40, 120, 400, 4000):
        rows = {"episodic": [{"timestamp": 1_780_000_000_000 + d * DAY} for d in range(days)]}
        fig = charts.growth_per_day_figure(charts.growth_per_day_frame(rows))
        assert _labels_on_axis(fig) <= charts.MAX_DATE_TICKS, (days, fig.layout.xaxis.dtick)
        assert fig.layout.xaxis.tickangle == 0
        formats = {s.value for s in fig.layout.xaxis.tickformatstops}
        assert formats == {"%H:%M:%S", "%H:%M", "%-d %b", "%b %Y"}
    assert charts.day_step(pd.Timestamp("2026-11-01"), pd.Timestamp("2026-11-03")) == DAY
    assert charts.day_step(pd.Timestamp("2026-01-01"), pd.Timestamp("2026-11-03")) == "M3"


def test_every_date_chart_of_stats_uses_the_one_date_axis() -> None:
    recall = _recall([5.0] * 60, every_s=60)
    samples = recall.assign(series="Episodic · search", type="episodic", op="search")
    history = [{"at_ms": 1_780_000_000_000 + d * DAY, "consolidated": 1, "expired": 1,
                "active_before": 10} for d in range(9)]  # fmt: skip
    activity = charts.activity_frame(
        [{"day": f"2026-11-{d:02d}", "event": "created", "count": 1} for d in range(1, 20)]
    )
    figures = [
        charts.recall_time_figure(recall),
        charts.latency_over_time(samples),
        charts.growth_figure(
            charts.growth_frame({"episodic": [{"timestamp": 1}, {"timestamp": 2}]})
        ),
        charts.maintenance_figure(charts.maintenance_days(history)),
        charts.savings_figure(charts.maintenance_days(history)),
        charts.activity_figure(activity),
    ]
    for fig in figures:
        assert fig.layout.xaxis.type == "date", fig.layout.title.text
        stops = [s.value for s in fig.layout.xaxis.tickformatstops]
        assert stops == [s["value"] for s in charts.DATE_FORMATS], fig.layout.title.text
        assert fig.layout.xaxis.tickangle == 0


def test_dates_read_one_way_in_text_grids_and_charts() -> None:
    from datetime import datetime

    from ui import format as fmt
    from ui.sessions import fallback_label

    when = datetime(2026, 11, 5, 9, 7)
    ms = int(when.timestamp() * 1000)
    assert (fmt.fmt_day(ms), fmt.fmt_ms_time(ms)) == ("5 Nov 2026", "5 Nov 2026, 09:07")
    assert fmt.fmt_day(when) == "5 Nov 2026" and fmt.fmt_day(None) == ""
    assert fallback_label("s-20261105-0907-ab12") == "Chat of 5 Nov 2026, 09:07"
    # the grids' moment.js tokens and the charts' d3 ones spell the same order
    assert (fmt.GRID_DAY, fmt.GRID_TIME) == ("D MMM YYYY", "D MMM YYYY, HH:mm")
    assert fmt.CHART_DAY == "%-d %b"


def _figure_texts(fig) -> list[str]:  # type: ignore[no-untyped-def]
    """What a person reads on a figure: title, axis titles, legend names, hovers, slices."""
    d = fig.to_plotly_json()
    layout = d["layout"]
    out = [str(layout.get("title", {}).get("text", ""))]
    out += [str((v.get("title") or {}).get("text", "")) for k, v in layout.items()
            if k.startswith(("xaxis", "yaxis"))]  # fmt: skip
    out += [str(a.get("text", "")) for a in layout.get("annotations", [])]
    for trace in d["data"]:
        out += [str(trace.get("name") or ""), str(trace.get("hovertemplate") or "")]
        out += [str(x) for x in (trace.get("labels") if trace.get("labels") is not None else [])]
    return out


def test_the_latency_and_cache_charts_read_in_words() -> None:
    """The walk's finds: "p50 (solid) and p95 (dotted), 1min buckets", "p50 (ms)", "Redis
    hit / In-process hit / Miss (model ran)"; tests/not_words.py is the one checker."""
    from tests.not_words import internal_words

    t0 = pd.Timestamp("2026-11-26 10:00")
    samples = [
        {"ts": int((t0 + pd.Timedelta(seconds=20 * i)).timestamp() * 1000), "type": mtype,
         "op": op, "ms": 3.0 + i % 7, "hit": True}
        for i in range(60)
        for mtype, op in (("episodic", "search"), ("all", "retrieve_all_context"),
                          ("episodic", "add"), ("embedding", "embed_query"))
    ]  # fmt: skip
    df = charts.samples_frame(samples)
    over_time = charts.latency_over_time(df)
    figures = [
        over_time,
        charts.latency_bars(charts.latency_table(df)),
        charts.recall_time_figure(charts.recall_samples(df)),
        charts.hit_rate_figure(charts.hit_rate_frame(df)),
        charts.questions_figure(
            charts.questions_frame(
                {"embed_cache_local_hit": 3, "embed_cache_redis_hit": 2, "embed_cache_miss": 1}
            )
        ),
    ]
    texts = [t for fig in figures for t in _figure_texts(fig)]
    assert [bad for t in texts for bad in internal_words(t)] == []
    assert over_time.layout.title.text == "Time per step, per minute"
    assert not any("millisecond" in t.lower() for t in texts)
    # both kinds of cache hit are one slice, said as what a person gains
    asked = charts.questions_frame({"embed_cache_local_hit": 3, "embed_cache_redis_hit": 2})
    assert dict(zip(asked["outcome"], asked["questions"], strict=True)) == {
        charts.SEEN: 5,
        charts.NEW: 0,
    }
    donut = figures[-1]  # 5 of the 6 questions asked before: what a person gains, in words
    assert donut.layout.annotations[0].text == "83%<br>asked before"
    assert donut.layout.title.text == "Questions asked before"
    # one step column and the times before the count: a phone's 390 px sees the times
    table = charts.latency_table(df)
    assert list(table.columns) == ["Step", "Typical", "Slow 1 in 20", "Slowest", "Measured"]
    assert list(charts.OP_GROUPS) == ["Before an answer", "Saving", "All"]
    assert set(charts.BUCKETS) >= {charts.bucket_for(df)}


def test_the_time_per_step_legend_is_under_the_plot_in_rows() -> None:
    """Beside the plot (vertical), it took 60 % of a phone's width from the time axis."""
    t0 = pd.Timestamp("2026-11-26 10:00")
    samples = [
        {"ts": int((t0 + pd.Timedelta(seconds=i)).timestamp() * 1000), "type": "episodic",
         "op": op, "ms": 2.0, "hit": None}
        for i in range(10) for op in ("search", "add")
    ]  # fmt: skip
    legend = charts.latency_over_time(charts.samples_frame(samples)).layout.legend
    assert legend.orientation == "h" and legend.yref == "container" and legend.yanchor == "bottom"


def test_the_time_table_says_a_short_time_as_the_bars_do() -> None:
    """ "This chat · recall" took 0.4 ms: the bar read "under 0.001", the table "0.000"."""
    samples = [
        {"ts": 1_790_000_000_000 + i, "type": "episodic", "op": "search", "ms": ms, "hit": True}
        for i, ms in enumerate([0.4, 0.4, 0.4, 12.0])
    ]
    table = charts.latency_table(charts.samples_frame(samples))
    bars = charts.latency_bars(table)
    said = {t for trace in bars.data for t in trace.text}
    rows = charts.latency_rows(table)
    assert rows.loc[0, charts.TYPICAL_COL] == "under 0.001" and "under 0.001" in said
    assert rows.loc[0, charts.MAX_COL] == "0.012"
    assert set(rows[[charts.TYPICAL_COL, charts.SLOWEST_COL]].iloc[0]) <= said
