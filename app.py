"""Chat page (the entry script): `streamlit run app.py`.

History from short-term memory, each reply streamed under a status box with a ⏹ Stop, and
"Execution details" under each answer (docs/app.md, "Chat")."""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from agent.types import TurnResult
from memory.errors import InvalidInputError
from memory.models import MAX_TEXT_CHARS, check_unicode, is_blank
from ui import demo, private, resources, sessions, state
from ui.answers import answer_text, hard_breaks, said_by_user, shown
from ui.details import (
    limit_lines,
    render_details,
    render_status,
    status_label,
    tool_line,
    without_forgotten,
)
from ui.errors import guard, message_for
from ui.format import ImageFreeStream, md_text, no_images
from ui.layout import PageContext, page_setup
from ui.remembered import forgotten, remembered_line
from ui.sidebar import render_sidebar
from ui.stopping import StreamGuard, turn_started

SUGGESTIONS = (
    "Remember that I'm vegetarian and training for a half marathon in April",
    "I prefer short answers with bullet points",
    "What do you remember about me?",
)


def details_key(reply: str) -> str:
    """Details are kept per answer text: the history (from Redis) can be matched to them."""
    return "reply:" + hashlib.sha1(reply.strip().encode()).hexdigest()[:16]


def offline_banner(ctx: PageContext) -> None:
    status = ctx.llm_status
    if status is not None and status.ok:
        return
    model = (status.model if status else None) or (
        ctx.agent.default_model if ctx.agent is not None else "the chat model"
    )
    host = (status.host if status else None) or ctx.settings.ollama_host
    if status is not None and status.reachable:
        what = (
            f"Ollama is running at {md_text(host)} but the model **{md_text(model)}** "
            "is not pulled."
        )
        fix = f"ollama pull {model}"
    else:
        what = f"Ollama is not reachable at {md_text(host)}."
        fix = f"ollama serve   # in another terminal\nollama pull {model}"
    st.warning(
        f"**Memory-only mode.** {what} The agent still recalls and stores memories and answers "
        "from them, without a language model. To chat with the full agent, run:",
        icon="📴",
    )
    st.code(fix, language="bash")


def history(ctx: PageContext) -> int:
    messages: list[Any] = []
    with guard("Loading the chat history"):
        messages = list(ctx.coordinator.recent_messages(ctx.user_id, ctx.session_id, n=50) or [])
    kept: dict[str, TurnResult] = {}
    if messages and ctx.agent is not None:
        with guard("Loading the details of the answers"):
            kept = ctx.agent.turn_details(ctx.user_id, ctx.session_id)
    details: dict[str, Any] = st.session_state.turn_details
    drawn: set[str] = set()  # one answer's controls once, whatever else shares its details
    for m in messages:
        if m.role not in ("user", "assistant"):
            continue
        with st.chat_message(m.role):
            d = None
            if m.role == "assistant":
                d = answer_details(ctx, details, kept, m)
                gone = forgotten(ctx, d) if d is not None else set()
                if d is not None:
                    render_status(without_forgotten(d, gone))
            if m.role == "assistant":
                said = answer_text(ctx, m.content, memory_only=bool(m.metadata.get("memory_only")))
                st.markdown(shown(said))
            else:
                st.markdown(said_by_user(m.content))
            if d is not None:
                # keyed by the turn, as while it streamed: a rerun keeps the picks and the result
                key = d.turn_id if d.turn_id and d.turn_id not in drawn else m.id
                drawn.add(key)
                remembered_line(ctx, d, key)
                render_details(d, key=m.id, forgotten=gone)
                private.reanswer_controls(ctx, d, key)
    return len(messages)


def answer_details(
    ctx: PageContext, details: dict[str, Any], kept: dict[str, TurnResult], m: Any
) -> Any:
    """An answer's details: this browser session's copy (it has a thinking model's thoughts),
    else the copy kept beside the answer in Redis (after a reload, in another tab, after a
    restart); the background extraction's outcome brought in once known."""
    turn_id = str(m.metadata.get("turn_id", ""))
    d = details.get(turn_id) or details.get(details_key(m.content))
    if d is not None and turn_id and d.turn_id and d.turn_id != turn_id:
        d = None  # the same words answered another turn ("I have nothing about that yet")
    stored = kept.get(turn_id) if turn_id else None
    if d is None:
        return stored
    if stored is not None and d.extraction.startswith("pending"):
        d.extraction, d.stored = stored.extraction, stored.stored  # kept by the worker
        d.limits = stored.limits
    _refresh_extraction(ctx, d)
    return d


def _refresh_extraction(ctx: PageContext, d: TurnResult) -> None:
    """Background extraction finishes after the answer: show its outcome once known."""
    if ctx.agent is None or not d.extraction.startswith("pending"):
        return
    outcome = ctx.agent.background.get(d.turn_id)
    if outcome is not None:
        d.apply_extraction(outcome)


