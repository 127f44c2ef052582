"""What the steps of one chat turn share (`agent.loop.ChatAgent._turn`) and its model rounds
(`agent.answering.Answerer.answer`), and small helpers over it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from ulid import ULID

from agent.budget import Fit
from agent.errors import LLMError
from agent.knowing import Knowing
from agent.types import LLMStatus, StoredMemory, ToolCallRecord, WindowReport
from memory.block import MemoryBlock
from memory.models import ChatMessage, MemoryContext
from memory.writing import PiiPolicy, found_in

PrivateKind = Literal["incognito", "re-answer"]


@dataclass(frozen=True)
class Private:
    """A turn that stores nothing (agent.private): what it is given instead of recalling, and
    the conversation before it."""

    kind: PrivateKind
    context: MemoryContext
    history: list[ChatMessage]


def masked_labels(t: TurnState, pii: PiiPolicy) -> list[str]:
    """What this turn stored as a label instead of as typed: in the exchange (when it was
    saved) and in the memories it wrote."""
    found = [*t.masked_at_entry, *found_in([t.message, t.reply], pii)] if t.saved else []
    return list(dict.fromkeys([*found, *(k for m in t.stored for k in m.masked)]))


def ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


@dataclass
class AnswerState:
    """What one turn's model rounds produced, besides the reply's return value."""

    parts: list[str] = field(default_factory=list)  # the reply as shown, piece by piece
    thinking: list[str] = field(default_factory=list)  # thoughts: shown folded, never stored
    fit: Fit | None = None  # the last request's plan (its block and history window)
    #: the first request's plan: its window is what the conversation shows this turn (later
    #: rounds may trim more for tool results, and the next turn shows those messages again)
    first_fit: Fit | None = None
    report: WindowReport = field(default_factory=WindowReport)
    #: rules for this turn only, after the standing ones (agent.knowing's UNKNOWN_RULE)
    rules: list[str] = field(default_factory=list)
    #: what a token cap cut this turn, and what to do (the status box shows them)
    limits: list[str] = field(default_factory=list)
    #: the slow model's note when its replies were capped this turn (Answerer.speed_note)
    slow: str | None = None
    #: what of the instructions the reply repeated (agent.echo); the reply was stopped
    echoed: str | None = None


@dataclass
class TurnState:
    """What the steps of one turn share (ChatAgent._turn)."""

    user_id: str
    session_id: str
    message: str
    model: str
    masked_at_entry: list[str] = field(default_factory=list)  # the secrets `message` had
    turn_id: str = field(default_factory=lambda: str(ULID()))
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    status: LLMStatus = field(
        default_factory=lambda: LLMStatus(reachable=False, host="", model="", model_available=False)
    )
    mode: Literal["llm", "memory-only"] = "memory-only"
    ctx: MemoryContext = field(
        default_factory=lambda: MemoryContext(user_id="_", session_id="_", query="")
    )
    stored: list[StoredMemory] = field(default_factory=list)
    block: MemoryBlock = field(
        default_factory=lambda: MemoryBlock(text="", nonce="", lines=0, omitted=0, tokens=0)
    )
    history: list[ChatMessage] = field(default_factory=list)
    window: list[ChatMessage] = field(default_factory=list)  # what the summary is measured on
    records: list[ToolCallRecord] = field(default_factory=list)
    answer: AnswerState = field(default_factory=AnswerState)
    hit_cap: bool = False
    llm_error: LLMError | None = None
    reply: str = ""
    lead: str = ""  # a failed model's partial answer, kept before the memory-only notice
    reason: str = ""
    offline_state: Literal["offline", "failed", "not available"] = "not available"
    score: float | None = None
    saved: bool = True
    stored_ids: list[str] = field(default_factory=list)
    knowing: Knowing | None = None  # what the prompt may say about the user (agent.knowing)
    private: Private | None = None  # an incognito turn or a re-answer: nothing is stored

    def after_lead(self, notice: str) -> str:
        """The reply: the partial answer (if any), then the notice."""
        return self.lead + ("\n\n" if self.lead else "") + notice

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = ms_since(t0)
