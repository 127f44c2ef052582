"""Token counting for context budgets: an estimate (the chat models' tokenizers live in Ollama)
built to err high on English, JSON, numbers, ids, emoji and CJK, since a budget that
undercounts makes Ollama cut the prompt silently (docs/agent.md, "Small, thinking and
tool-less models"). `tests/unit/test_memory_text.py` checks it against a real tokenizer."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

#: Multiplier over the per-piece count: headroom for words a tokenizer splits more finely.
SAFETY = 1.1
MESSAGE_OVERHEAD = 6

_WORDS = re.compile(r"[A-Za-z0-9]+")
_CASE_CHANGE = re.compile(r"[a-z][A-Z]")


# An English word costs 1 per 6 letters begun (~1 token in 100k-150k vocabularies), a very long
# one 1 per 3; every digit 1 (Qwen splits numbers into digits); letters mixed with digits or
# changing case (ids, hashes, base64) 1 per character. Other ASCII costs 1, a non-ASCII
# character its UTF-8 bytes (byte-level BPE never spends more), spaces nothing.
def _word_tokens(word: str) -> int:
    if word.isalpha():
        plain = word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower())
        if not plain and _CASE_CHANGE.search(word):  # camelCase, base64
            return len(word)
        letters = len(word)
        return (letters + 2) // 3 if letters > 12 else 1 + (letters - 1) // 6
    digits = sum(c.isdigit() for c in word)
    return digits if digits == len(word) else len(word)  # a number; an id, a hash, a URL path


def raw_tokens(text: str) -> int:
    """The per-piece count, before `SAFETY`: the words' tokens, plus every other character's
    UTF-8 bytes (a word's letters and the spaces are taken out of the byte count again)."""
    words = _WORDS.findall(text)
    utf8 = len(text.encode("utf-8", "surrogatepass"))
    spaces = text.count(" ") + text.count("\t")
    return sum(map(_word_tokens, words)) - sum(map(len, words)) - spaces + utf8


def estimate_tokens(text: str) -> int:
    return math.ceil(raw_tokens(text) * SAFETY) if text else 0


#: texts longer than this are counted each time rather than cached (a system prompt, a message
#: before its length is checked): the cache holds at most 512 x 16 KB
CACHED_CHARS = 16_000


def message_tokens(content: str) -> int:
    """Estimated tokens of one chat message, its template's role markers included."""
    if len(content) > CACHED_CHARS:
        return estimate_tokens(content) + MESSAGE_OVERHEAD
    return _short_message_tokens(content)


# Every recall counts the same recent messages again (the window slides by one per turn):
# ~0.2 ms for ten messages, a pure function of the text.
@functools.lru_cache(maxsize=512)
def _short_message_tokens(content: str) -> int:
    return estimate_tokens(content) + MESSAGE_OVERHEAD


class _HasContent(Protocol):
    @property
    def content(self) -> str: ...


M = TypeVar("M", bound=_HasContent)


def newest_within_budget(messages: Sequence[M], budget_tokens: int) -> list[M]:
    """The newest messages (in order) whose estimated tokens fit the budget: the oldest are
    trimmed first, and none is skipped (no gaps in a conversation)."""
    kept: list[M] = []
    used = 0
    for m in reversed(messages):
        cost = message_tokens(m.content)
        if used + cost > budget_tokens:
            break
        kept.append(m)
        used += cost
    kept.reverse()
    return kept


def truncate_to_tokens(text: str, budget: int) -> str:
    """Cut `text` to at most `budget` estimated tokens, at a word boundary, marking the cut."""
    if estimate_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix (plus the mark) within the budget
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid] + " …") <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut + " …" if cut else ""
