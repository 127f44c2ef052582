"""Memories page, browsing: one tab per memory type with filters, a table whose rows can be
selected, and actions on the selection (edit one, pin/unpin, delete several after a
confirmation). Editing goes through `coordinator.update_memory`, which re-embeds changed text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from memory import ListQuery, words
from memory.models import EventType
from ui import phone, state, undo
from ui import sessions as sessions_ui
from ui import usage as usage_ui
from ui.errors import guard, run_action
from ui.expiry import expiry_inputs, expiry_value
from ui.format import (
    IMPORTANCE_VALUES,
    REMEMBERED_KINDS,
    day_end_ms,
    day_start_ms,
    event_label,
    fmt_ms_time,
    hidden_tags,
    importance_picker,
    importance_word,
    md_text,
    no_images,
    parse_tags,
    snippet,
    tag_list,
    type_label,
)
from ui.pause import pause_actions
from ui.row_actions import save_edit
from ui.tables import (
    EPISODIC_COLUMNS,
    MESSAGE_COLUMNS,
    PROCEDURAL_COLUMNS,
    SEMANTIC_COLUMNS,
    SEQUENCE_COLUMNS,
    episodic_frame,
    keep_selection_on_ids,
    messages_frame,
    procedural_frame,
    semantic_frame,
    sequences_frame,
)

if TYPE_CHECKING:
    from ui.context import PageContext

PAGE_SIZE = 50
PINNED_CHOICES = {"All": None, "Pinned": True, "Not pinned": False}


# --- shared pieces -------------------------------------------------------------------------


def _page_picker(key: str, total: int) -> int:
    pages = max(1, -(-total // PAGE_SIZE))
    if pages == 1:
        return 1
    return int(st.number_input(f"Page (of {pages})", 1, pages, 1, key=key))


#: Rows tall enough for three lines: the grid wraps text (at word ends) only in rows taller
#: than 4rem; a one-line row cut a memory mid-word.
ROW_HEIGHT = 72
HEADER_HEIGHT = 38
NO_SELECTION: dict[str, dict[str, list[Any]]] = {
    "selection": {"rows": [], "columns": [], "cells": []}
}


def _table(
    df: pd.DataFrame, mtype: str, columns: dict[str, Any], *, empty: str = "–"
) -> list[dict[str, Any]]:
    """The selected rows, as dicts. `empty`: what a missing value reads as (an episodic memory
    without expiry: "never"). Memories whose delete waits for its Undo are not shown; a ticked
    memory stays ticked whatever the filters do to its row number."""
    key = f"tbl_{mtype}"
    df = df[~df["id"].astype(str).isin(undo.pending_ids())].reset_index(drop=True)
    keep_selection_on_ids(key, df["id"].astype(str).tolist())
    phone.readable_rows(df, key)
    event = st.dataframe(
        df,
        hide_index=True,
        column_config=columns,
        key=key,
        on_select="rerun",
        selection_mode="multi-row",
        row_height=ROW_HEIGHT,
        placeholder=empty,
        height=min(HEADER_HEIGHT + ROW_HEIGHT * max(len(df), 1), 560),
    )
    return [df.iloc[i].to_dict() for i in event.selection.rows if 0 <= i < len(df)]


def _not_waiting(total: int, rows: list[dict[str, Any]]) -> int:
    """A list's count less its shown rows whose delete waits for its Undo, which `_table`
    leaves out (the delete was asked from this page of the list)."""
    waiting = undo.pending_ids()
    return total - sum(str(r.get("id")) in waiting for r in rows)


def clear_selection(mtype: str) -> None:
    """Untick every row of a type's table (from a callback, before the table is drawn): after
    a save or a delete the ticked row numbers must not carry over into the next bulk action."""
    st.session_state[f"tbl_{mtype}"] = NO_SELECTION


def _bulk_actions(ctx: PageContext, mtype: str, selected: list[dict]) -> None:
    """Pin/unpin and delete for the selected rows; a delete offers Undo (ui/undo.py)."""
    ids = [str(r["id"]) for r in selected]
    undo.notice_slot(ctx.coordinator, mtype)
    if not ids:
        st.caption("Select rows (tick the box at the left of a row) to edit, pin or delete them.")
        return
    with st.container(key=f"selected_{mtype}"):
        st.markdown(f"**Selected:** {_named(selected)}")
    row = st.container(horizontal=True)
    row.button(
        f"Delete {len(ids)} selected",
        key=f"delete_sel_{mtype}",
        icon="🗑️",
        help=f"Undo is offered for {undo.UNDO_S:g} seconds",
        on_click=_on_delete_many,
        args=(ctx, mtype, selected),
    )
    row.button(
        "Pin",
        key=f"pin_sel_{mtype}",
        icon="📌",
        on_click=_on_pin,
        args=(ctx, mtype, ids, True),
    )
    row.button(
        "Unpin",
        key=f"unpin_sel_{mtype}",
        on_click=_on_pin,
        args=(ctx, mtype, ids, False),
    )
    if mtype == "episodic":
        pause_actions(row, ctx, ids)


def _on_delete_many(ctx: PageContext, mtype: str, selected: list[dict[str, Any]]) -> None:
    items = [(mtype, str(r["id"]), _row_text(r)) for r in selected]
    undo.request_delete(ctx.coordinator, ctx.user_id, items, mtype, ctx.is_admin)
    clear_selection(mtype)  # the old row numbers point at other rows now


SELECTION_NAMED = 5  # memories named one by one before "and N more"


def _named(selected: list[dict[str, Any]]) -> str:
    """The selected memories by their words, so a bulk action says what it will touch."""
    names = [f"“{no_images(md_text(snippet(_row_text(r), 60)))}”" for r in selected]
    more = len(names) - SELECTION_NAMED
    return ", ".join(names[:SELECTION_NAMED]) + (f" and {more} more" if more > 0 else "")


def _row_text(row: dict[str, Any]) -> str:
    """A table row's words (its text column is named after the memory type)."""
    return str(row.get("Memory") or row.get("Fact") or row.get("Question pattern") or "")


