"""The one write policy every memory goes through (`WritePolicy.write` of a `MemoryCandidate`):
secrets masked, validation, duplicates, supersession by slot, grounding of model-made ones
(docs/agent.md, "Before storing"). Bulk paths use `add_episodic_many` (test_architecture)."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Literal

from pydantic import BaseModel, Field

from memory.models import EventType, MemoryType, SemanticFact
from memory.queries import ListQuery
from memory.service import AgentMemory, MemoryService
from memory.text import content_roots, embedder_knows, numbers
from memory.writing.classify import FACT_EVENT_TYPE, classify_event_type, detect_slot
from memory.writing.content import says_nothing_after_masking
from memory.writing.secrets import PiiPolicy, mask_secrets

log = logging.getLogger(__name__)

#: Word overlap (Jaccard of content words) above which a candidate repeats a memory stored
#: from the same message. Lexical, not vector: "I prefer evening workouts" is 0.86 cosine-close
#: to "I prefer morning workouts" yet a different fact.
SAME_TURN_OVERLAP = 0.5
#: Kinds that log what was said rather than state a fact.
LOG_EVENT_TYPES = frozenset({"interaction", "summary"})
#: Who wrote a memory (`StoredMemory.how` says each in words).
How = Literal["trigger", "llm", "interaction", "procedural", "tool", "user"]

_NORM_RE = re.compile(r"[\s]+")
_SUBJECT = frozenset({"user", "users"})  # "User prefers X" restates "I prefer X"


def normalise_text(text: str) -> str:
    return _NORM_RE.sub(" ", text.strip().lower()).rstrip(" .!;")


def restates(candidate: str, stored: str) -> bool:
    """Does `candidate` restate `stored` (same content words, no new numbers)?"""
    cw, sw = content_roots(candidate, ignore=_SUBJECT), content_roots(stored, ignore=_SUBJECT)
    if not numbers(candidate) <= numbers(stored) or not cw or not sw:
        return False
    return len(cw & sw) / len(cw | sw) >= SAME_TURN_OVERLAP


class StoredMemory(BaseModel):
    """A memory written by a writer (shown in a turn's details, the CLI, the MCP result)."""

    id: str
    memory_type: str = Field(description="episodic | semantic | procedural | short_term")
    text: str
    event_type: str | None = None
    how: How = Field(
        description="trigger phrase/#tag, LLM extraction, the turn itself, tool sequence, "
        "a model's remember_information tool, or a person in an editor"
    )
    superseded_id: str | None = Field(
        default=None, description="Id of the older memory this one replaced for recall"
    )
    tags: list[str] = Field(default_factory=list)
    masked: list[str] = Field(
        default_factory=list, description="What was replaced by a label, e.g. 'card number'"
    )


def candidate_for(
    text: str,
    kind: str | None = None,
    tags: list[str] | None = None,
    *,
    how: How = "tool",
    importance: float = 0.7,
) -> MemoryCandidate:
    """A candidate for `text`: of the given kind, or of the kind guessed from the text and
    tags. "fact"/"knowledge" is a fact about the user, never shared semantic knowledge."""
    if kind in (None, ""):
        et = classify_event_type(text, tags)
    elif kind in ("fact", "knowledge"):
        et = FACT_EVENT_TYPE
    else:
        et = EventType(kind)
    return MemoryCandidate(
        text=text.strip(),
        event_type=et,
        tags=list(tags or []),
        slot=detect_slot(text, et),
        how=how,
        importance=importance,
    )


class MemoryCandidate(BaseModel):
    """A memory the agent wants to store."""

    text: str
    event_type: EventType = FACT_EVENT_TYPE
    tags: list[str] = Field(default_factory=list)
    slot: str | None = Field(default=None, description="e.g. goal:weight; same slot supersedes")
    importance: float = Field(default=0.6, ge=0, le=1)
    how: How = "trigger"


#: Why a memory that only named a secret was not stored (memory/writing/content.py).
NOTHING_LEFT = "nothing left to remember once the secret is masked"
#: what a write that repeats a paused memory tells the user to do to have it recalled
RESUME_IT = "resume it to have it recalled"


class WriteResult(BaseModel):
    """What a write did: `stored`, or not stored because it repeats `duplicate_of`, or (no
    duplicate) for `reason`."""

    stored: StoredMemory | None = None
    duplicate_of: str | None = None
    reason: str = ""
    #: the memory it repeats is paused: kept but never recalled until the user resumes it
    duplicate_paused: bool = False

    def already_remembered(self) -> str:
        """How the chat and the editors name a write that repeats a memory: a paused one is
        named as such, or the user would take it for a memory the agent recalls."""
        paused = f" (paused: {RESUME_IT})" if self.duplicate_paused else ""
        return f"Already remembered{paused}"


def _event_type(record: dict[str, Any]) -> str:
    # Records hold the stored string; EventType is a StrEnum, so str() fits both.
    return str(record.get("event_type") or "")


def _is_active(record: dict[str, Any]) -> bool:
    return not record.get("superseded_by") and record.get("status", "active") != "superseded"


class WritePolicy:
    """Validation, classification, duplicate suppression and supersession in front of the
    store's writes: the one way a memory is written (see the module docstring)."""

    def __init__(
        self,
        coordinator: AgentMemory,
        *,
        dedup_threshold: float = 0.95,
        pii_policy: PiiPolicy = "keep",
    ) -> None:
        self._coord = coordinator
        self._threshold = dedup_threshold
        self._pii: PiiPolicy = pii_policy
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @property
    def pii_policy(self) -> PiiPolicy:
        """PII_POLICY for the writers that share this policy (a page's shared facts too)."""
        return self._pii

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
        **fields: Any,
    ) -> WriteResult:
        """Store `cand` unless it duplicates an active memory. `same_turn_ids`: memories already
        stored from the same message; a candidate that merely restates one of them (an LLM
        rewording of a trigger-phrase memory) is not stored twice. `fields`: further fields of
        the record (e.g. `expires_at_ms`), validated by the store. Raises InvalidInputError
        when PII_POLICY is refuse and the text holds an email or a phone number."""
        # Masked first: duplicates are found among stored (masked) texts, logs show no secret.
        masked = mask_secrets(cand.text, self._pii)
        cand = cand.model_copy(update={"text": masked.text})
        if cand.how != "interaction" and says_nothing_after_masking(cand.text):
            log.info("memory not stored (%s)", NOTHING_LEFT)
            return WriteResult(reason=NOTHING_LEFT)
        with self._lock(user_id):
            dup = self._find_duplicate(user_id, cand, same_turn_ids)
            if dup is not None:
                log.info("memory not stored (%s): %r", dup.reason, cand.text)
                return dup
            old_id = self._slot_holder(user_id, cand) if cand.slot else None
            if old_id is not None and old_id in same_turn_ids:
                # The same message already set this slot (explicitly, by a trigger phrase).
                return WriteResult(duplicate_of=old_id, reason="slot already set by this message")
            metadata: dict[str, Any] = {**(fields.pop("metadata", None) or {}), "source": cand.how}
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
                **fields,
            )
            stored = StoredMemory(
                id=mem.id,
                memory_type=MemoryType.EPISODIC.value,
                text=mem.description,
                event_type=mem.event_type.value,
                how=cand.how,
                superseded_id=old_id,
                tags=list(mem.tags),
                masked=masked.found,
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
            sim = hit.parts.vector or hit.score
            reason = ""
            if normalise_text(hit.text) == want:
                reason = "exact duplicate"
            elif hit.id in same_turn_ids and restates(cand.text, hit.text):
                reason = "already stored from this message"
            # A changed number is a changed fact, however close the vectors ("5k in 25
            # minutes" / "in 23 minutes" are 0.96 apart): never a near duplicate. Nor are
            # texts the embedder does not know: any two Thai sentences are 1.00 apart.
            elif (
                sim >= self._threshold
                and embedder_knows(cand.text)
                and embedder_knows(hit.text)
                and _event_type(hit.record) == cand.event_type.value
                and numbers(cand.text) == numbers(hit.text)
            ):
                reason = f"near duplicate (similarity {sim:.3f})"
            if reason:
                # A paused memory stays paused: saying it again in passing must not undo a
                # pause, and the writer can tell the user where the memory is.
                paused = f", of a paused memory ({RESUME_IT})"
                is_paused = bool(hit.record.get("paused"))
                return WriteResult(
                    duplicate_of=hit.id,
                    reason=reason + paused * is_paused,
                    duplicate_paused=is_paused,
                )
        return None

    def _slot_holder(self, user_id: str, cand: MemoryCandidate) -> str | None:
        """The newest active memory of this user with the candidate's slot."""
        rows, _ = self._coord.list_memories(
            user_id,
            MemoryType.EPISODIC,
            ListQuery(
                event_types=[cand.event_type.value],
                include_superseded=False,
                sort_by="timestamp",
                descending=True,
                page_size=200,
            ),
        )
        for row in rows:
            # a listed row's metadata is decoded already (`memory.stores.records`)
            if (row.get("metadata") or {}).get("slot") == cand.slot and _is_active(row):
                return str(row["id"])
        return None


def write_fact(
    service: MemoryService,
    text: str,
    *,
    added_by: str = "",
    category: str = "general",
    fact_type: str = "general",
    context: str = "",
    source: str = "user",
    pii_policy: PiiPolicy = "keep",
    timestamp_ms: int | None = None,
) -> tuple[SemanticFact | None, str | None]:
    """A shared knowledge fact, unless the same text is already known: (the new fact, None)
    or (None, the id of the fact it repeats). Its secrets are masked (as in `WritePolicy`).
    `timestamp_ms`: when it was learned (default now)."""
    text = mask_secrets(text, pii_policy).text
    want = normalise_text(text)
    for hit in service.search(added_by or "_", text, MemoryType.SEMANTIC, k=5):
        if normalise_text(hit.text) == want:
            return None, hit.id
    fact = service.add_semantic(
        text,
        category=category,
        fact_type=fact_type,
        added_by=added_by,
        context=context,
        source=source,
        timestamp_ms=timestamp_ms,
    )
    return fact, None
