"""Turns that leave no trace: an incognito chat, and an answer given again without some memories.

Both run the model the way a normal turn does (the same context budget, rules, thinking and
tool loop: `agent.answering.Answerer`), with three differences:

- nothing is written: no short-term message, episode, trigger, extraction, summary, tool lesson
  or stored details; the model is offered only tools that read (the domain toolkits, not the
  memory tools, which remember and forget);
- what the model may know is given, not recalled: nothing of the user's long-term memory in an
  incognito chat (its own conversation so far comes from the caller, which keeps it on screen);
  the original turn's recall minus the memories picked for a re-answer;
- the question-about-the-user rule of `agent.knowing` applies as in a normal turn, so an
  incognito "what's my goal?" gets "I don't know that about you" instead of a guess.

A re-answer reads the original turn from its stored details (the recall it used) and its
session (the messages before it); a person compares the two answers to see what a memory
changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal

from ulid import ULID

from agent.answering import AnswerState
from agent.errors import LLMError
from agent.knowing import judge
from agent.prompt import history_window, render_memory_block
from agent.replies import memory_only_reply
from agent.tools.registry import ToolContext
from agent.types import (
    DoneEvent,
    RecallEvent,
    StatusEvent,
    TokenEvent,
    ToolCallRecord,
    TurnEvent,
    TurnResult,
)
from memory.errors import InvalidInputError
from memory.models import ChatMessage, MemoryContext, check_id, check_text

if TYPE_CHECKING:
    from agent.loop import ChatAgent

PrivateKind = Literal["incognito", "re-answer"]

#: The reason says what to do (start Ollama, pull the model, wait for it to load).
OFFLINE_REPLY = (
    "The language model is not available: {reason} {what} needs the model; nothing was stored."
)


def _sentence(text: str) -> str:
    """`text` ending in one full stop: a reason is quoted inside a longer reply."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def incognito_turn(
    agent: ChatAgent,
    user_id: str,
    session_id: str,
    message: str,
    *,
    history: Sequence[ChatMessage] = (),
    model: str | None = None,
) -> Iterator[TurnEvent]:
    """One incognito turn: no long-term memory recalled, nothing stored. `history`: this
    incognito chat so far (the caller keeps it; the store never sees it)."""
    user_id, session_id = check_id(user_id), check_id(session_id, "session id")
    message = check_text(message, "Message")
    ctx = MemoryContext(user_id=user_id, session_id=session_id, query=message)
    return _private_turn(agent, "incognito", message, ctx, list(history), model)


def reanswer(
    agent: ChatAgent,
    user_id: str,
    session_id: str,
    turn_id: str,
    without: Sequence[str],
    *,
    model: str | None = None,
) -> Iterator[TurnEvent]:
    """The answer of `turn_id` given again with the memories `without` (ids) left out of its
    recall; nothing is stored. Raises InvalidInputError for an unknown turn or memory."""
    user_id, session_id = check_id(user_id), check_id(session_id, "session id")
    original = agent.turn_details(user_id, session_id).get(turn_id)
    if original is None:
        raise InvalidInputError(
            f"No stored answer {turn_id!r} in session {session_id!r}: its details expired or "
            "were cleared (a re-answer needs the recall the answer used)."
        )
    if not without:
        raise InvalidInputError("Pick at least one recalled memory to leave out.")
    ctx = original.recalled
    recalled_ids = {h.id for h in [*ctx.episodic, *ctx.semantic]} | {p.id for p in ctx.profile}
    unknown = [i for i in without if i not in recalled_ids]
    if unknown:
        raise InvalidInputError(
            f"Not recalled for that answer: {', '.join(map(repr, unknown))}. Pick among the "
            "memories its details list."
        )
    left_out = set(without)
    ctx = ctx.model_copy(
        update={
            "episodic": [h for h in ctx.episodic if h.id not in left_out],
            "semantic": [h for h in ctx.semantic if h.id not in left_out],
            "profile": [p for p in ctx.profile if p.id not in left_out],
            "short_term": [],
        }
    )
    messages = agent.coordinator.recent_messages(user_id, session_id, 200)
    before = []
    for m in messages:  # the conversation as it stood when the question was asked
        if m.metadata.get("turn_id") == turn_id:
            break
        before.append(m)
    history = history_window(before, budget_tokens=1 << 30)
    return _private_turn(agent, "re-answer", ctx.query, ctx, history, model)


def _private_turn(
    agent: ChatAgent,
    kind: PrivateKind,
    message: str,
    ctx: MemoryContext,
    history: list[ChatMessage],
    model: str | None,
) -> Iterator[TurnEvent]:
    started = time.perf_counter()
    model = model or agent.default_model
    status = agent.status(refresh=True, model=model)
    yield StatusEvent(
        text=f"Model {model} ready ({kind}: nothing is stored)"
        if status.ok
        else f"Model not available: {status.message}",
        stage="llm_status",
        mode="llm" if status.ok else "memory-only",
        llm=status,
    )
    knowing = judge(message, ctx)
    yield RecallEvent(text=f"{kind}: {len(knowing.context.episodic)} about you", context=ctx)
    block = render_memory_block(
        knowing.context, budget_tokens=int(agent.settings.memory_prompt_tokens)
    )
    state = AnswerState(rules=knowing.rules)
    records: list[ToolCallRecord] = []
    error: str | None = None
    what = "An incognito chat" if kind == "incognito" else "Answering again"
    if not status.ok and kind == "re-answer":
        # what a memory-only turn answers, from the recall without the picked memories
        state_word = "offline" if not status.reachable else "not available"
        reply = memory_only_reply(status.message, knowing.context, [], state=state_word, saved=None)
        yield TokenEvent(text=reply)
    elif not status.ok:
        reply = OFFLINE_REPLY.format(reason=_sentence(status.message), what=what)
        yield TokenEvent(text=reply)
    else:
        # grounding_texts None: nothing this turn says can be remembered
        tctx = ToolContext(user_id=ctx.user_id, session_id=ctx.session_id)
        try:
            with agent.replies.replying():  # a slow model's background work waits for it
                reply, _ = yield from agent.private_answerer.answer(
                    model, message, history, knowing.context, [], records, state, tctx, block.nonce
                )
        except LLMError as e:
            error = str(e)
            partial = "".join(state.parts)
            reply = (partial + "\n\n" if partial.strip() else "") + OFFLINE_REPLY.format(
                reason=_sentence(str(e)), what=what
            )
            yield TokenEvent(text=reply[len(partial) :])
    fit = state.fit
    result = TurnResult(
        turn_id=str(ULID()),
        reply=reply,
        mode="llm" if status.ok and error is None else "memory-only",
        recalled=knowing.context,
        memory_block=fit.block.text if fit is not None else block.text,
        memory_block_tokens=fit.block.tokens if fit is not None else block.tokens,
        thinking="".join(state.thinking),
        window=state.report,
        tools=records,
        timings_ms={"total": round((time.perf_counter() - started) * 1000, 1)},
        model=model,
        extraction="skipped (nothing is stored)",
        error=error,
        saved=False,
        unknown_about_user=knowing.unknown,
        held_back=knowing.held_back,
        private=kind,
        limits=list(state.limits),
        tokens_per_s=agent.tokens_per_s(model) if status.ok else None,
    )
    yield DoneEvent(text=reply, result=result)