def _on_pin(ctx: PageContext, mtype: str, ids: list[str], pinned: bool) -> None:
    pin, user_id, as_admin = ctx.coordinator.update_memory, ctx.user_id, ctx.is_admin
    done = sum(
        int(run_action("Pinning", pin, user_id, mtype, i, as_admin, pinned=pinned)[0]) for i in ids
    )
    if done:
        state.flash(f"{'Pinned' if pinned else 'Unpinned'} {done}.")


def _get_record(ctx: PageContext, mtype: str, memory_id: str) -> dict[str, Any] | None:
    record: dict[str, Any] | None = None
    with guard("Loading the memory"):
        record = ctx.coordinator.get_memory(ctx.user_id, mtype, memory_id)
    return record


def _editor_title(what: str, text: Any) -> None:
    """The editor is titled by the memory's own words (an id means nothing to a reader)."""
    st.markdown(f"##### ✏️ Edit {what}: “{no_images(md_text(snippet(text, 90)))}”")


# --- episodic ------------------------------------------------------------------------------


def episodic_tab(ctx: PageContext) -> None:
    # pills, not a multiselect: its list stays open over the table after every pick
    kinds = (
        st.pills(
            "Kind",
            [e.value for e in EventType],
            selection_mode="multi",
            format_func=event_label,
            key="f_ep_kinds",
            help="None picked: every kind",
        )
        or []
    )
    f2, f3, f4 = st.columns(3)
    value = f2.date_input("Date range", value=[], key="f_ep_dates", format="YYYY-MM-DD")
    dates = list(value) if isinstance(value, list | tuple) else ([value] if value else [])
    since = day_start_ms(dates[0]) if dates else None
    until = day_end_ms(dates[-1]) if dates else None
    tags = parse_tags(f3.text_input("Tags", key="f_ep_tags", placeholder="diet, running"))
    pinned = PINNED_CHOICES[f4.selectbox("Pinned", list(PINNED_CHOICES), key="f_ep_pinned")]
    t1, t2, t3 = st.columns(3)
    with t3:
        never = usage_ui.never_used_filter("f_ep_never")
    show_old = t1.toggle(
        "Show replaced memories",
        value=True,
        key="f_ep_superseded",
        help="When a fact changes, the old memory is kept as history but no longer recalled.",
    )
    talk = t2.toggle(
        "Show conversations",
        value=False,
        key="f_ep_talk",
        help="Each exchange with the agent is kept as a memory of the kind "
        f"{event_label('interaction')} (what was said is still recalled). Hidden here by "
        "default: they are the conversation, not things remembered about you.",
    )
    if not kinds and not talk:
        kinds = REMEMBERED_KINDS
    rows: list[dict[str, Any]] = []
    total, usage = 0, usage_ui.usage_of(ctx)
    with guard("Loading episodic memories"):
        page = st.session_state.get("f_ep_page", 1)
        rows, total = usage_ui.list_page(
            ctx,
            "episodic",
            ListQuery(
                event_types=kinds or None,
                tags=tags or None,
                since_ms=since,
                until_ms=until,
                pinned=pinned,
                include_superseded=show_old,
                page=page,
                page_size=PAGE_SIZE,
            ),
            never,
            usage,
        )
    filtered = bool((kinds and kinds != REMEMBERED_KINDS) or tags or since or pinned is not None)
    filtered = filtered or never
    if not rows:
        if filtered:
            st.info("No episodic memory matches these filters.", icon="🔎")
        else:
            st.info(
                "No episodic memories yet. Tell the agent about yourself on the **Chat** page "
                "(“remember that I run every Sunday”), or add one in the **➕ Add** tab.",
                icon="📔",
            )
        return
    # "memories" is the tile's count (ui/counts.py): these rows are what the view lists
    total = _not_waiting(total, rows)
    st.caption(
        f"{total} listed"
        + (" (matching the filters)" if filtered else "")
        + ("; replaced memories kept as history included" if show_old else "")
    )
    titles = sessions_ui.titles_of(ctx.coordinator, ctx.user_id)
    df = usage_ui.with_usage(episodic_frame(rows, titles), usage)
    columns = {**EPISODIC_COLUMNS, **usage_ui.COLUMN_CONFIG}
    selected = _table(df, "episodic", columns, empty="never")
    _page_picker("f_ep_page", total)
    _bulk_actions(ctx, "episodic", selected)
    if len(selected) == 1:
        _edit_episodic(ctx, str(selected[0]["id"]))
        usage_ui.used_in(ctx, str(selected[0]["id"]), usage)


