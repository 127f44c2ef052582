"""Turning free text into a safe BM25 query: word tokens only, stopwords dropped.

RedisVL's TextQuery escapes some punctuation but not all (`|` passes through), so the query
is reduced to plain word tokens first: no user text can change the query's structure.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don ll re ve d m o y ain""".split()
)


def query_terms(text: str, max_terms: int = 32) -> list[str]:
    """Distinct lower-case word tokens of `text` without stopwords, in order."""
    seen: list[str] = []
    for tok in _WORD.findall(text.lower()):
        tok = tok.strip("_")
        if len(tok) < 2 or tok in STOPWORDS or tok in seen:
            continue
        seen.append(tok)
        if len(seen) >= max_terms:
            break
    return seen


def bm25_text(text: str) -> str | None:
    """Space-joined safe terms for RedisVL's TextQuery, or None when nothing is left."""
    terms = query_terms(text)
    return " ".join(terms) if terms else None
