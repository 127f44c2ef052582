"""Domain models of the four CoALA memory types, recall results and the coordinator's context."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Self

from pydantic import BaseModel, Field

from memory.errors import InvalidInputError
from memory.shape import MAX_METADATA_DEPTH, check_depth

#: Longest text accepted for one memory or message. Long enough for a pasted paragraph, short
#: enough that one memory stays a memory (and embeds within MiniLM's 256-token window's reach).
MAX_TEXT_CHARS = 4000
MAX_ID_CHARS = 200
MAX_TAGS = 20
MAX_METADATA_BYTES = 8000


def now_ms() -> int:
    return int(time.time() * 1000)


class _Choice(StrEnum):
    """A str enum whose `parse` accepts any case and names the valid values when it fails."""

    @classmethod
    def parse(cls, value: str | StrEnum) -> Self:
        try:
            return cls(str(value).lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            what = re.sub(r"(?<!^)([A-Z])", r" \1", cls.__name__).lower()
            raise InvalidInputError(f"Unknown {what} {value!r}; use one of: {valid}.") from None


class MemoryType(_Choice):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    SHORT_TERM = "short_term"


class EventType(_Choice):
    PREFERENCE = "preference"
    GOAL = "goal"
    HEALTH_EVENT = "health_event"
    INTERACTION = "interaction"
    MILESTONE = "milestone"
    CORRECTION = "correction"
    FEEDBACK = "feedback"
    FACT = "fact"  # a stable fact about the user ("my dog is called Rex")
    SUMMARY = "summary"  # what turns of a session said, written when they leave the prompt


def check_unicode(value: str, what: str = "text") -> str:
    """Refuse a string that is not valid Unicode: a lone surrogate (JSON's `"\\ud800"`, or a
    byte Python could not decode) cannot be encoded as UTF-8, so Redis, the tokenizer and the
    page would each fail on it later, deep down and without saying which text was at fault.
    A NUL character is refused too: C code down the line (RediSearch's tokenizer, terminals,
    many readers of an export) takes it for the end of the text."""
    nul = value.find("\x00")
    if nul >= 0:
        what = what[:1].lower() + what[1:]
        raise InvalidInputError(
            f"The {what} contains a NUL character (\\x00, at character {nul + 1}), which "
            "no text may hold: remove it."
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        what = what[:1].lower() + what[1:]
        raise InvalidInputError(
            f"The {what} is not valid Unicode: character {e.start + 1} is a lone surrogate "
            f"(\\u{ord(value[e.start]):04x}, half of a UTF-16 pair or a byte read with the wrong "
            "encoding). Remove or retype it."
        ) from None
    return value


def is_blank(value: str) -> bool:
    """True when `value` shows nothing: only spaces, line breaks, control characters or
    invisible format characters (zero-width space and joiners, byte-order mark, direction
    marks). `str.strip` keeps the invisible ones, so a pasted zero-width space would
    otherwise pass as text and be stored as an empty-looking memory."""
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in value)


def check_text(value: str, what: str = "text") -> str:
    """Strip and validate a memory text: valid Unicode, not blank (see `is_blank`), at most
    MAX_TEXT_CHARS characters."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string.")
    value = check_unicode(value, what).strip()
    if is_blank(value):
        raise InvalidInputError(f"{what} is empty: write what should be remembered.")
    if len(value) > MAX_TEXT_CHARS:
        raise InvalidInputError(
            f"{what} is {len(value)} characters; the limit is {MAX_TEXT_CHARS}. "
            "Split it into several memories."
        )
    return value


class CheckedId(str):
    """An id `check_id` accepted: validated once at the edge (the CLI, the page, the agent's
    `run_turn`), passed down through the layers, and not checked again on the way."""

    __slots__ = ()


def _no_detector(value: str, what: str) -> str:
    raise RuntimeError("memory.writing.secrets is not loaded: ids cannot be checked for secrets")


#: `memory.writing.secrets.check_no_secret`, which registers itself when it loads (`memory`'s
#: `__init__` loads it before any of its modules is used): the write package imports this
#: module, so this module cannot import it.
_refuse_secret: Callable[[str, str], str] = _no_detector