def _edit_episodic(ctx: PageContext, memory_id: str) -> None:
    rec = _get_record(ctx, "episodic", memory_id)
    if not rec:
        return
    p = f"ed_ep_{memory_id}"
    text = rec.get("text") or rec.get("description") or ""
    _editor_title("memory", text)
    with st.container(border=True, key=f"{p}_box"):
        st.text_area("Memory", value=text, key=f"{p}_text")
        c1, c2 = st.columns(2)
        kinds = [e.value for e in EventType]
        current_kind = str(rec.get("event_type") or "interaction")
        c1.selectbox(
            "Kind",
            kinds,
            index=kinds.index(current_kind) if current_kind in kinds else 0,
            format_func=event_label,
            key=f"{p}_kind",
        )
        c2.text_input("Tags", value=", ".join(tag_list(rec.get("tags"))), key=f"{p}_tags")
        c3, c4 = st.columns(2)
        importance_picker(c3, f"{p}_importance", rec.get("importance") or 0.5)
        with c4:
            expiry_inputs(p, rec.get("expires_at"))
        # the app wrote its context (the demo's, a chat's, an editor's): said in words; a
        # note a person wrote (or none yet) is theirs to change
        said = words.DEMO_ORIGIN if hidden_tags(rec.get("tags")) else rec.get("context")
        if origin := words.origin_words(said):
            st.caption(f"Where it came from: {origin}")
        else:
            st.text_input(
                "Note",
                value=rec.get("context") or "",
                key=f"{p}_context",
                placeholder="Where or why this was learned",
            )
        st.checkbox("📌 Pinned", value=bool(rec.get("pinned")), key=f"{p}_pinned")
        st.button(
            "Save changes",
            type="primary",
            key=f"{p}_save",
            on_click=_on_save,
            args=(ctx, "episodic", memory_id, rec),
        )
    if rec.get("superseded_by"):
        try:  # named by its text (an id means nothing to a reader); it may be gone
            newer = ctx.coordinator.get_memory(ctx.user_id, "episodic", str(rec["superseded_by"]))
        except Exception:  # noqa: BLE001 - the caption then says "a newer memory"
            newer = {}
        by = newer.get("text") or newer.get("description")
        what = f"“{md_text(snippet(str(by), 240))}”" if by else "a newer memory"
        st.caption(f"Replaced by {what}: kept as history, not recalled.")


def _on_save(ctx: PageContext, mtype: str, memory_id: str, rec: dict[str, Any]) -> None:
    """A saved row is unticked: left ticked, it would join the next bulk delete ("Delete 3
    selected") without the user choosing it again."""
    changes = (_episodic_changes if mtype == "episodic" else _fact_changes)(memory_id, rec)
    if save_edit(
        ctx.coordinator,
        ctx.user_id,
        mtype,
        memory_id,
        changes,
        or_else="delete the memory",
        as_admin=ctx.is_admin,
    ):
        clear_selection(mtype)


