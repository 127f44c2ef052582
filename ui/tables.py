"""Memory records → pandas frames + column configs for `st.dataframe` (Memories page), and
the tables' ticked rows kept on their memories when the rows change."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memory import words
from ui.format import (
    GRID_DAY,
    GRID_SECONDS,
    GRID_TIME,
    IMPORTANCE_HELP,
    event_label,
    fmt_duration,
    importance_word,
    plain_text,
    snippet,
    tag_list,
    to_datetime,
)
from ui.sessions import label as chat_label


def _pin(value: Any) -> str:
    return "📌" if _bool(value) else ""


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)


#: A column config that keeps a column out of the grid (ids: the selection reads them).
ID_HIDDEN = {"id": None}


def episodic_frame(
    rows: list[dict[str, Any]], chat_titles: dict[str, str] | None = None
) -> pd.DataFrame:
    """Columns in the order a reader scans them: the memory, kind, tags, status, dates, then
    bookkeeping (at 1280 px the status and the expiry stay on screen); the id is kept for the
    selection, never drawn. `chat_titles`: the user's chat names, for the Chat column."""
    titles = chat_titles or {}
    texts = {r.get("id"): plain_text(r.get("text") or r.get("description")) for r in rows}
    return pd.DataFrame(
        [
            {
                "📌": _pin(r.get("pinned")),
                "Memory": texts[r.get("id")],
                "Kind": event_label(str(r.get("event_type") or "")),
                "Tags": ", ".join(tag_list(r.get("tags"))),
                "Status": "↪ replaced"
                if r.get("superseded_by")
                else ("⏸ paused" if _bool(r.get("paused")) else "in use"),
                "When": to_datetime(r.get("timestamp") or r.get("created_at")),
                "Expires": to_datetime(r.get("expires_at")),
                "Importance": importance_word(r.get("importance") or 0.0),
                "Replaced by": _replaced_by(r.get("superseded_by"), texts),
                "Chat": chat_label(str(r["session_id"]), titles) if r.get("session_id") else "",
                "id": r.get("id", ""),
            }
            for r in rows
        ]
    )


def _replaced_by(newer: Any, texts: dict[Any, str]) -> str:
    """The memory that replaced this one, by its words ("a newer memory" when not listed)."""
    if not newer:
        return ""
    return f"“{snippet(texts[newer], 60)}”" if texts.get(newer) else "a newer memory"


#: Long text gets a fixed width and wraps (see ROW_HEIGHT in ui/browse.py); "large" (400 px)
#: pushed the dates off a laptop screen; 260 keeps the status and the expiry on a 1280 px one.
TEXT_WIDTH = 260
PIN_COLUMN = st.column_config.TextColumn(
    "📌", width=36, help="Pinned: kept when memories are cleaned up"
)
EPISODIC_COLUMNS = {
    "📌": PIN_COLUMN,
    "Memory": st.column_config.TextColumn(width=TEXT_WIDTH),
    "Kind": st.column_config.TextColumn(width=90),
    "When": st.column_config.DatetimeColumn(format=GRID_TIME, width=130),
    "Expires": st.column_config.DatetimeColumn(format=GRID_DAY, width=100, help="Empty: never"),
    "Status": st.column_config.TextColumn(
        width=90,  # "↪ replaced" whole
        help="Replaced memories are kept as history and hidden from recall",
    ),
    "Tags": st.column_config.TextColumn(width=80, help="The tags given when it was saved"),
    "Importance": st.column_config.TextColumn(width=80, help=IMPORTANCE_HELP),
    "Replaced by": st.column_config.TextColumn(
        help="Superseded memories are kept as history and hidden from recall"
    ),
    **ID_HIDDEN,
}


def _added_by(row: dict[str, Any], viewer: str | None) -> str:
    """Who added a fact, as a viewer may see it: an admin (or `none` mode, viewer None) sees
    the id; others see "you" or "shared" (a shared fact must not reveal its author)."""
    added_by = row.get("added_by") or ""
    if not added_by:
        return "built in"
    if viewer is None:
        return str(added_by)
    return "you" if added_by == viewer else "shared"


#: Where a fact came from, for the sources the app writes itself (memory.stores.semantic,
#: the CLI, the demo); a source a knowledge file or a person gave ("WHO") is shown as given
SOURCE_WORDS = {"knowledge_file": "built in", "cli": "the command line", "demo": "the demo"}


def _source(row: dict[str, Any], viewer: str | None) -> str:
    source = str(row.get("source") or "")
    if source == "user":  # typed in the app: by the viewer, or by someone else
        return "you" if viewer is not None and row.get("added_by") == viewer else "a person"
    return SOURCE_WORDS.get(source, source)


def semantic_frame(rows: list[dict[str, Any]], viewer: str | None = None) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "📌": _pin(r.get("pinned")),
                "Fact": plain_text(r.get("text") or r.get("fact")),
                "Category": r.get("category") or "",
                "Type": words.fact_type_word(r["fact_type"]) if r.get("fact_type") else "",
                "Source": _source(r, viewer),
                "Added by": _added_by(r, viewer),
                "When": to_datetime(r.get("timestamp")),
                "id": r.get("id", ""),
            }
            for r in rows
        ]
    )


