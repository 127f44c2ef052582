"""The Stats page's activity timeline: what happened to a user's memories per day
(remembered, replaced, merged, forgotten, expired), from `MemoryHistory.per_day` rows.
Counts only; a single day is said in a sentence (one bar is not a chart)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ui.charts import figure
from ui.format import fmt_day

ACTIVITY_LABELS = {
    "created": "Remembered",
    "replaced": "Replaced",
    "merged": "Merged",
    "forgotten": "Forgotten",
    "expired": "Expired",
}
ACTIVITY_COLORS = {
    "Remembered": "#59A14F",
    "Replaced": "#F28E2B",
    "Merged": "#4C78A8",
    "Forgotten": "#E15759",
    "Expired": "#BAB0AC",
}


def activity_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The coordinator's activity rows (day, event, count) with a date and a label."""
    df = pd.DataFrame(rows, columns=["day", "event", "count"])
    if df.empty:
        return df.assign(What=pd.Series(dtype=str))
    df["day"] = pd.to_datetime(df["day"])
    df["What"] = df["event"].map(ACTIVITY_LABELS).fillna(df["event"])
    return df


def activity_figure(af: pd.DataFrame) -> go.Figure:
    return figure(
        "bar",
        af,
        x="day",
        y="count",
        color="What",
        color_discrete_map=ACTIVITY_COLORS,
        labels={"day": "", "count": "memories", "What": ""},
        title="What happened to your memories, per day",
        daily=True,  # months apart: the bars keep their place in time
        category_orders={"What": list(ACTIVITY_LABELS.values())},
    )


def activity_sentence(af: pd.DataFrame) -> str:
    """A single day of activity, said in words (one bar is not a chart)."""
    day = pd.Timestamp(af["day"].iloc[0]).to_pydatetime()
    parts = [
        f"{int(n)} {w.lower()}" for w, n in af.groupby("What", sort=False)["count"].sum().items()
    ]
    return f"On {fmt_day(day)}: " + ", ".join(parts) + "."
