"""Writing extracted memories: duplicate suppression and supersession, one user at a time.

Every memory the agent writes (trigger phrase, LLM extraction, the remember_information tool)
goes through `MemoryWriter.write`:

1. exact duplicate: the same text (case, spacing and final punctuation ignored) as an active
   memory of the user -> not stored;
2. near duplicate: cosine similarity >= `dedup_threshold` (0.95 by default: conservative, so
   "goal: 75 kg" and "goal: 80 kg" stay distinct) with an active memory of the same event
   type -> not stored;
3. supersession: a candidate with a slot (e.g. `goal:weight`) replaces the active memory of
   that user holding the same slot: the old one is hidden from recall and kept as history.

Writes of one user are serialised with a per-user lock (the answer thread and the background
extraction thread may write at the same time).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.types import StoredMemory
from memory.models import EventType, MemoryType
from memory.service import AgentMemory

log = logging.getLogger(__name__)

#: Event type for a plain fact about the user ("my dog is called Rex").
FACT_EVENT_TYPE = EventType.FACT

#: Word overlap (Jaccard of content words) above which a candidate repeats a memory stored
#: from the same message. Lexical, not vector: "I prefer evening workouts" is 0.86 cosine-close
#: to "I prefer morning workouts" yet a different fact.
SAME_TURN_OVERLAP = 0.5
#: Kinds that log what was said rather than state a fact.
LOG_EVENT_TYPES = frozenset({"interaction", "summary"})

_NORM_RE = re.compile(r"[\s]+")
_WORD_RE = re.compile(r"[a-z]+|\d+(?:[.,]\d+)?")
_STOP = frozenset(
    "a an the i i'm im me my mine we our you your user user's is am are was were be been to of "
    "in on at for and or but with that this it its as by from out up do does did have has had "
    "also really very just so".split()
)


def normalise_text(text: str) -> str:
    return _NORM_RE.sub(" ", text.strip().lower()).rstrip(" .!;")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content_words(text: str) -> tuple[set[str], set[str]]:
    """(content word stems, numbers) of a text."""
    tokens = _WORD_RE.findall(text.lower())
    numbers = {t for t in tokens if t[0].isdigit()}
    words = {_stem(t) for t in tokens if not t[0].isdigit() and t not in _STOP}
    return words, numbers


def restates(candidate: str, stored: str) -> bool:
    """Does `candidate` restate `stored` (same content words, no new numbers)?"""
    cw, cn = _content_words(candidate)
    sw, sn = _content_words(stored)
    if not cn <= sn or not cw or not sw:
        return False
    return len(cw & sw) / len(cw | sw) >= SAME_TURN_OVERLAP


class MemoryCandidate(BaseModel):
    """A memory the agent wants to store."""

    text: str
    event_type: EventType = FACT_EVENT_TYPE
    tags: list[str] = Field(default_factory=list)
    slot: str | None = Field(default=None, description="e.g. goal:weight; same slot supersedes")
    importance: float = Field(default=0.6, ge=0, le=1)
    how: Literal["trigger", "llm", "tool"] = "trigger"


class WriteResult(BaseModel):
    stored: StoredMemory | None = None
    duplicate_of: str | None = None
    reason: str = ""


def _metadata(record: dict[str, Any]) -> dict[str, Any]:
    meta = record.get("metadata")
    if isinstance(meta, str):
        try:
            meta = json.loads(meta) if meta else {}
        except json.JSONDecodeError:
            return {}
    return meta if isinstance(meta, dict) else {}


def _event_type(record: dict[str, Any]) -> str:
    # Records hold the stored string; EventType is a StrEnum, so str() fits both.
    return str(record.get("event_type") or "")


def _is_active(record: dict[str, Any]) -> bool:
    return not record.get("superseded_by") and record.get("status", "active") != "superseded"


class MemoryWriter:
    """Dedup + supersession in front of `coordinator.add_episodic`."""

    def __init__(self, coordinator: AgentMemory, *, dedup_threshold: float = 0.95) -> None:
        self._coord = coordinator
        self._threshold = dedup_threshold
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, user_id: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(user_id, threading.Lock())

    def write(
        self,
        user_id: str,
        session_id: str,
        cand: MemoryCandidate,
        *,
        context: str = "",
        same_turn_ids: frozenset[str] = frozenset(),
    ) -> WriteResult:
        """Store `cand` unless it duplicates an active memory. `same_turn_ids`: memories already
        stored from the same message; a candidate that merely restates one of them (an LLM
        rewording of a trigger-phrase memory) is not stored twice."""
        with self._lock(user_id):
            dup = self._find_duplicate(user_id, cand, same_turn_ids)
            if dup is not None:
                log.info("memory not stored (%s): %r", dup.reason, cand.text)
                return dup
            old_id = self._slot_holder(user_id, cand) if cand.slot else None
            if old_id is not None and old_id in same_turn_ids:
                # The same message already set this slot (explicitly, by a trigger phrase).
                return WriteResult(duplicate_of=old_id, reason="slot already set by this message")
            metadata: dict[str, Any] = {"source": cand.how}
            if cand.slot:
                metadata["slot"] = cand.slot
            mem = self._coord.add_episodic(
                user_id,
                cand.text,
                event_type=cand.event_type,
                tags=cand.tags,
                importance=cand.importance,
                metadata=metadata,
                context=context,
                session_id=session_id,
                supersedes=old_id,
            )
            stored = StoredMemory(
                id=mem.id,
                memory_type=MemoryType.EPISODIC.value,
                text=mem.description,
                event_type=mem.event_type.value,
                how=cand.how,
                superseded_id=old_id,
                tags=list(mem.tags),
            )
            log.info(
                "stored %s memory %s (%s)%s",
                stored.event_type,
                mem.id,
                cand.how,
                f", superseding {old_id}" if old_id else "",
            )
            return WriteResult(stored=stored, reason="superseded" if old_id else "stored")

    def _find_duplicate(
        self, user_id: str, cand: MemoryCandidate, same_turn_ids: frozenset[str]
    ) -> WriteResult | None:
        want = normalise_text(cand.text)
        for hit in self._coord.find_similar_episodic(user_id, cand.text, k=5):
            if not _is_active(hit.record):
                continue
            # A logged exchange (or a summary) records that something was said; a fact stated
            # in it is new knowledge, never its duplicate ("I sprained my ankle" must become a
            # health event, not stay a chat log).
            if _event_type(hit.record) in LOG_EVENT_TYPES:
                continue
            if normalise_text(hit.text) == want:
                return WriteResult(duplicate_of=hit.id, reason="exact duplicate")
            if hit.id in same_turn_ids and restates(cand.text, hit.text):
                return WriteResult(duplicate_of=hit.id, reason="already stored from this message")
            sim = hit.parts.vector or hit.score
            if sim >= self._threshold and _event_type(hit.record) == cand.event_type.value:
                return WriteResult(
                    duplicate_of=hit.id, reason=f"near duplicate (similarity {sim:.3f})"
                )
        return None

    def _slot_holder(self, user_id: str, cand: MemoryCandidate) -> str | None:
        """The newest active memory of this user with the candidate's slot."""
        rows, _ = self._coord.list_memories(
            user_id,
            MemoryType.EPISODIC,
            event_types=[cand.event_type.value],
            include_superseded=False,
            sort_by="timestamp",
            descending=True,
            page_size=200,
        )
        for row in rows:
            if _metadata(row).get("slot") == cand.slot and _is_active(row):
                return str(row["id"])
        return None
