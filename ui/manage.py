"""Memories page, managing: hybrid search, add, export/import, and the clean-up actions
(clear a session, purge a user), each behind an explicit confirmation."""

from __future__ import annotations

import json
import re
from datetime import date
from typing import TYPE_CHECKING, Any

import streamlit as st

from memory import SearchFilter, safe_to_parse, words
from memory.errors import ImportFileError, InvalidInputError
from memory.models import SHOWN_FLOOR, EventType, shown_hits
from ui import sessions as sessions_ui
from ui import state
from ui.add import add_form
from ui.details import HIT_COLUMNS, hits_frame, why_words
from ui.errors import guard, message_for
from ui.format import (
    NO_MORE_RELEVANT,
    event_label,
    md_text,
    no_images,
    type_label,
)

if TYPE_CHECKING:
    from ui.context import PageContext


# --- search --------------------------------------------------------------------------------


#: The search floor's option, as a person asks it (the number stays on the slider)
CLOSENESS = "How close a match must be"


def search_tab(ctx: PageContext) -> None:
    with st.form("search_form", border=False):
        c1, c2, c3 = st.columns([4, 3, 1], vertical_alignment="bottom")
        query = c1.text_input("Search", key="s_query", placeholder="e.g. what does she eat")
        types = c2.pills(  # pills wrap whole; a multiselect's chips were cut ("📚 Sema")
            "Types",
            ["episodic", "semantic"],
            selection_mode="multi",
            default=["episodic", "semantic"],
            format_func=type_label,
            key="s_types",
        )
        c3.form_submit_button("Search", type="primary", key="s_go", icon="🔎")
        with st.expander("Options"):
            o1, o2 = st.columns(2)
            k = o1.slider("Results per type", 1, 30, 10, key="s_k")
            min_score = o2.slider(
                CLOSENESS,
                0.0,
                1.0,
                SHOWN_FLOOR,
                0.01,
                key="s_min",
                help="0 shows every match, 1 only the closest. Weaker matches are hidden: "
                "lower it to see them too.",
            )
            kinds = st.pills(  # a multiselect's list stays open after every pick
                f"Kinds ({type_label('episodic', with_icon=False).lower()})",
                [e.value for e in EventType],
                selection_mode="multi",
                format_func=event_label,
                key="s_kinds",
            )
    if not query.strip():
        st.caption(
            "Finds memories by what they mean and by the words they share with your question "
            "(rare words count more), with a little weight for recent and important ones: "
            "the same search the agent does before it answers. Each result says why it matched."
        )
        return
    hits: list[Any] = []
    with guard("Searching"):
        for mtype in types or ["episodic", "semantic"]:
            hits.extend(
                ctx.coordinator.search(
                    ctx.user_id,
                    query,
                    mtype,
                    k=k,
                    where=SearchFilter(
                        event_types=(kinds or None) if mtype == "episodic" else None
                    ),
                )
                or []
            )
    hits, weaker = shown_hits(hits, min_score)
    if not hits:
        st.info(
            f"No relevant memories as close as asked. Try other words, or lower “{CLOSENESS}” "
            "under Options.",
            icon="🔎",
        )
        return
    df = hits_frame([h.model_dump(mode="json") for h in hits])
    df.insert(0, "Type", [type_label(getattr(h.memory_type, "value", h.memory_type)) for h in hits])
    df.insert(len(df.columns), "Why", [why_words(h) for h in hits])
    c1, c2 = st.columns([3, 1], vertical_alignment="center")
    c1.caption(f"{len(hits)} result{'s' if len(hits) != 1 else ''} for “{md_text(query)}”")
    scores = c2.toggle("Show the scores", key="s_scores", help="Each result's score and its parts")
    st.dataframe(
        df[_columns_shown(df) if scores else _WORDS_COLUMNS],
        hide_index=True,
        column_config=HIT_COLUMNS,
        key="s_results",
    )
    if weaker:
        st.caption(NO_MORE_RELEVANT)


#: what a result says in words; the numbers behind "Show the scores"
_WORDS_COLUMNS = ["Type", "Memory", "Band", "Why"]
#: the score parts every result has: shown always; the others only when a result has them
_MAIN_COLUMNS = ["Type", "Memory", "Score", "Band", "Vector", "Keywords"]
#: small nudges, in the details of an answer, not in search results
_NUDGES = {"Recency", "Importance"}


def _columns_shown(df: Any) -> list[str]:
    """The main columns, and each other score part that is not 0 for every result (a
    search has few signals at work; empty columns would squeeze the text column)."""
    others = [c for c in df.columns if c not in _MAIN_COLUMNS and c not in _NUDGES]
    return _MAIN_COLUMNS + [c for c in others if (df[c] != 0).any()]


# --- add -----------------------------------------------------------------------------------


def add_tab(ctx: PageContext) -> None:
    add_form(ctx, "a", full=True)


# --- export / import -----------------------------------------------------------------------


