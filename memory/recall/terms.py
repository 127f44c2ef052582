"""Free text as a safe BM25 query: word tokens only (`memory.text.words`), stopwords dropped.
RedisVL's TextQuery lets some punctuation through (`|`), so no user text may shape the query."""

from __future__ import annotations

from memory.text import STOPWORDS, words


def query_terms(text: str, max_terms: int = 32) -> list[str]:
    """Distinct lower-case words of `text` (`memory.text.words`) without stopwords, in order."""
    seen: list[str] = []
    for tok in words(text):
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
