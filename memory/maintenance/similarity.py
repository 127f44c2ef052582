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

import re

_WORD_RE = re.compile(r"[a-z]+|\d+(?:[.,]\d+)?")
_STOP = frozenset(
    "a an the i i'm im me my mine we our you your user is am are was were be been to of in on "
    "at for and or but with that this it its as by from out up do does did have has had also "
    "really very just so s".split()
)
# Words that frame a fact without being it: "I like X" and "I prefer X" state the same X.
_FRAMING = frozenset(
    "prefer like love enjoy favourite favorite want goal aim plan usually always name call "
    "what is are which currently now".split()
)
# A negation flips the fact: "I like running" vs "I don't like running" never merge.
_NEGATION = frozenset("not no never don didn doesn isn aren wasn can't cannot won without".split())


FactKey = tuple[frozenset[str], frozenset[str], frozenset[str]]


def _stem(word: str) -> str:
    # Twice, so "mornings" and "morning" meet at "morn" (plural, then -ing).
    for _ in range(2):
        for suffix in ("ing", "ed", "es", "s"):
            if len(word) > len(suffix) + 2 and word.endswith(suffix):
                word = word[: -len(suffix)]
                break
    return word


def fact_signature(text: str) -> FactKey:
    """(content word stems, numbers, negations) of a memory text."""
    tokens = _WORD_RE.findall(text.lower().replace("\u2019", "'"))
    numbers = frozenset(t.replace(",", ".") for t in tokens if t[0].isdigit())
    negations = frozenset(t for t in tokens if t in _NEGATION)
    words = frozenset(
        _stem(t)
        for t in tokens
        if not t[0].isdigit() and t not in _STOP and t not in _NEGATION and len(t) > 1
    )
    return words - {_stem(w) for w in _FRAMING}, numbers, negations


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
