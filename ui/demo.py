"""*Load demo persona*, on the chat page's first screen and in the sidebar: the persona goes into
its own user, `demo-maya`, in a new empty chat, never into the presenter's (docs/demo.md).
Shown only to a viewer who may switch users."""

from __future__ import annotations

import streamlit as st

from memory import DEMO_QUESTIONS, DEMO_TAG, DEMO_USER, ListQuery, demo_contents, load_demo, words
from memory.service import MemoryService
from memory.writing import WritePolicy
from ui import state
from ui.context import PageContext
from ui.counts import Counts, counts_of
from ui.errors import run_action
from ui.format import md_text

LABEL = "Load demo persona"
HELP = (
    f"Switch to the user {DEMO_USER}: Maya, a teacher training for a half marathon after a "
    "sprained ankle, with five months of memories (chats, preferences, goals, a changed "
    "goal, learned ways of working). Your own memories are not touched."
)


def available(ctx: PageContext) -> bool:
    """Whether this viewer may load the persona (it switches to another user)."""
    return ctx.viewer.may_switch_users


def persona_loaded(ctx: PageContext) -> bool:
    """Whether the current user holds the demo persona's memories."""
    _, n = ctx.coordinator.list_memories(
        ctx.user_id, "episodic", ListQuery(tags=[DEMO_TAG], page_size=1)
    )
    return n > 0


def load_button(ctx: PageContext, key: str, *, compact: bool = False) -> None:
    """The button; after a refused first click, the warning and the *Replace* checkbox."""
    asked = st.session_state.get(f"{key}_ask")
    if asked:
        st.warning(asked, icon="✋")
        st.checkbox(f"Replace {DEMO_USER}'s own memories", key=f"{key}_replace")
    st.button(
        LABEL,
        key=f"{key}_load",
        icon="🎭",
        type="tertiary" if compact else "secondary",
        help=HELP,
        on_click=_on_load,
        args=(ctx.coordinator, ctx.writer, key),
        width="content" if compact else "stretch",
    )


def _on_load(coord: MemoryService, writer: WritePolicy, key: str) -> None:
    ss = st.session_state
    replace = bool(ss.get(f"{key}_replace"))
    ok, contents = run_action("Checking the demo user", demo_contents, coord, DEMO_USER)
    if not ok:
        return
    if contents.has_own and not replace:
        ss[f"{key}_ask"] = (
            f"**{md_text(DEMO_USER)}** already has memories of their own "
            f"({_own_words(contents.own)}), e.g. from the chats of an earlier demo. Loading "
            "the persona replaces everything of that user: tick the box and click "
            f"*{LABEL}* again."
        )
        return
    ok, loaded = run_action(
        "Loading the demo persona", _load, coord, writer, replace=contents.has_own
    )
    if not ok:
        return
    ss.pop(f"{key}_ask", None)
    ss[f"{key}_replace"] = False
    state.switch_user(DEMO_USER)
    state.switch_session(state.new_session_id())
    # a toast holds a short line: the first screen names her and offers the questions
    state.flash(
        f"You are Maya ({DEMO_USER}): {loaded.memories} memories, {loaded.facts} facts, "
        f"{loaded.procedures} ways of working.",
        "success",
    )


#: A user's own records (UserContents.own's keys) as the words of what a forget deletes
_OWN = {"episodic": "memories", "semantic": "facts", "procedural": "procedures"}


def _own_words(own: dict[str, int]) -> str:
    """`7 memories, 1 fact, 1 chat`."""
    return ", ".join(words.forgotten_words(n, _OWN.get(k, k)) for k, n in own.items() if n)


def _load(coord: MemoryService, writer: WritePolicy, *, replace: bool) -> Counts:
    """Load the persona; what it holds then, counted as the Memories tile and Stats count."""
    from memory import MemoryCoordinator

    # The persona writes dated records and session summaries: the Redis store's own methods.
    if not isinstance(coord, MemoryCoordinator):
        raise TypeError("the demo persona needs the Redis memory store")
    load_demo(coord, DEMO_USER, replace=replace, writer=writer)
    return counts_of(coord, DEMO_USER)


def questions(ctx: PageContext) -> None:
    """The first screen of a chat with the persona: what she is, and questions to ask."""
    st.markdown(
        "You are chatting as **Maya**, the demo persona: a teacher training for the Riverside "
        "Half Marathon, five months of memories, a sprained ankle two months ago and a goal "
        "she changed after it. Her memories are in the sidebar and on the **Memories** page. "
        "Ask something, then open *Execution details* under the answer to see what was "
        "recalled:"
    )
    for i, q in enumerate(DEMO_QUESTIONS):
        st.button(
            q,
            key=f"demo_question_{i}",
            on_click=lambda t=q: st.session_state.update(pending_prompt=t),
            width="stretch",
        )
