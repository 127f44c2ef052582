""" "What I know about you": the user profile (memory.user_profile), the few standing memories
every prompt carries. Shown at the top of the Memories page and in the sidebar; a person edits a
line (which edits the memory behind it) or removes it (which deletes that memory, with the Undo
every delete offers: ui/undo.py)."""

from __future__ import annotations

import streamlit as st

from agent.prompt import PROFILE_TOKENS, fit_profile
from memory.models import ProfileLine
from ui import resources, state, undo
from ui.context import PageContext
from ui.errors import guard
from ui.format import about_words, event_label, md_text, no_images, snippet
from ui.row_actions import edit_fields

TITLE = "What I know about you"
#: The lines that always go, in a person's words: what `memory.health.about_health` decides by
#: a memory's words, not its kind (docs/agent.md): a sore ankle logged as a health event is a
#: standing line like the others, and may not fit.
ALWAYS_SENT = (
    "pinned memories and what you said about allergies, intolerances, conditions or medicines"
)
#: Lines the sidebar shows before "Show all": the rest of the profile would push the memory
#: editor below two phone screens.
FOLDED_LINES = 3


def user_profile_panel(ctx: PageContext, where: str) -> None:
    """The profile's lines, each with ✏️ (edit) and ✖️ (remove); `where` keeps the widget keys
    of the sidebar's copy apart from the page's."""
    with st.container(key=f"{where}_profile"):
        undo.notice_slot(ctx.coordinator, f"profile_{where}")
        _lines(ctx, where)


def _lines(ctx: PageContext, where: str) -> None:
    lines: list[ProfileLine] = []
    with guard("Reading what I know about you"):
        # read once per write (its three index queries), as Stats reads its figures: the
        # sidebar draws it at every rerun, and twice in a turn that stores something
        store = f"{ctx.settings.redis_url} {ctx.settings.memory_namespace}"
        lines = resources.per_version(
            f"profile {store} {ctx.user_id}",
            ctx.write_version,
            lambda: ctx.coordinator.user_profile(ctx.user_id),
        )
    lines = [p for p in lines if p.id not in undo.pending_ids()]  # removed, Undo offered
    if not lines:
        st.caption(
            "Nothing yet. Tell me about your diet, goals, injuries or how you like answers, "
            "and it shows here; it goes with every question you ask."
        )
        return
    fit = fit_profile(lines)  # the prompt's own rule: what is listed is what is sent
    st.caption(
        f"Sent to the model with every question, in this order: {ALWAYS_SENT} first "
        "(paused memories are left out)."
    )
    sent = [p for p, _ in fit.sent]
    folded = where == "sb" and not st.session_state.get(f"{where}_profile_all", False)
    for p in sent[:FOLDED_LINES] if folded else sent:
        # the line takes the whole width; its kind, ✏️ and ✖️ share the row under it (beside
        # the line, the buttons left the text two words a line in the sidebar)
        line = st.container(key=f"{where}_line_{p.id}", gap=None)
        pin = "📌 " if p.pinned else ""
        line.markdown(f"{pin}{no_images(md_text(p.text))}")
        row = line.container(horizontal=True, wrap=False, vertical_alignment="center")
        row.container(width="stretch").caption(event_label(p.kind.value))
        buttons = row.container(horizontal=True, wrap=False, width="content", gap="small")
        edit = f"{where}_profile_edit_{p.id}"
        with buttons.popover(
            "",
            icon="✏️",
            type="tertiary",  # no frame: the line's text keeps the sidebar's width
            help="Edit this line (it edits the memory behind it)",
            key=state.popover_key(edit),
        ):
            edit_fields(
                ctx,
                "episodic",
                {"id": p.id, "text": p.text},
                f"{where}_profile_{p.id}",
                edit,
                label="Edit the line",
                or_else="remove it with ✖️",
            )
        buttons.button(
            "",
            key=f"{where}_profile_remove_{p.id}",
            icon="✖️",
            type="tertiary",
            help=f"Remove this line: the memory behind it is deleted (Undo is offered for "
            f"{undo.UNDO_S:g} seconds)",
            on_click=undo.request_delete,
            args=(ctx.coordinator, ctx.user_id, [("episodic", p.id, p.text)], f"profile_{where}"),
        )
    if not folded:
        _left_out(where, fit.left_out)
    hidden, unsent = len(sent) - FOLDED_LINES, len(fit.left_out)
    if where == "sb" and (hidden > 0 or unsent):
        counts = [f"{hidden} more sent"] * (hidden > 0) + [f"{unsent} not sent"] * (unsent > 0)
        st.button(
            f"Show all ({', '.join(counts)})" if folded else "Show fewer",
            key=f"{where}_profile_{'more' if folded else 'fewer'}",
            icon=f":material/expand_{'more' if folded else 'less'}:",
            type="tertiary",
            on_click=st.session_state.__setitem__,
            args=(f"{where}_profile_all", folded),
        )


#: The profile's room in words, not in the model's units
PROFILE_WORDS = about_words(PROFILE_TOKENS)


def _left_out(where: str, left_out: list[ProfileLine]) -> None:
    """How many lines did not fit, and why."""
    if not left_out:
        return
    n = len(left_out)
    with st.container(key=f"{where}_profile_left_out"):
        st.caption(
            f"{n} more {'memory does' if n == 1 else 'memories do'} not fit the room a question "
            f"keeps for this list (about {PROFILE_WORDS} words for the lines other than "
            f"{ALWAYS_SENT}, which always go): "
            + ", ".join(f"“{no_images(md_text(snippet(p.text, 50)))}”" for p in left_out)
            + ". They go with a question only when its search finds them."
        )