def use_secret_detector(check: Callable[[str, str], str]) -> None:
    global _refuse_secret
    _refuse_secret = check


def check_id(value: str, what: str = "user id") -> str:
    """Validate a user or session id (or a turn's): non-empty, printable, at most MAX_ID_CHARS
    characters, holding no secret. Returns it as a `CheckedId`; one already checked is
    returned as it is.

    Any characters are allowed (they are escaped in filters and digested in keys). An id that
    holds a secret is refused, never masked: two ids masked alike would become one (two
    users' records joined)."""
    if type(value) is CheckedId:
        return value
    if not isinstance(value, str) or is_blank(value):
        raise InvalidInputError(f"A {what} is required (got {value!r}).")
    if len(value) > MAX_ID_CHARS:
        raise InvalidInputError(f"The {what} is longer than {MAX_ID_CHARS} characters.")
    if any(ord(c) < 32 for c in value):
        raise InvalidInputError(f"The {what} contains control characters.")
    return CheckedId(_refuse_secret(check_unicode(value, what), what))


#: Labels (a fact's category and type, its source) reach the system prompt and the page: letters
#: and digits of any script, spaces and a few punctuation marks; no newline, no markup.
LABEL_CHARS = "letters, digits, spaces and _ - . / & ( ) + '"
_LABEL_RE = re.compile(r"[\w .&()/+'-]+")
#: Tags are single words: no spaces, and no comma (the index separates tags with commas, so
#: `a,b` would silently become two tags).
TAG_CHARS = "letters, digits and _ - . / & +"
_TAG_RE = re.compile(r"[\w.&/+-]+")


def check_label(value: str, what: str, max_chars: int = 64) -> str:
    """Validate a label: 1..max_chars characters from LABEL_CHARS."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"The {what} is empty.")
    value = check_unicode(value, what).strip()
    if len(value) > max_chars:
        raise InvalidInputError(f"The {what} must be 1-{max_chars} characters.")
    if not _LABEL_RE.fullmatch(value):
        raise InvalidInputError(f"The {what} {value!r} may only hold {LABEL_CHARS}.")
    return value


def check_tags(tags: list[str] | None) -> list[str]:
    out: list[str] = []
    for t in tags or []:
        if not isinstance(t, str):
            raise InvalidInputError("Tags must be strings.")
        t = check_unicode(t, "tag").strip().lstrip("#").strip()
        if not t:
            continue
        if len(t) > 64:
            raise InvalidInputError(f"Tag {t[:20]!r}... is longer than 64 characters.")
        if not _TAG_RE.fullmatch(t):
            raise InvalidInputError(
                f"Tag {t!r} may only hold {TAG_CHARS} (one word per tag; give several tags "
                "separately)."
            )
        if t.lower() not in out:
            out.append(t.lower())
    if len(out) > MAX_TAGS:
        raise InvalidInputError(f"At most {MAX_TAGS} tags per memory.")
    return out


def check_metadata(metadata: Any) -> dict[str, Any]:
    """A JSON object (or its text) of at most MAX_METADATA_BYTES and MAX_METADATA_DEPTH levels:
    the size of a text first, then its depth, before parsing or serialising (which recurse)."""
    if metadata is None:
        return {}
    size = len(metadata.encode("utf-8", "surrogatepass")) if isinstance(metadata, str) else 0
    if size > MAX_METADATA_BYTES:
        raise InvalidInputError(f"Metadata is {size} bytes; the limit is {MAX_METADATA_BYTES}.")
    check_depth(metadata, MAX_METADATA_DEPTH, "Metadata")
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"Metadata is not valid JSON: {e.msg}.") from None
    if not isinstance(metadata, dict):
        raise InvalidInputError("Metadata must be a JSON object (key/value pairs).")
    try:
        text = json.dumps(metadata, ensure_ascii=False)
        size = len(json.dumps(metadata))
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"Metadata cannot be stored as JSON: {e}.") from None
    # Not ASCII-escaped: an escaped lone surrogate would pass and come back on reading.
    check_unicode(text, "metadata")
    if size > MAX_METADATA_BYTES:
        raise InvalidInputError(f"Metadata is {size} bytes; the limit is {MAX_METADATA_BYTES}.")
    return metadata


# --------------------------------------------------------------------------------------
# Stored records
# --------------------------------------------------------------------------------------


class EpisodicMemory(BaseModel):
    """Something that happened with one user."""

    id: str = Field(description="ULID, sortable by creation time")
    user_id: str
    event_type: EventType = EventType.INTERACTION
    description: str = Field(description="The memory itself, as recalled")
    context: str = Field(default="", description="Where/why it was learned")
    metadata: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    session_id: str = ""
    timestamp: int = Field(description="When it happened, ms since epoch")
    created_at: int = Field(description="When it was stored, ms since epoch")
    importance: float = Field(default=0.5, ge=0, le=1)
    access_count: int = 0
    last_accessed: int = 0
    expires_at: int | None = Field(default=None, description="ms since epoch; None = never")
    pinned: bool = False
    superseded_by: str | None = Field(
        default=None, description="Id of the memory that replaced this one (kept as history)"
    )
    paused: bool = Field(
        default=False, description="Kept and listed, but never recalled nor in the user profile"
    )

    @property
    def text(self) -> str:
        return self.description


class SemanticFact(BaseModel):
    """An impersonal fact: pre-loaded from the knowledge file or added by a user."""

    id: str
    fact: str
    category: str = "general"
    fact_type: str = "general"
    context: str = ""
    source: str = "user"
    added_by: str = Field(
        default="", description="User id that added it; '' for the knowledge file"
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    timestamp: int
    pinned: bool = False
    importance: float = Field(default=0.5, ge=0, le=1)
    shared: bool = Field(
        default=False, description="A user's fact an admin shared: recalled for every user"
    )

    @property
    def text(self) -> str:
        return self.fact

    @property
    def is_shared(self) -> bool:
        """Knowledge-file facts (no `added_by`) and facts an admin shared: everyone's."""
        return self.shared or not self.added_by


