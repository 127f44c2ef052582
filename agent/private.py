"""Turns that leave no trace: an incognito chat, and an answer given again without some
memories. Both are the one turn (`ChatAgent.run_turn`) given a `Private`: what the model may
know is given, not recalled, and nothing is written (docs/privacy.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from agent.prompt import history_window
from agent.turn_state import Private
from agent.types import TurnEvent
from memory.errors import InvalidInputError
from memory.models import ChatMessage, MemoryContext, check_id

if TYPE_CHECKING:
    from agent.loop import ChatAgent


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
    ctx = MemoryContext(user_id=user_id, session_id=session_id, query=message)
    private = Private("incognito", ctx, list(history))
    return agent.run_turn(user_id, session_id, message, model=model, private=private)


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
    history = history_window(before)
    private = Private("re-answer", ctx, history)
    return agent.run_turn(user_id, session_id, ctx.query, model=model, private=private)
