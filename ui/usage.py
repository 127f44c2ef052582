"""Memories page, usage: how many stored answers used each memory and when last (a column),
memories no answer used (a filter), and the recent answers that used one memory (its detail),
each linked to its chat. From `memory.stores.usage`: stored answers, with or without the model."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from memory import ListQuery
from ui import state
from ui.errors import guard
from ui.format import fmt_day, md_text, no_images, snippet

if TYPE_CHECKING:
    from memory.models import Usage
    from ui.context import PageContext

#: Most memories the "Never used" filter reads to find those no answer used (then paged here).
NEVER_USED_SCAN = 500
COLUMN = "Used in"
USED_HELP = (
    "Answers that used this memory: the model was given it, or a reply without the model "
    "showed it. Incognito answers and answers given again without a memory are not counted."
)
COLUMN_CONFIG = {COLUMN: st.column_config.TextColumn(width=150, help=USED_HELP)}


def used_label(used: Usage | None) -> str:
    """`used in 3 answers, last on 26 Nov 2026`, or `used in no answer yet`."""
    if used is None:
        return "used in no answer yet"
    n = used.answers
    return f"used in {n} answer{'s' if n != 1 else ''}, last on {fmt_day(used.last_ms)}"


def usage_of(ctx: PageContext) -> dict[str, Usage]:
    usage: dict[str, Usage] = {}
    with guard("Reading which answers used the memories"):
        usage = ctx.coordinator.usage.of(ctx.user_id)
    return usage


def never_used_filter(key: str) -> bool:
    return st.toggle("Never used", key=key, help=f"Only memories no answer used. {USED_HELP}")


def list_page(
    ctx: PageContext, mtype: str, query: ListQuery, never_used: bool, usage: dict[str, Usage]
) -> tuple[list[dict[str, Any]], int]:
    """One page of the list; with `never_used`, of the memories no answer used (read from the
    first `NEVER_USED_SCAN` of the list: the store cannot filter by another key's content)."""
    if not never_used:
        return ctx.coordinator.list_memories(ctx.user_id, mtype, query)
    rows, _ = ctx.coordinator.list_memories(
        ctx.user_id, mtype, replace(query, page=1, page_size=NEVER_USED_SCAN)
    )
    unused = [r for r in rows if str(r.get("id")) not in usage]
    start = (query.page - 1) * query.page_size
    return unused[start : start + query.page_size], len(unused)


def with_usage(df: pd.DataFrame, usage: dict[str, Usage]) -> pd.DataFrame:
    """The table with its "Used in" column: after Expires where the table has one (the dates
    stay on screen without a horizontal scroll), else after the text."""
    at = df.columns.get_loc("Expires") + 1 if "Expires" in df.columns else 2
    labels = [used_label(usage.get(str(i))).removeprefix("used in ") for i in df["id"]]
    df.insert(at, COLUMN, labels)
    return df


def used_in(ctx: PageContext, memory_id: str, usage: dict[str, Usage]) -> None:
    """A memory's usage, and the questions of the recent answers that used it, each linked
    to its chat (the questions are read from the chats: a cleared chat has none to show)."""
    label = used_label(usage.get(memory_id))
    box = st.container(key=f"usage_{memory_id}")
    box.markdown(f"**{label[:1].upper()}{label[1:]}**")
    if memory_id not in usage:
        return
    lines: list[str] = []
    with guard("Reading the answers that used this memory"):
        asked: dict[str, dict[str, str]] = {}  # session -> turn id -> question
        for a in ctx.coordinator.usage.answers(ctx.user_id, memory_id):
            if a.session_id not in asked:
                asked[a.session_id] = {
                    str(m.metadata.get("turn_id")): m.content
                    for m in ctx.coordinator.recent_messages(ctx.user_id, a.session_id, n=200)
                    if m.role == "user"
                }
            question = asked[a.session_id].get(a.turn_id)
            when = fmt_day(a.at_ms)
            if question is None:
                lines.append(f"- {when}: an answer in a chat since cleared")
                continue
            # the address that opens this chat (read when a page opens)
            link = "./?" + urlencode({state.URL_USER: ctx.user_id, state.URL_CHAT: a.session_id})
            lines.append(f"- {when}: [{no_images(md_text(snippet(question, 90)))}]({link})")
    if lines:
        box.markdown("Recent answers that used it:\n" + "\n".join(lines))
