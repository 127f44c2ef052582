"""Explicit "keep this" in a message, no model needed (seed 002): trigger phrases
("remember:", "important:", "my preference is", "note this:", ...) and #tags become memory
candidates, typed by `memory.writing.classify`. Fast and pure: the chat stores them at once.
"""

from __future__ import annotations

import re

from pydantic import Field

from memory.data_files import DataModel, LowerCase, load_data_file
from memory.models import EventType
from memory.writing.classify import (
    TAG_RE,
    classify_event_type,
    extract_tags,
)
from memory.writing.policy import MemoryCandidate, candidate_for


class _Soft(DataModel):
    phrase: LowerCase = Field(min_length=1)
    keep: bool = False  # keep the phrase in the stored text


class _Strong(_Soft):
    event_type: EventType | None = None  # fixes the type whatever the keywords say


class _Triggers(DataModel):
    """`memory/data/trigger_phrases.toml`."""

    strong: tuple[_Strong, ...]
    soft: tuple[_Soft, ...]


_TRIGGERS = load_data_file("trigger_phrases.toml", _Triggers)
#: (phrase, keep the phrase in the stored text?)  Strong triggers work anywhere in a sentence.
STRONG_TRIGGERS: list[tuple[str, bool]] = [(t.phrase, t.keep) for t in _TRIGGERS.strong]
#: Triggers that fix the event type whatever the keywords say.
TRIGGER_EVENT_TYPES: dict[str, EventType] = {
    t.phrase: t.event_type for t in _TRIGGERS.strong if t.event_type
}
#: Soft triggers count only at the start of a sentence that is not a question.
SOFT_TRIGGERS: list[tuple[str, bool]] = [(t.phrase, t.keep) for t in _TRIGGERS.soft]
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def _strip_tags(text: str) -> str:
    return re.sub(r"\s{2,}", " ", TAG_RE.sub("", text)).strip(" \t,;")


def _is_question(sentence: str) -> bool:
    s = sentence.strip().lower()
    return s.endswith("?") or bool(
        re.match(
            r"^(what|how|why|when|where|who|which|do|does|did|is|are|can|could|should|will)\b", s
        )
    )


def _find_trigger(sentence: str) -> tuple[int, str, bool] | None:
    low = sentence.lower()
    for phrase, keep in STRONG_TRIGGERS:
        pos = low.find(phrase)
        if pos >= 0 and (pos == 0 or not low[pos - 1].isalnum()):
            return pos, phrase, keep
    stripped = low.lstrip()
    offset = len(low) - len(stripped)
    if not _is_question(sentence):
        for phrase, keep in SOFT_TRIGGERS:
            if stripped.startswith(phrase):
                return offset, phrase, keep
    return None


def _clean(text: str) -> str:
    text = text.strip().strip("\"'“”").strip()
    text = re.sub(r"^(that|to)\s+", "", text, flags=re.IGNORECASE) if len(text) > 8 else text
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1].rstrip()
    return text[:1].upper() + text[1:] if text else text


def extract_triggers(message: str) -> list[MemoryCandidate]:
    """Candidates from explicit trigger phrases and #tags. Pure, fast, no model."""
    tags = extract_tags(message)
    candidates: list[MemoryCandidate] = []
    sentences: list[str] = []
    for s in _SENTENCE_SPLIT.split(message):
        if not s.strip():
            continue
        if sentences and not _strip_tags(s).strip(" .!?"):
            sentences[-1] += " " + s.strip()  # "Ran 10k! #milestone": the tag belongs before
        else:
            sentences.append(s)
    i = 0
    while i < len(sentences):
        sentence = sentences[i]
        found = _find_trigger(sentence)
        if found is None:
            i += 1
            continue
        pos, phrase, keep = found
        body = sentence[pos:] if keep else sentence[pos + len(phrase) :]
        # "remember:" alone on a line: the memory is the next sentence.
        if not _strip_tags(body).strip(" :") and i + 1 < len(sentences):
            i += 1
            body = sentences[i]
        text = _clean(_strip_tags(body))
        if len(text) >= 3:
            sent_tags = [t for t in tags if f"#{t}" in sentence.lower()] or tags
            et = TRIGGER_EVENT_TYPES.get(phrase) or classify_event_type(text, sent_tags)
            if phrase in ("goal:", "new goal:") and "goal" not in text.lower():
                text = f"Goal: {text[:1].lower()}{text[1:]}"
            strong = phrase.startswith(("important", "never forget", "critical"))
            importance = 0.8 if strong else 0.7
            candidates.append(
                candidate_for(text, et, sent_tags, how="trigger", importance=importance)
            )
        i += 1
    if not candidates and tags:
        # A tagged statement is an explicit "keep this" too (not a tagged question).
        for sentence in sentences:
            sent_tags = [t for t in tags if f"#{t}" in sentence.lower()]
            text = _clean(_strip_tags(sentence))
            if sent_tags and len(text) >= 3 and not _is_question(sentence):
                candidates.append(
                    candidate_for(text, None, sent_tags, how="trigger", importance=0.6)
                )
    return candidates