class RunStats(BaseModel):
    """How the runs of one tool sequence, or of every sequence tried for a question, went."""

    executions: int = 0
    successes: int = 0
    failures: int = 0
    avg_time_ms: float = 0.0
    avg_score: float = 0.0
    last_used: int = 0

    def add_run(self, score: float, ms: float, now: int) -> None:
        """Count one run (a success when it scored 0.5 or more) into the counts and means."""
        self.executions += 1
        self.successes += int(score >= 0.5)
        self.failures += int(score < 0.5)
        self.avg_time_ms += (ms - self.avg_time_ms) / self.executions
        self.avg_score += (score - self.avg_score) / self.executions
        self.last_used = now


class SequenceStats(RunStats):
    """One distinct tool sequence tried for a query pattern."""

    tools: list[str]
    score_sum: float = 0.0


class ProceduralPattern(RunStats):
    """A learned way of answering one kind of question for one user."""

    id: str = Field(description="Normalised-query hash")
    user_id: str
    query_pattern: str
    normalized_query: str
    tool_sequence: list[str] = Field(description="The best sequence so far")
    created_at: int
    sequences: dict[str, SequenceStats] = Field(default_factory=dict)
    confidence: float = 0.0
    recommended: bool = False
    pinned: bool = False


class ChatMessage(BaseModel):
    id: str
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    timestamp: int
    metadata: dict[str, Any] = Field(default_factory=dict)


# --------------------------------------------------------------------------------------
# Recall
# --------------------------------------------------------------------------------------

RelevanceBand = Literal["high", "moderate", "low"]

#: Band thresholds on a hit's final score, the probability that it is relevant: set from the
#: reliability table of the fit (`python -m lab.fit_recall`). Here, not in
#: memory/recall/scoring.py, because every layer bands scores and the models sit below recall.
BAND_HIGH = 0.3
BAND_MODERATE = 0.1
#: Search shown to people stops below this score; how it was fitted: docs/recall.md, "What
#: search shows people". Recall for the prompt is not floored.
SHOWN_FLOOR = 0.12


