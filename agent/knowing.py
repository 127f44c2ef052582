"""Saying "I don't know you on this" instead of guessing from a weak match (docs/privacy.md):
when the message asks about the user and no memory about them clears the moderate band, the
low episodic hits are held back from the prompt and the rules gain UNKNOWN_RULE. Semantic hits
and memories stored from the current message are left as they are."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.models import BAND_MODERATE, MemoryContext, RecallHit
from memory.recall.statements import request_kind
from memory.writing import StoredMemory

UNKNOWN_RULE = (
    "6. For this message no searched long-term memory about the user is relevant enough (none "
    "clears the moderate relevance band). Unless this conversation, the user profile or a tool "
    "says it, do not state or guess personal facts about the user (preferences, history, "
    "plans, health); say plainly "
    "that you don't know this about them yet, and ask if it helps."
)

_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)


def asks_about_user(message: str) -> bool:
    """A question or request in the first person ("what's my resting heart rate goal?",
    "plan my running"): an answer would need what the agent knows about the user."""
    if not _FIRST_PERSON.search(message):
        return False
    return "?" in message or request_kind(message) is not None


@dataclass
class Knowing:
    """What a turn knows about the user for this message."""

    context: MemoryContext  # what goes to the prompt (low hits held back when unknown)
    unknown: bool = False
    held_back: list[RecallHit] = field(default_factory=list)

    @property
    def rules(self) -> list[str]:
        return [UNKNOWN_RULE] if self.unknown else []


def judge(message: str, ctx: MemoryContext, stored_now: Sequence[StoredMemory] = ()) -> Knowing:
    """Hold back the weak episodic hits when the message asks about the user and nothing
    about them is at least moderate (module docstring)."""
    if not asks_about_user(message) or stored_now:
        return Knowing(ctx)
    if any(h.score >= BAND_MODERATE for h in ctx.episodic):
        return Knowing(ctx)
    held = list(ctx.episodic)
    return Knowing(ctx.model_copy(update={"episodic": []}), unknown=True, held_back=held)
