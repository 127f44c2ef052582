"""When are two memories the same fact? Two rules: one without a model, one with it.

**Without a model** (`mergeable`): a high cosine AND the same content words. The cosine alone
cannot tell a paraphrase from a changed value: with all-MiniLM-L6-v2, "I prefer morning
workouts" / "I prefer evening workouts" score 0.857, higher than the true paraphrase "I like
to work out in the morning" (0.812). So a pair merges only when

1. cosine >= `min_similarity` (Settings.consolidation_min_similarity, 0.85), and
2. after dropping stop words and *framing* words (prefer, like, love, goal, want ...), both
   texts have exactly the same content words, the same numbers and the same negations.

**With a model** (a `SameFactJudge`): a pair is a *candidate* (`linked`) when

1. cosine >= `proposal_similarity` (Settings.consolidation_proposal_similarity, 0.70), and
2. the lexical guard (`veto`) finds nothing that makes them two facts;

then the model judges each cluster of candidates ("same fact?", a JSON schema). Its "yes"
never overrides the guard, which vetoes a pair when

- their numbers differ ("5k" / "10k"; a number on one side only);
- one says no and the other does not: a negation or a disliking verb (hate, avoid, stop ...)
  on one side only ("I love swimming" / "I hate swimming"), or an odd number of them on one
  side and an even one on the other ("I never skip breakfast" / "I skip breakfast");
- a value changed: for each class of alternatives (`value_classes` in
  `memory/data/fact_words.toml`: times of day, days, months and seasons, before/after,
  more/less, left/right, places, activities, body parts, diets, drinks, colours, intensities,
  units) both must name the same members, so "morning" / "evening", "vegan" / "vegetarian",
  "home" / "gym", "5 km" / "5 miles" veto, and so does a member on one side only;
- a name (a capitalised word in mid-sentence) that the other text never mentions ("I live in
  Lisbon" / "I live in Porto");
- one says more: it has content words the other lacks while the other has none of its own
  (an added detail: "half marathon" / "marathon", "running with my dog" / "running"), except
  light words that add no fact (go, get, really, rather ...). When both have words of their
  own (synonyms, or a changed value the lists do not know), only the model can tell.

The proposal threshold, 0.70, was chosen on these examples (cosines measured with the
project's ONNX all-MiniLM-L6-v2, re-measured when it began to multiply in int8 and when it
stopped one fusion of ONNX Runtime: no pair changed side of a threshold; the full tables are in
tests/unit/test_maintenance_similarity.py):

- paraphrases that share words score 0.727-0.99: "I like to go running in the mornings
  before work" / "morning runs before work are what I prefer" 0.759 (the lowest pair of
  three wordings of one habit; the others are 0.863 and 0.888), "I want to run a sub-4
  marathon" / "My goal is to finish a marathon in under 4 hours" 0.727 (which the guard then
  vetoes: "under" on one side);
- different facts on one topic in other words score at most 0.546 ("I have asthma" / "I
  have a peanut allergy"), so 0.70 leaves them unasked with a margin of 0.15; different facts
  that differ in one value score high ("morning" / "evening" 0.911, "5k" / "10k" 0.889):
  those are the guard's;
- below it: "I am lactose intolerant" / "Dairy upsets my stomach" 0.664, a paraphrase with no
  shared word, which stays a near-duplicate (a missed merge is cheap).

Conservative by design: a missed merge leaves a near-duplicate, a wrong merge hides a fact.
The guard only ever vetoes, so it misses merges of synonyms it takes for alternatives ("run"
/ "jog") and cannot see a detail added in other words ("training for a marathon" /
"preparing for a half marathon" have words of their own on both sides): that one is the
model's call.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from memory.data_files import Words, load_data_file
from memory.text import FRAMING, content_roots, numbers, root, words


class _FactWords(BaseModel):
    """`memory/data/fact_words.toml` (what each list is for: its comments)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    negation: Words
    negative: Words
    negation_stems: Words
    light: Words
    value_classes: tuple[Words, ...]
    value_stopwords: Words


_WORDS = load_data_file("fact_words.toml", _FactWords)
_NEGATION = _WORDS.negation
_NEGATIVE = _NEGATION | _WORDS.negative
_NEGATION_STEMS = _WORDS.negation_stems
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
    negations = frozenset(t for t in tokens if t in _NEGATION)
    roots = content_roots(plain, ignore=FRAMING | _NEGATION)
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
        self.negations = sum(t in _NEGATIVE for t in bare)
        ignore = FRAMING | _NEGATIVE | _NEGATION_STEMS
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
