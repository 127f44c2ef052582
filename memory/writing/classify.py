"""What kind of memory a text is (#tags first, then keywords), which changing value it sets
(`detect_slot`: a later memory of the same slot replaces it) and its #tags; every writer reaches
it through `memory.writing.policy`."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, field_validator

from memory.data_files import DataModel, load_data_file
from memory.models import EventType

#: Event type for a plain fact about the user ("my dog is called Rex").
FACT_EVENT_TYPE = EventType.FACT

TAG_RE = re.compile(r"(?<![\w#])#([A-Za-z][\w-]{0,63})")


def _pattern(value: object) -> object:
    """A list of alternatives that each match as a whole word, as one regular expression."""
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return r"\b(" + "|".join(value) + r")\b"
    return value


#: A regular expression, or a list of alternatives that each match as a whole word.
Pattern = Annotated[re.Pattern[str], BeforeValidator(_pattern)]


class _EventKeywords(DataModel):
    event_type: EventType
    words: Pattern


class _Keywords(DataModel):
    """`memory/data/event_keywords.toml`: what sets an event type, and the slots."""

    tags: dict[str, EventType]
    keywords: tuple[_EventKeywords, ...]
    slots: dict[EventType, dict[str, Pattern]]

    @field_validator("tags")
    @classmethod
    def _lower_case(cls, tags: dict[str, EventType]) -> dict[str, EventType]:
        if any(tag != tag.lower() for tag in tags):
            raise ValueError("tags are written in lower case (#tags are matched so)")
        return tags


_KEYWORDS = load_data_file("event_keywords.toml", _Keywords)
#: #tags that name an event type set it.
TAG_EVENT_TYPES: dict[str, EventType] = _KEYWORDS.tags
#: The first event type whose keywords match a text is its type.
_EVENT_KEYWORDS: list[tuple[EventType, re.Pattern[str]]] = [
    (k.event_type, k.words) for k in _KEYWORDS.keywords
]
#: Slots for supersession, by event type and topic (assigned when exactly one topic matches).
_SLOT_TOPICS: dict[EventType, dict[str, re.Pattern[str]]] = _KEYWORDS.slots
SLOTS: list[str] = [
    f"{et.value}:{topic}" for et, topics in _SLOT_TOPICS.items() for topic in topics
]


def classify_event_type(text: str, tags: list[str] | None = None) -> EventType:
    for t in tags or []:
        if t.lower() in TAG_EVENT_TYPES:
            return TAG_EVENT_TYPES[t.lower()]
    low = text.lower()
    for et, pattern in _EVENT_KEYWORDS:
        if pattern.search(low):
            return et
    # "I use miles, not kilometers": a known preference topic even without "prefer".
    if detect_slot(text, EventType.PREFERENCE):
        return EventType.PREFERENCE
    return FACT_EVENT_TYPE


def detect_slot(text: str, event_type: EventType) -> str | None:
    topics = _SLOT_TOPICS.get(event_type)
    if not topics:
        return None
    low = text.lower()
    matched = [name for name, pattern in topics.items() if pattern.search(low)]
    # "weight" and "running" both match "run 5k to lose weight": ambiguous -> no slot.
    return f"{event_type.value}:{matched[0]}" if len(matched) == 1 else None


def extract_tags(message: str) -> list[str]:
    out: list[str] = []
    for t in TAG_RE.findall(message):
        if t.lower() not in out:
            out.append(t.lower())
    return out