def _episodic_changes(memory_id: str, rec: dict[str, Any]) -> dict[str, Any]:
    ss, p = st.session_state, f"ed_ep_{memory_id}"
    changes: dict[str, Any] = {}
    if ss[f"{p}_text"].strip() != (rec.get("text") or rec.get("description") or ""):
        changes["text"] = ss[f"{p}_text"]
    if ss[f"{p}_kind"] != str(rec.get("event_type") or "interaction"):
        changes["event_type"] = ss[f"{p}_kind"]
    # the app's own marks (the demo's) are not shown, and stay
    tags = parse_tags(ss[f"{p}_tags"]) + hidden_tags(rec.get("tags"))
    if tags != list(rec.get("tags") or []):
        changes["tags"] = tags
    # a word changes the number only when it is another word: 0.9 stays 0.9 while "high"
    if (said := ss[f"{p}_importance"]) != importance_word(rec.get("importance") or 0.5):
        changes["importance"] = IMPORTANCE_VALUES[said]
    expires = expiry_value(p)
    if expires != rec.get("expires_at") and not (expires is None and not rec.get("expires_at")):
        changes["expires_at"] = expires
    note = ss.get(f"{p}_context")  # None: the app's context, shown in words, not editable
    if note is not None and note != (rec.get("context") or ""):
        changes["context"] = note
    if ss[f"{p}_pinned"] != bool(rec.get("pinned")):
        changes["pinned"] = ss[f"{p}_pinned"]
    return changes


# --- semantic ------------------------------------------------------------------------------


def semantic_tab(ctx: PageContext) -> None:
    f1, f2, f3 = st.columns([3, 2, 2])
    category = f1.text_input("Category", key="f_sem_category", placeholder="All categories")
    mine = f2.toggle("Only facts I added", key="f_sem_mine")
    with f2:
        never = usage_ui.never_used_filter("f_sem_never")
    pinned = PINNED_CHOICES[f3.selectbox("Pinned", list(PINNED_CHOICES), key="f_sem_pinned")]
    rows: list[dict[str, Any]] = []
    total, usage = 0, usage_ui.usage_of(ctx)
    with guard("Loading semantic facts"):
        page = st.session_state.get("f_sem_page", 1)
        rows, total = usage_ui.list_page(
            ctx,
            "semantic",
            ListQuery(
                category=category.strip() or None,
                pinned=pinned,
                page=page,
                page_size=PAGE_SIZE,
                added_by=ctx.user_id if mine else None,
            ),
            never,
            usage,
        )
    if not rows:
        st.info(
            "No facts match. Some facts are built in and users add others: add one in "
            f"the **➕ Add** tab (type *{type_label('semantic', with_icon=False)}*).",
            icon="📚",
        )
        return
    total = _not_waiting(total, rows)
    st.caption(f"{total} fact{'s' if total != 1 else ''}")
    df = usage_ui.with_usage(semantic_frame(rows, None if ctx.is_admin else ctx.user_id), usage)
    selected = _table(df, "semantic", {**SEMANTIC_COLUMNS, **usage_ui.COLUMN_CONFIG})
    if not mine:
        _page_picker("f_sem_page", total)
    _bulk_actions(ctx, "semantic", selected)
    if len(selected) == 1:
        _edit_semantic(ctx, str(selected[0]["id"]))
        usage_ui.used_in(ctx, str(selected[0]["id"]), usage)


def _edit_semantic(ctx: PageContext, memory_id: str) -> None:
    rec = _get_record(ctx, "semantic", memory_id)
    if not rec:
        return
    p, old = f"ed_sem_{memory_id}", _fact_fields(rec)
    _editor_title("fact", old["text"])
    locked = bool(rec.get("is_shared")) and not ctx.is_admin
    if locked:
        st.info(
            "Shared knowledge, recalled for every user: only an admin can change it.", icon="🔒"
        )
    with st.form(p, border=True):
        st.text_area("Fact", value=old["text"], key=f"{p}_text")
        # category, fact type and source side by side; the context under them, whole
        places = [*st.columns(3), st.container()]
        for where, (field, label) in zip(places, FACT_LABELS.items(), strict=True):
            where.text_input(label, value=old[field], key=f"{p}_{field}")
        st.checkbox("📌 Pinned", value=old["pinned"], key=f"{p}_pinned")
        if ctx.is_admin and rec.get("added_by"):  # a user's fact: an admin may share it
            st.checkbox(
                "🌐 Shared with every user",
                value=old["shared"],
                key=f"{p}_shared",
                help="Shared facts are recalled for every user and change only by admins.",
            )
        st.form_submit_button(
            "Save changes",
            type="primary",
            key=f"{p}_save",
            disabled=locked,
            on_click=_on_save,
            args=(ctx, "semantic", memory_id, rec),
        )


