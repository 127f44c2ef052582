"""When are two memories the same fact (docs/maintenance.md)? Without a model (`mergeable`): close
vectors and the same content words, numbers and negations; with a model (`SameFactJudge`), a
candidate pair (`linked`) the lexical guard (`veto`) allows; the model never overrides it."""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from memory.data_files import Words, load_data_file
from memory.text import (
    FRAMING,
    NEGATION,
    NEGATION_STEMS,
    NEGATORS,
    content_roots,
    numbers,
    root,
    words,
)


class _FactWords(BaseModel):
    """`memory/data/fact_words.toml` (what each list is for: its comments)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    light: Words
    value_classes: tuple[Words, ...]
    value_stopwords: Words


_WORDS = load_data_file("fact_words.toml", _FactWords)
_LIGHT = frozenset(root(w) for w in _WORDS.light)
#: Classes of alternatives, as roots: two texts must name the same members of each.
_VALUE_CLASSES = tuple(frozenset(root(w) for w in cls) for cls in _WORDS.value_classes)
_VALUE_STOPWORDS = _WORDS.value_stopwords
_UNIT_SUFFIX = re.compile(r"^\d+(?:[.,]\d+)*([a-z]+)$")
_NAME = re.compile(r"\b[A-Z]\w*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"\u201c(\n]\s*)([A-Z])")


FactKey = tuple[frozenset[str], frozenset[str], frozenset[str]]


def fact_signature(text: str) -> FactKey:
    """(content word roots, numbers, negations) of a memory text (memory.text's words)."""
    plain = text.replace("\u2019", "'").replace("'", "")
    tokens = words(plain)
    negations = frozenset(t for t in tokens if t in NEGATION)
    roots = content_roots(plain, ignore=FRAMING | NEGATION)
    roots |= frozenset(t for t in tokens if t in _VALUE_STOPWORDS)
    return roots, numbers(text), negations


def fact_key(text: str) -> FactKey | None:
    """The signature two texts must share to be the same fact; None (never merges) for a text
    without content words. Equal keys are exactly `same_fact`, so callers can group by it."""
    key = fact_signature(text)
    return key if key[0] else None


def same_fact(a: str, b: str) -> bool:
    """The lexical half of the test: same content words, numbers and negations."""
    ka = fact_key(a)
    return ka is not None and ka == fact_key(b)


def mergeable(a: str, b: str, cosine: float, min_similarity: float) -> bool:
    """Without a model: may these two merge? (the module docstring's first rule)"""
    return cosine >= min_similarity and same_fact(a, b)


class _Guarded:
    """What the guard compares of one text."""

    def __init__(self, text: str) -> None:
        text = text.replace("\u2019", "'")
        tokens = words(text)
        bare = words(text.replace("'", ""))  # "don't" -> "dont", a negation
        self.numbers = numbers(text)
        self.negations = sum(t in NEGATORS for t in bare)
        ignore = FRAMING | NEGATORS | NEGATION_STEMS
        self.content = content_roots(text, ignore=ignore)
        # Every word's root (stop words too: before/after), plus units stuck to numbers.
        units = {root(m.group(1)) for t in tokens if (m := _UNIT_SUFFIX.match(t))}
        self.all_roots = frozenset({root(t) for t in tokens} | units)
        starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
        self.names = frozenset(
            {
                root(m.group().lower())
                for m in _NAME.finditer(text)
                if m.start() not in starts and m.group() != "I"
            }
        )


@lru_cache(maxsize=4096)
def _guarded(text: str) -> _Guarded:
    return _Guarded(text)  # a run compares each text with many others


def veto(a: str, b: str) -> str | None:
    """Why the guard says `a` and `b` are two facts, whatever a model says; None if it sees
    nothing (they may still differ: then the model decides). Symmetric."""
    ga, gb = _guarded(a), _guarded(b)
    if ga.numbers != gb.numbers:
        return f"numbers differ ({_listed(ga.numbers)} / {_listed(gb.numbers)})"
    # Two negations cancel ("never skip"), but none and two are still different sentences.
    if ga.negations % 2 != gb.negations % 2 or (ga.negations == 0) != (gb.negations == 0):
        return "a negation on one side only"
    for cls in _VALUE_CLASSES:
        va, vb = ga.all_roots & cls, gb.all_roots & cls
        if va != vb:
            return f"a changed value ({_listed(va)} / {_listed(vb)})"
    for names, other in ((ga.names, gb.all_roots), (gb.names, ga.all_roots)):
        if names - other:
            return f"a name on one side only ({_listed(names - other)})"
    only_a, only_b = ga.content - gb.content - _LIGHT, gb.content - ga.content - _LIGHT
    if bool(only_a) != bool(only_b):
        return f"one says more ({_listed(only_a or only_b)})"
    return None


def linked(a: str, b: str, cosine: float, proposal_similarity: float) -> bool:
    """With a model: may the model be asked whether these two are one fact?"""
    return cosine >= proposal_similarity and veto(a, b) is None


def _listed(items: set[str] | frozenset[str]) -> str:
    return ", ".join(sorted(items)) or "none"
