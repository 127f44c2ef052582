"""The chat page's trust controls that store nothing (agent.private): an incognito chat, and
answering again without some of the memories an answer used, shown side by side."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import streamlit as st
from ulid import ULID

from agent.private import incognito_turn, reanswer
from agent.types import TurnEvent, TurnResult
from memory.models import ChatMessage
from ui.answers import answer_text, hard_breaks, said_by_user, shown
from ui.details import render_details, short
from ui.errors import guard
from ui.format import ImageFreeStream, md_text, no_images
from ui.layout import PageContext

BANNER = (
    "**Incognito chat.** Nothing is recalled from your memory and nothing of this chat is "
    "stored: no history, no memories, no record of how answers were made (each answer's details "
    "show here until you leave). It lasts until you switch it off or close the tab."
)


def _chat_key(ctx: PageContext) -> str:
    return f"incognito::{ctx.user_id}::{ctx.session_id}"


def incognito_switch(ctx: PageContext) -> bool:
    """The per-session switch (off by default); when on, the banner says so on every run."""
    on = st.toggle(
        "🕶️ Incognito",
        key="incognito_on::" + _chat_key(ctx),
        help="Chat without memory: nothing recalled, nothing stored (this chat only).",
    )
    if on:
        st.info(BANNER, icon="🕶️")
    return on


def _messages(ctx: PageContext) -> list[ChatMessage]:
    chats: dict[str, list[ChatMessage]] = st.session_state.setdefault("incognito_chats", {})
    return chats.setdefault(_chat_key(ctx), [])


def incognito_history(ctx: PageContext) -> int:
    """This incognito chat so far: kept in this browser session only."""
    msgs = _messages(ctx)
    for m in msgs:
        with st.chat_message(m.role, avatar="🕶️" if m.role == "assistant" else None):
            user = m.role == "user"
            st.markdown(said_by_user(m.content) if user else no_images(hard_breaks(m.content)))
    return len(msgs)


def _stream(events: Iterator[TurnEvent], box: Any, got: dict[str, Any]) -> Iterator[str]:
    safe = ImageFreeStream()
    for ev in events:
        if ev.kind == "token":
            yield safe.feed(ev.text.replace("\n", "  \n"))
        elif ev.kind in ("status", "tool_end"):
            box.write(no_images(ev.text))
        elif ev.kind == "done":
            got["result"] = ev.result
    yield safe.flush()


def run_incognito_turn(ctx: PageContext, prompt: str) -> None:
    assert ctx.agent is not None
    msgs = _messages(ctx)
    with st.chat_message("user"):
        st.markdown(said_by_user(prompt))
    with st.chat_message("assistant", avatar="🕶️"):
        box = st.status("Answering incognito…", expanded=True)
        got: dict[str, Any] = {}
        with guard("Answering incognito"):
            events = incognito_turn(
                ctx.agent,
                ctx.user_id,
                ctx.session_id,
                prompt,
                history=list(msgs),
                model=st.session_state.model,
            )
            st.write_stream(_stream(events, box, got))
        result: TurnResult | None = got.get("result")
        box.update(label="Incognito · nothing stored", state="complete", expanded=False)
        if result is None:
            return
        now = int(time.time() * 1000)
        msgs.append(ChatMessage(id=str(ULID()), role="user", content=prompt, timestamp=now))
        msgs.append(
            ChatMessage(id=str(ULID()), role="assistant", content=result.reply, timestamp=now + 1)
        )
        render_details(result, key=f"incognito-{result.turn_id}")


def reanswer_controls(ctx: PageContext, d: TurnResult, key: str) -> None:
    """Pick recalled memories and see the answer without them, next to the original."""
    # the user profile's lines can be left out too (a memory in both is offered once)
    texts = {p.id: p.text for p in d.recalled.profile}
    texts.update((h.id, h.text) for h in [*d.recalled.episodic, *d.recalled.semantic])
    if ctx.agent is None or not texts or d.private or not d.turn_id:
        return
    done: dict[str, tuple[list[str], TurnResult]] = st.session_state.setdefault("reanswers", {})
    with st.expander("🔁 Answer without a memory"):
        labels = {i: short(text, 80) for i, text in texts.items()}
        st.caption("Tick the memories to leave out:")
        picked = [
            i
            for i in texts
            # a label is markdown: the memory's text is escaped to show as text
            if st.checkbox(md_text(labels[i]), key=f"reanswer_pick::{key}::{i}")
        ]
        if not picked:
            st.caption("Tick at least one memory to answer again without it.")
        if st.button("Answer again without them", key=f"reanswer_go::{key}", disabled=not picked):
            with st.spinner("Answering again (nothing is stored)…"), guard("Answering again"):
                result = None
                for ev in reanswer(
                    ctx.agent,
                    ctx.user_id,
                    ctx.session_id,
                    d.turn_id,
                    picked,
                    model=st.session_state.model,
                ):
                    if ev.kind == "done":
                        result = ev.result
                if result is not None:
                    done[key] = (list(picked), result)
        if key in done:
            left_out, again = done[key]
            st.caption("Left out: " + "; ".join(f"“{md_text(labels.get(i, i))}”" for i in left_out))
            left, right = st.columns(2)
            with left:
                st.markdown("**With every memory** (the answer given)")
                st.markdown(shown(answer_text(ctx, d.reply)))  # as the chat shows it
            with right:
                st.markdown("**Without them** (nothing stored)")
                st.markdown(shown(answer_text(ctx, again.reply)))