#: A fact's fields under their editor's labels (beside its text, pin and sharing)
FACT_LABELS = {
    "category": "Category",
    "fact_type": "Fact type",
    "source": "Source",
    "context": "Context",
}


def _fact_fields(rec: dict[str, Any]) -> dict[str, Any]:
    """A fact's editable fields as its editor shows them, and as a save compares them."""
    return {
        "text": rec.get("text") or rec.get("fact") or "",
        **{field: rec.get(field) or "" for field in FACT_LABELS},
        "pinned": bool(rec.get("pinned")),
        "shared": bool(rec.get("shared")),
    }


def _fact_changes(memory_id: str, rec: dict[str, Any]) -> dict[str, Any]:
    ss, p = st.session_state, f"ed_sem_{memory_id}"
    old = _fact_fields(rec)
    new = {k: ss.get(f"{p}_{k}", v) for k, v in old.items()}  # sharing: an admin's only
    new["text"] = new["text"].strip()
    return {k: v for k, v in new.items() if v != old[k]}


# --- procedural ----------------------------------------------------------------------------


def procedural_tab(ctx: PageContext) -> None:
    rows: list[dict[str, Any]] = []
    total = 0
    with guard("Loading procedural patterns"):
        rows, total = ctx.coordinator.list_memories(
            ctx.user_id, "procedural", ListQuery(sort_by="last_used", page_size=PAGE_SIZE)
        )
    if not rows:
        st.info(
            "No ways of working learned yet. When the agent answers with tools, it records which "
            "tool sequence worked for which kind of question, and its confidence grows with "
            "each successful run. Ask a question that needs a tool on the **Chat** page.",
            icon="🛠️",
        )
        return
    total = _not_waiting(total, rows)
    st.caption(
        f"{total} pattern{'s' if total != 1 else ''}. A pattern is recommended to the agent "
        f"once its confidence passes {ctx.settings.procedural_recommend_threshold:.0%}."
    )
    df = procedural_frame(rows)
    selected = _table(df, "procedural", PROCEDURAL_COLUMNS)
    _bulk_actions(ctx, "procedural", selected)
    by_id = {str(r.get("id")): r for r in rows}
    for sel in selected[:3]:
        pattern = by_id.get(str(sel["id"])) or {}
        pattern_text = md_text(snippet(sel["Question pattern"], 80))
        st.markdown(f"##### Ways tried for “{pattern_text}”")
        seq = sequences_frame(pattern)
        if seq.empty:
            st.caption("No per-sequence statistics recorded.")
        else:
            st.dataframe(
                seq, hide_index=True, column_config=SEQUENCE_COLUMNS, key=f"seq_{sel['id']}"
            )


# --- short-term ----------------------------------------------------------------------------


def short_term_tab(ctx: PageContext) -> None:
    sessions: list[str] = []
    with guard("Listing your chats"):
        sessions = list(ctx.coordinator.short_term.sessions(ctx.user_id) or [])
    current = ctx.session_id  # format_func must not read session state (AppTest calls it)
    options = list(dict.fromkeys([current, *sessions]))
    titles = sessions_ui.titles_of(ctx.coordinator, ctx.user_id)  # the sidebar's names
    names = sessions_ui.distinct({s: sessions_ui.label(s, titles) for s in options})
    session = st.selectbox(
        "Chat",
        options,
        key="f_st_session",
        format_func=lambda s: f"{names[s]} (current)" if s == current else names[s],
    )
    messages: list[Any] = []
    with guard("Loading messages"):
        messages = list(ctx.coordinator.recent_messages(ctx.user_id, session, n=200) or [])
    if not messages:
        st.info("This chat has no messages yet. Chat on the **Chat** page.", icon="💬")
        return
    last = fmt_ms_time(getattr(messages[-1], "timestamp", 0))
    st.caption(f"{len(messages)} messages · last {last}")
    st.dataframe(
        messages_frame(messages),
        hide_index=True,
        column_config=MESSAGE_COLUMNS,
        key="tbl_short_term",
        row_height=ROW_HEIGHT,
    )
