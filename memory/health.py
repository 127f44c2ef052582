"""Whether a memory is about the person's health or safety (an allergy, an intolerance, a
condition, a medicine), decided by its words, not by its kind: "I am lactose intolerant" and
"I take metformin every morning" are stored as plain facts. The words are data
(memory/data/health_words.txt)."""

from __future__ import annotations

from functools import cache

from memory.config import PROJECT_ROOT
from memory.text import fold, words

WORDS_FILE = PROJECT_ROOT / "memory" / "data" / "health_words.txt"


@cache
def _health_words() -> tuple[frozenset[str], tuple[str, ...]]:
    """(whole words, word beginnings) of the list; `#` starts a comment."""
    entries = [
        line.split("#", 1)[0].strip().casefold()
        for line in WORDS_FILE.read_text(encoding="utf-8").splitlines()
    ]
    whole = frozenset(e for e in entries if e and not e.endswith("*"))
    starts = tuple(e[:-1] for e in entries if e.endswith("*") and len(e) > 1)
    return whole, starts


def about_health(text: str) -> bool:
    """The text names an allergy, intolerance, condition or medicine."""
    whole, starts = _health_words()
    return any(w in whole or w.startswith(starts) for w in words(fold(text)))


def health_query() -> str:
    """The words as a RediSearch text query (`allerg*|insulin|…`), to preselect the memories
    `about_health` may accept."""
    whole, starts = _health_words()
    return "|".join([*(f"{s}*" for s in starts), *sorted(whole)])
