"""Procedural learning from real signals: after each answer the tool sequence is recorded with a
success score from what happened (failed or empty calls, the iteration cap); a correction in the
user's next message re-scores the previous turn's sequence low (`LearningTracker`)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from itertools import groupby

from agent.extraction import is_correction
from agent.types import ToolCallRecord
from memory.errors import MemorySystemError
from memory.service import AgentMemory

log = logging.getLogger(__name__)

#: Score given to the previous turn's tool sequence when the user corrects its answer.
CORRECTION_SCORE = 0.1


def tool_sequence(records: list[ToolCallRecord]) -> list[str]:
    """Tool names in call order, consecutive repeats collapsed (a retry is one step)."""
    return [name for name, _ in groupby(r.name for r in records)]


def success_score(records: list[ToolCallRecord], *, hit_cap: bool = False) -> float | None:
    """1.0 for a clean run; lowered by failed calls, empty results and the cap. None: no tools."""
    if not records:
        return None
    n = len(records)
    errors = sum(1 for r in records if r.error)
    empties = sum(1 for r in records if r.error is None and r.empty)
    score = 1.0 - 0.7 * errors / n - 0.4 * empties / n - (0.3 if hit_cap else 0.0)
    return round(min(1.0, max(0.0, score)), 3)


@dataclass
class _LastTurn:
    query: str
    tools: list[str]


class LearningTracker:
    """Remembers each session's previous turn, to re-score it when the user corrects it."""

    def __init__(self, coordinator: AgentMemory) -> None:
        self._coord = coordinator
        self._last: dict[tuple[str, str], _LastTurn] = {}
        self._lock = threading.Lock()

    def remember_turn(self, user_id: str, session_id: str, query: str, tools: list[str]) -> None:
        with self._lock:
            self._last[(user_id, session_id)] = _LastTurn(query, list(tools))
            if len(self._last) > 10_000:
                self._last.pop(next(iter(self._last)))

    def observe_message(self, user_id: str, session_id: str, message: str) -> str | None:
        """If `message` corrects the previous answer, lower that answer's tool sequence.

        Returns a human-readable note of what was done, or None."""
        if not is_correction(message):
            return None
        with self._lock:
            last = self._last.get((user_id, session_id))
        if last is None or not last.tools:
            return None
        try:
            self._coord.rescore_last_procedure(user_id, last.query, last.tools, CORRECTION_SCORE)
        except MemorySystemError as e:
            log.warning("could not re-score the corrected tool sequence: %s", e)
            return f"Could not lower the corrected pattern's score: {e}"
        seq = " -> ".join(last.tools)
        log.info("correction: lowered %s for %r", seq, last.query)
        return f"Your correction lowered the score of the tool pattern {seq}."
