"""Stopping an answer while it streams, and keeping what had arrived (⏹ Stop).

The stopped run closes the agent's stream and stores the partial exchange, marked stopped;
the next run waits for it (`wait_for_stopped_turn`). How: docs/app.md, "How the pages are built"."""

from __future__ import annotations

import logging
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from ulid import ULID

from agent.types import ToolCallRecord, TurnResult
from memory.errors import MemorySystemError
from memory.models import MemoryContext
from memory.service import MemoryService

log = logging.getLogger(__name__)

#: Ends a stopped answer as stored: the model reads it in the history next turn (the answer
#: was cut), and the page shows it.
STOPPED_MARK = "[stopped]"


#: How long a new run waits for a stopped turn to store its partial answer (seconds). The
#: stopped run notices the stop at its next call into Streamlit: with a model that streams, at
#: its next word.
STOP_WAIT_S = 10.0
_TURN_KEY = "_turn_running"


def turn_started() -> threading.Event:
    """Mark a turn running in this browser session; set the event when it is over."""
    done = threading.Event()
    st.session_state[_TURN_KEY] = done
    return done


def wait_for_stopped_turn() -> None:
    """A run started by ⏹ Stop (or any click while a turn streams): wait until the turn it
    interrupted has stored its partial answer, so the history shows it."""
    done = st.session_state.get(_TURN_KEY)
    if isinstance(done, threading.Event):
        if not done.wait(STOP_WAIT_S):
            log.warning("a stopped turn did not finish within %.0f s", STOP_WAIT_S)
        st.session_state.pop(_TURN_KEY, None)


def stopped_reply(partial: str) -> str:
    text = partial.rstrip()
    return f"{text} {STOPPED_MARK}" if text else STOPPED_MARK


@dataclass
class StreamGuard:
    """What one turn has streamed so far, and whether the agent stored the exchange itself."""

    coordinator: MemoryService
    user_id: str
    session_id: str
    prompt: str
    parts: list[str] = field(default_factory=list)
    memory_only: bool = False
    stored_by_agent: bool = False
    finished: bool = False
    stopped: bool = False
    model: str | None = None
    #: what the turn had got to: recall, the memory block of the last request, ended tools
    recalled: MemoryContext | None = None
    memory_block: str = ""
    memory_block_tokens: int = 0
    tools: list[ToolCallRecord] = field(default_factory=list)

    def watch(self, events: Iterator[Any]) -> Generator[Any, None, None]:
        """Pass the agent's events on, noting the reply's pieces; closing this generator
        closes the agent's (and so the model's) stream."""
        try:
            for ev in events:
                if ev.kind == "status" and getattr(ev, "mode", None) == "memory-only":
                    self.memory_only = True
                elif ev.kind == "token":
                    if self.memory_only:
                        # memory-only: the notice is streamed after the exchange is stored
                        self.stored_by_agent = True
                    else:
                        self.parts.append(ev.text)
                elif ev.kind == "done":
                    self.stored_by_agent = True
                elif ev.kind == "recall":
                    self.recalled = ev.context
                elif ev.kind == "prompt":
                    self.memory_block, self.memory_block_tokens = (
                        ev.memory_block,
                        ev.memory_block_tokens,
                    )
                elif ev.kind == "tool_end":
                    self.tools.append(ev.record)
                yield ev
            self.finished = True
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()

    def keep_partial(self) -> None:
        """After an interrupted stream: store the message and the partial answer, marked
        stopped, unless the agent stored the exchange already."""
        if self.finished or self.stored_by_agent:
            return
        self.stopped = True
        reply = stopped_reply("".join(self.parts))
        details = self.details(reply)
        turn_id = details.turn_id if details is not None else ""
        try:
            self.coordinator.store_stopped_exchange(
                self.user_id, self.session_id, self.prompt, reply, turn_id=turn_id
            )
            if details is not None:
                self.coordinator.save_turn_details(
                    self.user_id, self.session_id, turn_id, details.for_storage()
                )
        except (MemorySystemError, ValueError) as e:
            log.warning("could not keep a stopped answer: %s", e)

    def details(self, reply: str) -> TurnResult | None:
        """The stopped turn's details as far as it got (None before recall ended)."""
        if self.recalled is None:
            return None
        return TurnResult(
            turn_id=str(ULID()),
            reply=reply,
            mode="llm",
            recalled=self.recalled,
            memory_block=self.memory_block,
            memory_block_tokens=self.memory_block_tokens,
            tools=self.tools,
            model=self.model,
            extraction="skipped (stopped)",
            summary="not needed",
            stopped=True,
        )
