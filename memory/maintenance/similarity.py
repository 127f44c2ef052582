"""When are two memories the same fact? A high cosine AND the same content words.

The cosine alone cannot tell a paraphrase from a changed value: with all-MiniLM-L6-v2,
"I prefer morning workouts" / "I prefer evening workouts" score 0.856, higher than the true
paraphrase "I like to work out in the morning" (0.812). So a pair merges only when

1. cosine >= `min_similarity` (Settings.consolidation_min_similarity, 0.85), and
2. after dropping stop words and *framing* words (prefer, like, love, goal, want ...), both
   texts have exactly the same content words, the same numbers and the same negations.

Conservative by design: a missed merge leaves a near-duplicate, a wrong merge hides a fact.
The examples the threshold was chosen on are in tests/unit/test_maintenance_similarity.py.
"""

from __future__ import annotations

from memory.text import content_roots, numbers, words

# Words that frame a fact without being it: "I like X" and "I prefer X" state the same X.
_FRAMING = frozenset(
    (
        "prefer prefers preferred like likes liked love loves enjoy enjoys favourite favorite "
        "want wants goal aim plan plans usually always name named call called what currently "
        "now user"
    ).split()
)
# A negation flips the fact: "I like running" vs "I don't like running" never merge.
_NEGATION = frozenset(
    "not no never don dont didn didnt doesn doesnt isn isnt aren arent wasn wasnt cannot won "
    "wont without".split()
)


FactKey = tuple[frozenset[str], frozenset[str], frozenset[str]]


def fact_signature(text: str) -> FactKey:
    """(content word roots, numbers, negations) of a memory text (memory.text's words)."""
    tokens = words(text.replace("\u2019", "'").replace("'", ""))
    negations = frozenset(t for t in tokens if t in _NEGATION)
    roots = content_roots(text.replace("\u2019", "'").replace("'", ""), ignore=_FRAMING | _NEGATION)
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
    return cosine >= min_similarity and same_fact(a, b)