def transfer_tab(ctx: PageContext) -> None:
    c1, c2 = st.columns(2, gap="large")
    with c1:
        st.markdown("##### ⬇️ Export")
        st.caption(
            f"Everything stored for **{md_text(ctx.user_id)}**: "
            "what is remembered about them (with its history), the facts they added, "
            "learned ways of working and chats, as one JSON file."
        )
        coord, user = ctx.coordinator, ctx.user_id
        st.download_button(
            "Download JSON",
            data=lambda: json.dumps(coord.export_user(user), indent=2, ensure_ascii=False),
            file_name=f"memories-{user}-{date.today():%Y%m%d}.json",
            mime="application/json",
            key="x_download",
            icon="💾",
            on_click="ignore",
        )
    with c2:
        st.markdown("##### ⬆️ Import")
        st.caption(
            "A file exported by this app. The whole file is checked first: if anything is "
            "invalid, nothing is imported."
        )
        state.show_notice("import")
        upload = st.file_uploader("Export file", type=["json"], key="x_upload")
        mode = st.radio(
            "Mode",
            ["merge", "replace"],
            horizontal=True,
            key="x_mode",
            format_func=lambda m: {
                "merge": "Merge (keep existing)",
                "replace": "Replace this user's memories",
            }[m],
        )
        if upload is None:
            return
        data = upload.getvalue()
        preview = _preview_once(upload.file_id, data, ctx.user_id)
        if preview:
            st.caption(preview)
        if st.button("Import", key="x_import", type="primary", icon="⬆️"):
            bar = st.progress(0.0, text="Checking the file…")

            def progress(stage: str, done: int, total: int) -> None:
                # a large file takes minutes (embedding, then writing): say how far it got
                share = min(done / total, 1.0) if total else 1.0
                bar.progress(share, text=f"{stage.capitalize()}: {done:,} of {total:,} records")

            try:
                # Into the user this page shows, whoever the file came from: a file of
                # another user must never merge into (or replace) that user's memories.
                counts = ctx.coordinator.import_user(
                    data,
                    mode="replace" if mode == "replace" else "merge",
                    user_id=ctx.user_id,
                    progress=progress,
                )
            except (ImportFileError, InvalidInputError) as e:
                bar.empty()
                st.error(f"Nothing was imported: {no_images(_reason(e))}", icon="🚫")
                return
            except Exception as e:  # noqa: BLE001
                bar.empty()
                st.error(message_for(e, "Importing"), icon="⚠️")
                return
            said = [f"{words.records_word(k)}: {n:,}" for k, n in (counts or {}).items()]
            state.notice_then_rerun("import", f"Imported {' · '.join(said) or 'nothing new'}.")


#: The upload (its id) and user the preview in session state was read for.
_PREVIEW_KEY = "x_upload_preview"


def _preview_once(upload_id: str, data: bytes, target: str) -> str:
    """The preview read once per upload: every rerun of the page (each click) would otherwise
    scan and parse a file of up to 50 MB again."""
    seen = st.session_state.get(_PREVIEW_KEY)
    if seen is None or seen[:2] != (upload_id, target):
        seen = (upload_id, target, _preview(data, target))
        st.session_state[_PREVIEW_KEY] = seen
    return str(seen[2])


def _preview(data: bytes, target: str) -> str:
    # json.loads recurses: a file too big or too deep gets no preview (the import says why)
    if not safe_to_parse(data):
        return ""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return ""
    if not isinstance(doc, dict):
        return ""
    user = doc.get("user_id") or doc.get("user") or "?"
    # The file's keys are text from whoever made the file: shown literally, like its user.
    parts = [f"{len(v)} {md_text(k)}" for k, v in doc.items() if isinstance(v, list)]
    text = f"File for user **{md_text(user)}**: " + (", ".join(parts) or "no lists found")
    if user != target:
        text += f" · will be imported into **{md_text(target)}**"
    return text


def _reason(exc: Exception) -> str:
    """The error without its own "nothing was imported" tail (the message leads with it)."""
    text = re.sub(r"[;,]?\s*nothing was imported\.?\s*$", "", str(exc), flags=re.IGNORECASE)
    return text.rstrip(" ;,.") + "."


# --- clean up ------------------------------------------------------------------------------


def cleanup_tab(ctx: PageContext) -> None:
    c1, c2 = st.columns(2, gap="large")
    with c1, st.container(border=True):
        st.markdown("##### 🧽 Clear a chat")
        st.caption("Deletes the messages of one chat. Long-term memories stay.")
        sessions: list[str] = []
        with guard("Listing your chats"):
            sessions = list(ctx.coordinator.short_term.sessions(ctx.user_id) or [])
        options = list(dict.fromkeys([ctx.session_id, *sessions]))
        state.show_notice("clear")
        titles = sessions_ui.titles_of(ctx.coordinator, ctx.user_id)  # the sidebar's names
        names = sessions_ui.distinct({s: sessions_ui.label(s, titles) for s in options})
        session = st.selectbox("Chat", options, key="c_session", format_func=names.__getitem__)
        name = md_text(names[session])
        sure = st.checkbox(f"Yes, delete the messages of “{name}”", key="c_session_sure")
        if st.button("Clear chat", key="c_session_go", disabled=not sure, icon="🧽"):
            with guard("Clearing the chat"):
                n = ctx.coordinator.clear_session_memories(ctx.user_id, session)
                state.notice_then_rerun(
                    "clear", f"Deleted {n} message{'s' if n != 1 else ''} of “{name}”."
                )
    with c2, st.container(border=True):
        st.markdown("##### 🔥 Purge this user")
        st.caption(
            f"Deletes **everything** stored for **{md_text(ctx.user_id)}**: "
            "what is remembered about them, facts they added, ways of working, chats. "
            "Export first if you may need it again."
        )
        typed = st.text_input(  # the name the sidebar's 👤 User shows
            f"Type your name, {md_text(ctx.user_id)}, to confirm",
            key="c_purge_confirm",
            placeholder=ctx.user_id,
        )
        ok = typed.strip() == ctx.user_id
        if st.button("Purge user", key="c_purge_go", disabled=not ok, type="primary", icon="🔥"):
            with guard("Purging the user"):
                counts = ctx.coordinator.clear_user_memories(ctx.user_id)
                total = sum((counts or {}).values())
                state.flash(f"Purged {md_text(ctx.user_id)}: {total} records deleted.")
                st.session_state.pop("c_purge_confirm", None)
                st.rerun()