SEMANTIC_COLUMNS = {
    "📌": PIN_COLUMN,
    "Fact": st.column_config.TextColumn(width=TEXT_WIDTH),
    "When": st.column_config.DatetimeColumn(format=GRID_TIME),
    **ID_HIDDEN,
}


def _runs(s: dict[str, Any], *, rate: bool = False) -> dict[str, Any]:
    """How the runs of a pattern, or of one tool sequence of it, went (`RunStats`), as both
    tables list them (`rate`: with the share of successes)."""
    runs, ok = int(s.get("executions") or 0), int(s.get("successes") or 0)
    return {
        "Runs": runs,
        "Successes": ok,
        "Failures": int(s.get("failures") or 0),
        **({"Success rate": round(100 * ok / runs) if runs else 0} if rate else {}),
        "How well it worked": round(100 * float(s.get("avg_score") or 0.0)),
        "Typical time": fmt_duration(s.get("avg_time_ms")),
        "Last used": to_datetime(s.get("last_used")),
    }


def procedural_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "📌": _pin(r.get("pinned")),
                "Question pattern": plain_text(r.get("query_pattern") or r.get("text")),
                "Best tools": words.tools_words(r.get("tool_sequence") or []) or "no tools",
                "Confidence": round(100 * float(r.get("confidence") or 0.0)),
                "Recommended": "✅ yes" if _bool(r.get("recommended")) else "not yet",
                **_runs(r),
                "id": r.get("id", ""),
            }
            for r in rows
        ]
    )


#: The runs' columns (`_runs`) of both tables; how well: the average run score
#: (agent.learning.success_score), as a share
RUN_COLUMNS = {
    "How well it worked": st.column_config.ProgressColumn(
        min_value=0,
        max_value=100,
        format="%d%%",
        help="100% when every tool of a run answered; less for errors, empty results or a "
        "correction from you (the average of its runs)",
    ),
    "Typical time": st.column_config.TextColumn(help="Average time of a run"),
    "Last used": st.column_config.DatetimeColumn(format=GRID_TIME),
}


PROCEDURAL_COLUMNS = {
    "📌": PIN_COLUMN,
    "Question pattern": st.column_config.TextColumn(width=TEXT_WIDTH),
    "Confidence": st.column_config.ProgressColumn(
        min_value=0, max_value=100, format="%d%%", help="Grows with successful runs"
    ),
    "Recommended": st.column_config.TextColumn(
        width=120,  # "Recommended" whole (at 1440 px it read "Recommende")
        help="Suggested to the agent once confidence passes the threshold",
    ),
    **RUN_COLUMNS,
    **ID_HIDDEN,
}


def sequences_frame(pattern: dict[str, Any]) -> pd.DataFrame:
    seqs = (pattern.get("sequences") or {}).values()
    return pd.DataFrame(
        [{"Tools": words.tools_words(s.get("tools") or []), **_runs(s, rate=True)} for s in seqs]
    )


SEQUENCE_COLUMNS = {
    "Success rate": st.column_config.ProgressColumn(min_value=0, max_value=100, format="%d%%"),
    **RUN_COLUMNS,
}


#: Who said a chat message, by its role
SPEAKERS = {"user": "You", "assistant": "Assistant"}


def messages_frame(messages: list[Any]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "When": to_datetime(getattr(m, "timestamp", None)),
                "Who": SPEAKERS.get(role := getattr(m, "role", ""), role),
                "Message": plain_text(getattr(m, "content", "")),
            }
            for m in messages
        ]
    )


MESSAGE_COLUMNS = {
    "When": st.column_config.DatetimeColumn(format=GRID_SECONDS),
    "Message": st.column_config.TextColumn(width=TEXT_WIDTH + 200),
}


# --- a selection that follows the memory, not the row number ---------------------------


def follow_ids(shown_before: list[str], ticked: list[int], shown_now: list[str]) -> list[int]:
    """The rows to tick in a table that now shows `shown_now`: those of the memories ticked
    (by row number) when it showed `shown_before`. A memory no longer shown is unticked."""
    ids = {shown_before[i] for i in ticked if 0 <= i < len(shown_before)}
    return [i for i, memory_id in enumerate(shown_now) if memory_id in ids]


def keep_selection_on_ids(key: str, shown_now: list[str]) -> None:
    """The grid keeps ticked row *numbers* when its rows change (a filter, a search, a page):
    before it is drawn, the selection is moved to the rows of the same memories."""
    ss = st.session_state
    ids_key = f"{key}__ids"
    shown_before = ss.get(ids_key)
    ss[ids_key] = shown_now
    if shown_before is None or shown_before == shown_now:
        return
    try:
        ticked = list(ss[key]["selection"]["rows"])
    except (KeyError, TypeError):
        return  # nothing ticked yet
    ss[key] = {"selection": {"rows": follow_ids(shown_before, ticked, shown_now),
                             "columns": [], "cells": []}}  # fmt: skip