def relevance_band(score: float) -> RelevanceBand:
    """Band of a recall probability; thresholds from the fit's reliability table."""
    if score >= BAND_HIGH:
        return "high"
    if score >= BAND_MODERATE:
        return "moderate"
    return "low"


class ScoreParts(BaseModel):
    """Why a memory was recalled: each signal in 0..1 and the fused final score."""

    vector: float = Field(default=0.0, description="Cosine similarity of embeddings (0..1)")
    text: float = Field(
        default=0.0,
        description="IDF-weighted share of the query's words the memory holds (0..1)",
    )
    recency: float = Field(default=0.0, description="exp decay with the configured half-life")
    importance: float = 0.0
    time: float = Field(default=0.0, description="1 when dated inside a date the query names")
    stated: float = Field(
        default=0.0,
        description="When the message asks for advice or about the user's tastes: how likely "
        "the memory states a preference or constraint of the user (0..1; 0 otherwise)",
    )
    own: float = Field(
        default=0.0,
        description="1 when the message asks for advice, a recommendation or a plan and the "
        "memory is one of the user's own facts (preference, goal, health event...)",
    )
    neighbour: float = Field(
        default=0.0,
        description="Best own probability (before neighbours) among the strong hits of its "
        "session this memory is a neighbour of; it adds to the memory's own evidence. 0 = none",
    )
    final: float = Field(default=0.0, description="Probability that the memory is relevant")


class RecallHit(BaseModel):
    id: str
    memory_type: MemoryType
    text: str
    score: float
    band: RelevanceBand
    parts: ScoreParts
    record: dict[str, Any] = Field(default_factory=dict, description="The stored fields")


def shown_hits(
    hits: Iterable[RecallHit], floor: float = SHOWN_FLOOR
) -> tuple[list[RecallHit], int]:
    """What search shows people: the hits at or above `floor`, best first, and how many fell
    below it (then there are "no more relevant memories"); the prompt's recall is not floored."""
    ranked = sorted(hits, key=lambda h: h.score, reverse=True)
    kept = [h for h in ranked if h.score >= floor]
    return kept, len(ranked) - len(kept)


class ProceduralSuggestion(BaseModel):
    pattern_id: str
    query_pattern: str
    tool_sequence: list[str]
    confidence: float
    recommended: bool
    executions: int
    avg_score: float
    similarity: float = Field(description="1.0 for an exact normalised-query match")
    match: Literal["exact", "similar"]


class ProfileLine(BaseModel):
    """One line of the user profile: a standing memory of the user (diet, goal, injury, how
    they like answers), always in the prompt; `id` is the episodic memory it shows."""

    id: str
    kind: EventType
    text: str
    importance: float = 0.5
    pinned: bool = False


#: The latest time a record may hold (ms since 1970): the end of year 9999. A later one (1e30,
#: 2**63) is no time, and a date past year 9999 breaks every reader that shows one.
MAX_TIME_MS = 253_402_300_799_999


def in_time_range(ms: float) -> bool:
    return 0 <= ms <= MAX_TIME_MS


@dataclass(frozen=True)
class Usage:
    """How often a memory was in a stored answer's recall, and when last."""

    answers: int
    last_ms: int


@dataclass(frozen=True)
class UsedIn:
    """One stored answer that used a memory."""

    turn_id: str
    session_id: str
    at_ms: int


class MemoryContext(BaseModel):
    """Everything recalled for one message, ready for a prompt and for display."""

    user_id: str
    session_id: str
    query: str
    episodic: list[RecallHit] = Field(default_factory=list)
    semantic: list[RecallHit] = Field(default_factory=list)
    procedural: ProceduralSuggestion | None = None
    short_term: list[ChatMessage] = Field(default_factory=list)
    short_term_dropped: int = Field(
        default=0, description="Older messages of the session that are not in `short_term`"
    )
    session_summary: RecallHit | None = Field(
        default=None, description="Latest summary of this session, when messages were dropped"
    )
    profile: list[ProfileLine] = Field(
        default_factory=list, description="The user profile (memory.user_profile), best first"
    )
    hits: dict[str, int] = Field(default_factory=dict, description="hits per memory type")
    timings_ms: dict[str, float] = Field(default_factory=dict)