def empty_state(ctx: PageContext) -> None:
    loaded = False
    with guard("Checking for the demo persona"):
        loaded = demo.persona_loaded(ctx)
    with st.chat_message("assistant"):
        if loaded:
            demo.questions(ctx)
            return
        st.markdown(
            "Hi! I remember what you tell me, from one chat to the next. Tell me about yourself, "
            "your goals or your preferences, then ask me something. Everything I store "
            "shows up in the sidebar's **memory editor** and on the **Memories** page."
        )
        cols = st.columns(len(SUGGESTIONS))
        for i, (col, text) in enumerate(zip(cols, SUGGESTIONS, strict=True)):
            col.button(
                text,
                key=f"suggestion_{i}",
                on_click=lambda t=text: st.session_state.update(pending_prompt=t),
                width="stretch",
                wrap=True,  # in columns a label is cut with an ellipsis by default
            )
        if demo.available(ctx):
            st.caption(
                "Or see it remember months of a life: load Maya, a runner back from a "
                "sprained ankle (your own memories stay as they are)."
            )
            demo.load_button(ctx, "es_demo")


def memory_only_turn_sent(ctx: PageContext) -> bool:
    """A message is sent (typed, or a suggestion picked) while no model answers: a quick turn
    whose sidebar is best drawn after it (`run_turn`)."""
    sent = st.session_state.get("chat_input") or st.session_state.get("pending_prompt")
    status = ctx.llm_status
    return bool(sent) and ctx.agent is not None and not (status is not None and status.ok)


def run_turn(ctx: PageContext, prompt: str, *, sidebar_after: bool = False) -> bool:
    """Stream one turn; True when it ended with its exchange saved. `sidebar_after`: the
    sidebar is drawn after this run's turn, so what the turn stored shows without a rerun."""
    agent = ctx.agent
    assert agent is not None
    with st.chat_message("user"):
        st.markdown(said_by_user(prompt))
    with st.chat_message("assistant"):
        # open while it works: the steps show as they happen, folded into one line at the end
        box = st.status("Recalling memories…", expanded=True)
        stop = st.empty()
        stop.button(
            "Stop",
            key="stop_answer",
            icon=":material/stop_circle:",
            help="Stop this answer: what it has written so far is kept, marked [stopped].",
        )
        got: dict[str, Any] = {}
        watch = StreamGuard(
            ctx.coordinator, ctx.user_id, ctx.session_id, prompt, model=st.session_state.model
        )
        try:
            turn = agent.run_turn(
                ctx.user_id,
                ctx.session_id,
                prompt,
                model=st.session_state.model,
                recall_types=state.recall_types(),
            )
        except InvalidInputError as e:  # refused before anything ran: say why, keep the page
            stop.empty()
            box.update(label="Not sent", state="error", expanded=False)
            st.warning(no_images(str(e)), icon="✋")
            return False
        events = watch.watch(turn)

        stream = _answer_tokens(ctx, events, box, got)
        running = turn_started()
        try:
            st.write_stream(stream)
        except Exception as e:  # noqa: BLE001 - shown as a message, never a traceback
            events.close()
            stop.empty()
            box.update(label="Something went wrong", state="error")
            st.error(message_for(e, "Answering"), icon="⚠️")
            return False
        except BaseException:
            # ⏹ Stop (or Streamlit's own stop): the rerun it asked for is raised in here.
            # Close the stream to the model and keep the partial answer; no st.* call here.
            stream.close()
            events.close()
            watch.keep_partial()
            if watch.stopped:
                state.flash("Stopped. The answer so far is kept, marked [stopped].", "info")
            raise
        finally:
            running.set()  # a run started by the stop may draw the history now
        stop.empty()
        result = got.get("result")
        if result is None:
            box.update(label="The turn ended without a result", state="error")
            return False
        _show_result(ctx, box, result, streamed=bool(got.get("streamed")))
    if result.masked or (result.stored and not sidebar_after):
        # the sidebar's recent memories show what this turn stored; the user's own bubble
        # shows the message as stored (a secret as its label, never the digits typed)
        st.rerun()
    return result.saved


def _answer_tokens(ctx: PageContext, events: Any, box: Any, got: dict[str, Any]) -> Any:
    """The answer's text, as the turn's events stream in (for st.write_stream); the other
    events update the status box. `got` collects whether text streamed and the result."""
    safe = ImageFreeStream()

    def working(label: str) -> None:
        # `expanded` each time: an update without it folds the box in the browser
        box.update(label=label, state="running", expanded=True)

    for ev in events:
        if ev.kind == "token":
            got["streamed"] = True
            yield safe.feed(hard_breaks(answer_text(ctx, ev.text)))
        elif ev.kind == "status":
            working(no_images(ev.text) or "Working…")
        elif ev.kind == "thinking" and not got.get("thinking"):
            got["thinking"] = True  # the thoughts go to the details, not the answer
            working("💭 The model is thinking…")
        elif ev.kind == "recall":
            box.write(f"🧠 {no_images(ev.text)}")
        elif ev.kind == "tool_start":
            working("Using a tool…")
        elif ev.kind == "tool_end":
            box.write(tool_line(ev.record))
        elif ev.kind == "stored":
            box.write(f"💾 {md_text(ev.text)}")
        elif ev.kind == "done":
            got["result"] = ev.result
    yield safe.flush()


