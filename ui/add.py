"""The one form that adds a memory, in the sidebar and on the Memories page's Add tab: the
same fields, kind guess, checks and words in both; the page's form has a few more fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from memory.models import is_blank
from memory.writing import candidate_for, classify_event_type, write_fact
from ui import state
from ui.errors import run_action
from ui.expiry import expiry_inputs, expiry_value
from ui.format import (
    IMPORTANCE_VALUES,
    REMEMBERED_KINDS,
    event_label,
    importance_picker,
    md_text,
    parse_tags,
    snippet,
    type_label,
)
from ui.remembered import old_text

if TYPE_CHECKING:
    from ui.context import PageContext

GUESS = "guess"  # the Kind choice that leaves the kind to the guess
GUESS_LABEL = "✨ Guess from the text"


def add_form(ctx: PageContext, p: str, *, full: bool = False) -> None:
    """Widget keys start with `p`; `full`: the page's form (importance, expiry, context, fact
    type, and its result said under it)."""
    episodic = "episodic" == st.radio(
        "Type",
        ("episodic", "semantic"),
        format_func=type_label,
        key=f"{p}_type",
        horizontal=True,
        help=f"{type_label('episodic', with_icon=False)}: about this user. "
        f"{type_label('semantic', with_icon=False)}: a fact for everyone.",
    )
    text = st.text_area(
        "What should be remembered?",
        key=f"{p}_text",
        height=80,
        placeholder="e.g. I prefer short answers with bullet points"
        if episodic
        else "e.g. Adults need 7–9 hours of sleep",
    )
    c1, c2, c3 = st.columns(3) if full else (st.container(),) * 3
    if episodic:
        tags = c1.text_input("Tags (optional)", key=f"{p}_tags", placeholder="diet, running")
        # the guess of `python -m memory add` (memory.writing), shown before saving. Every
        # option keeps its label across reruns: the browser answers with the label, so a label
        # that followed the live guess was no option any more by the next run.
        kind = c2.selectbox(
            "Kind",
            [GUESS, *REMEMBERED_KINDS],
            format_func=lambda k: GUESS_LABEL if k == GUESS else event_label(k),
            key=f"{p}_kind",
            help="Guessed from the words and tags; pick a kind to choose it yourself.",
        )
        if kind == GUESS and text.strip():
            guess = classify_event_type(text, parse_tags(tags))
            c2.caption(f"✨ Guessed kind: {event_label(guess.value)}")
        if full:
            importance_picker(c3, f"{p}_importance")
            expiry_inputs(p)
    else:
        st.session_state.setdefault(f"{p}_category", "general")
        c1.text_input("Category", key=f"{p}_category", placeholder="general")
        if full:
            c2.text_input("Fact type", key=f"{p}_fact_type", placeholder="general")
    if full:
        st.text_input(
            "Context (optional)", key=f"{p}_context", placeholder="Where or why this was learned"
        )
    st.button(
        "Remember",
        key=f"{p}_go",
        type="primary",
        icon="💾",
        on_click=_on_add,
        args=(ctx, p, full),
        width="stretch" if not full else "content",
    )
    # under the button, where the eyes are (the sidebar's success is a toast)
    state.show_notice(f"add_{p}")


def _on_add(ctx: PageContext, p: str, full: bool) -> None:
    ss = st.session_state

    def say(text: str, kind: str = "success") -> None:
        if full or kind != "success":
            state.notice(f"add_{p}", text, kind)
        else:
            state.flash(text, kind)

    text = str(ss.get(f"{p}_text") or "").strip()
    if is_blank(text):
        say("Write what should be remembered first.", "warning")
        return
    context = str(ss.get(f"{p}_context") or "").strip() or (
        "Added on the Memories page" if full else "Added in the sidebar memory editor"
    )
    if ss.get(f"{p}_type", "episodic") == "semantic":
        ok, added = run_action(
            "Adding the fact",
            write_fact,
            ctx.coordinator,
            text,
            category=str(ss.get(f"{p}_category") or "").strip() or "general",
            fact_type=str(ss.get(f"{p}_fact_type") or "").strip() or "general",
            context=context,
            added_by=ctx.user_id,
            pii_policy=ctx.writer.pii_policy,  # the same PII_POLICY as every writer
        )
        said, replaced = ("Already remembered" if ok and added[0] is None else ""), ""
    else:
        kind = ss.get(f"{p}_kind", GUESS)
        tags = parse_tags(str(ss.get(f"{p}_tags") or ""))
        importance = IMPORTANCE_VALUES.get(str(ss.get(f"{p}_importance")), 0.6)
        ok, res = run_action(
            "Adding the memory",
            ctx.writer.write,
            ctx.user_id,
            ctx.session_id,
            candidate_for(
                text, None if kind == GUESS else kind, tags, how="user", importance=importance
            ),
            context=context,
            expires_at_ms=expiry_value(p) if full else None,
        )
        if ok and res.stored is None and not res.duplicate_of:  # it only named a masked secret
            say(f"Not stored: {res.reason}.", "warning")
            return
        said = res.already_remembered() if ok and res.stored is None else ""
        replaced = (
            old_text(ctx, res.stored) if ok and res.stored and res.stored.superseded_id else ""
        )
        if ok and res.stored is not None:
            text = f"{text} ({event_label(res.stored.event_type)})"
    if not ok:
        return
    ss[f"{p}_text"] = ss[f"{p}_tags"] = ss[f"{p}_context"] = ""
    ss[f"{p}_kind"] = GUESS
    if said:
        say(f"{said}: {md_text(snippet(text, 80))}", "info")
    else:
        say(
            f"Remembered: {md_text(snippet(text, 80))}"
            + (f" (it replaces “{md_text(replaced)}”, kept as history)" if replaced else "")
        )
