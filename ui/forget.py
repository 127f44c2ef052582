"""Memories page, *Forget* tab: a topic -> a preview to untick what stays -> the Undo window
every delete has (ui/undo.py) -> done (`memory.TopicForget`). Texts show in plain-text cells
only."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from memory import words
from ui import undo
from ui.errors import guard, run_action
from ui.format import fmt_ms_time, md_text, plain_text, snippet, type_label
from ui.manage import cleanup_tab
from ui.tables import SPEAKERS

if TYPE_CHECKING:
    from memory import MemoryCoordinator
    from memory.service import MemoryService
    from ui.context import PageContext

PREVIEW_KEY = "forget_preview"  # {"user_id", "query", "matches", "shared_facts"}
DONE_KEY = "forget_done"  # {"user_id", "query", "summary"}


def forget_and_clear_tab(ctx: PageContext) -> None:
    """Every way to delete for good, in one tab: a topic, then a chat or the whole user."""
    forget_tab(ctx)
    st.divider()
    cleanup_tab(ctx)


def forget_tab(ctx: PageContext) -> None:
    from memory import TopicForget

    # on the store's parts, not through the MemoryService protocol: the app's coordinator
    forgetter = TopicForget.of(ctx.coordinator)  # type: ignore[arg-type]
    st.caption(
        f"Deletes everything **{md_text(ctx.user_id)}**'s memory holds about a topic: the "
        "memories, facts, ways of working and chat messages that mention it, and what came "
        "from them (earlier versions, merges, summaries, answer details, searches kept to "
        "answer faster). "
        "This cannot be undone once the countdown ends."
    )
    _done(ctx.user_id)
    if undo.notice_slot(ctx.coordinator, "forget"):
        return
    with st.form("fg_form", border=False):
        c1, c2 = st.columns([5, 1], vertical_alignment="bottom")
        query = c1.text_input("Topic", key="fg_query", placeholder="e.g. a name or a subject")
        asked = c2.form_submit_button("Preview", key="fg_preview", icon="🔎")
    if asked:
        st.session_state.pop(DONE_KEY, None)
        with guard("Finding the topic"):
            preview = forgetter.preview(ctx.user_id, query)
            st.session_state[PREVIEW_KEY] = preview.model_dump(mode="json")
    _preview(ctx.coordinator, ctx.user_id)


def _items(n: int) -> str:
    """`1 item`, `4 items`: the unit of the preview's rows, as the result says it."""
    from memory import TopicForget

    return TopicForget.counted(n, "items")


def _preview(coord: MemoryService, user_id: str) -> None:
    p: dict[str, Any] | None = st.session_state.get(PREVIEW_KEY)
    if not p or p["user_id"] != user_id:
        return
    matches = p["matches"]
    if p["shared_facts"]:
        st.caption(
            f"{p['shared_facts']} of your facts that mention it were shared with everyone by "
            "an admin: they stay (ask an admin)."
        )
    if not matches:
        st.info(f"Nothing of {md_text(user_id)}'s mentions “{md_text(snippet(p['query'], 60))}”.")
        return
    if any(m["partial"] for m in matches):
        st.caption(
            "Rows that hold only some of the topic's words (“trail” of “trail mix”) are not "
            "ticked: tick the ones that are about it too."
        )
    frame = pd.DataFrame(
        {
            "forget": [not m["partial"] for m in matches],
            "text": [plain_text(m["text"]) for m in matches],
            "kind": [
                " · ".join(filter(None, [type_label(m["memory_type"]), _kind(m)])) for m in matches
            ],
            "date": [fmt_ms_time(m["timestamp"]) for m in matches],
            "found": [_found_by(m) for m in matches],
        }
    )
    edited = st.data_editor(
        frame,
        key="fg_table",
        hide_index=True,
        width="stretch",
        disabled=["text", "kind", "date", "found"],
        column_config={
            "forget": st.column_config.CheckboxColumn("Forget", width="small"),
            "text": st.column_config.TextColumn("Text", width="large"),
            "kind": st.column_config.TextColumn("Kind"),
            "date": st.column_config.TextColumn("Date"),
            "found": st.column_config.TextColumn(
                "Found by", help="The topic's words in the text, or a search for the topic"
            ),
        },
    )
    keep = [m["ref"] for m, tick in zip(matches, edited["forget"], strict=True) if not tick]
    n = len(matches) - len(keep)
    st.button(
        f"Forget {_items(n)} and what came from {'it' if n == 1 else 'them'}",
        key="fg_go",
        type="primary",
        icon="🧹",
        disabled=n == 0,
        on_click=_request,
        args=(coord, user_id, p["query"], keep, n),
    )


def _found_by(match: dict[str, Any]) -> str:
    if match["partial"]:
        return "some of its words"
    return "its words" if match["score"] is None else "a search for it"


def _request(coord: MemoryService, user_id: str, query: str, keep: list[str], n: int) -> None:
    about = f"{_items(n)} about “{md_text(snippet(query, 60))}”"
    run = partial(_forget, user_id, query, keep)
    undo.offer(coord, "forget", f"⏳ Forgetting {about}", "Nothing was forgotten.", run)
    st.session_state.pop(PREVIEW_KEY, None)


def _forget(user_id: str, query: str, keep: list[str], coord: MemoryCoordinator) -> None:
    from memory import TopicForget

    ok, report = run_action(
        "Forgetting the topic", TopicForget.of(coord).forget, user_id, query, keep=keep
    )
    if ok:
        st.session_state[DONE_KEY] = {
            "user_id": user_id,
            "query": query,
            "summary": report.summary(),
        }


def _done(user_id: str) -> None:
    d = st.session_state.get(DONE_KEY)
    if not d or d["user_id"] != user_id:
        return
    st.success(f"Forgot “{md_text(snippet(d['query'], 60))}”: {md_text(d['summary'])}.", icon="🧹")


def _kind(match: dict[str, Any]) -> str:
    """A previewed row's kind in words: "Fact (earlier version)", "Training", "You"; none for
    a way of working (its type says it all)."""
    kind, earlier = match["kind"], " (earlier version)"
    base = kind.removesuffix(earlier)
    if match["memory_type"] == "procedural":
        return ""
    if match["memory_type"] == "episodic":
        said = words.kind_word(base)
    elif match["memory_type"] == "short_term":
        said = SPEAKERS.get(base.removesuffix(" message"), base)
    else:
        said = base[:1].upper() + base[1:]
    return said + (earlier if kind.endswith(earlier) else "")