def _show_result(ctx: PageContext, box: Any, result: TurnResult, *, streamed: bool) -> None:
    """The finished turn under its answer: the reply if it did not stream, whether it was
    saved, the status line, and the details (kept for reruns)."""
    if not streamed and result.reply:
        st.markdown(shown(answer_text(ctx, result.reply)))
    if not result.saved:  # next to the answer: the details below start folded
        st.error(
            "**Not saved.** This message and answer could not be stored, so they will not "
            f"be in the history or remembered. {no_images(result.error or '')}",
            icon="💾",
        )
    for line in limit_lines(result):  # what a cap cut, and what to do
        box.write(line)
    box.update(
        label=status_label(result),
        state="error" if result.error else "complete",
        expanded=False,
    )
    d = result.model_copy(deep=True)  # kept for reruns (the extraction status is updated)
    key = result.turn_id or details_key(result.reply)
    state.remember_details(details_key(result.reply), d)
    state.remember_details(key, d)
    remembered_line(ctx, d, key)
    render_details(d, key=key)
    private.reanswer_controls(ctx, d, key)


def not_sent(prompt: str, why: str) -> None:
    """A message refused before it ran (`why`: markdown): the reason, and the text kept (the
    chat box is already empty) to copy and shorten."""
    st.error(f"{why} Your text is below: copy it with the button at its top right.", icon="✂️")
    st.code(prompt, language=None, wrap_lines=True)


ctx = page_setup("Chat", "💬", layout="centered", sidebar=False)
# A memory-only turn takes a fraction of a second: its run draws the sidebar after it, once,
# with what it stored, instead of before it and again in a rerun (docs/performance.md). A
# model's turn takes seconds: the sidebar is drawn first, and stays usable while it streams.
sidebar_after = memory_only_turn_sent(ctx)
if not sidebar_after:
    render_sidebar(ctx)
st.title("💬 Chat with memory")
chat_title = sessions.name_of(ctx.coordinator, ctx.user_id, ctx.session_id)
st.caption(
    f"You are **{md_text(ctx.user_id)}** in "
    + (f"“{md_text(chat_title)}”" if chat_title else "a new chat")
    + ". Before every answer the agent recalls your memories; "
    "open *Execution details* under an answer to see why."
)
if ctx.agent is None:
    st.error(ctx.agent_error or "The chat agent is not available.", icon="🚫")
    st.stop()
offline_banner(ctx)
incognito = private.incognito_switch(ctx)
shown_messages = private.incognito_history(ctx) if incognito else history(ctx)
# The greeting's place: drawn empty in the run that sends the first message, so the greeting
# and its buttons go at once instead of lingering (stale) above the exchange until it ends.
greeting = st.empty()
# No max_chars: the browser would silently refuse a longer paste and leave the box empty.
typed = st.chat_input(
    "Message the agent (incognito)…" if incognito else "Message the agent…", key="chat_input"
)
prompt = typed or st.session_state.pop("pending_prompt", None)
if prompt is not None and is_blank(prompt):
    # spaces, line breaks or zero-width characters only: nothing to answer, nothing to store
    st.toast("Nothing sent: the message was empty.", icon="✋")
    prompt = None
if shown_messages == 0 and not prompt and not incognito:
    with greeting.container():
        empty_state(ctx)
refusal = None
if prompt and len(prompt.strip()) > MAX_TEXT_CHARS:
    refusal = (
        f"**Not sent:** your message is {len(prompt.strip()):,} characters; the limit is "
        f"{MAX_TEXT_CHARS:,}. Shorten it or split it into several messages."
    )
elif prompt:  # the model's window: Ollama would cut a message that does not fit silently
    with guard("Checking the message against the model's window"):
        refusal = no_images(ctx.agent.message_fits(prompt, st.session_state.model) or "")
if prompt and refusal:
    not_sent(prompt, refusal)
elif prompt and "\x00" in prompt:  # refused in the memory's words, before anything runs
    with guard("Sending the message"):
        check_unicode(prompt, "message")
elif prompt and incognito:
    private.run_incognito_turn(ctx, prompt)
elif prompt:
    first = shown_messages == 0 and not chat_title
    if first:  # the chat is named after its first message
        sessions.name_after(ctx.coordinator, ctx.user_id, ctx.session_id, prompt)
    if run_turn(ctx, prompt, sidebar_after=sidebar_after) and first:
        st.rerun()  # the sidebar and the caption show the new title
if sidebar_after:
    render_sidebar(ctx)
resources.warm_up(ctx.coordinator)  # after the page has drawn: the embedding model, the charts
