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
- a value changed: for each class of alternatives in `_VALUE_CLASSES` (times of day, days,
  months and seasons, before/after, more/less, left/right, places, activities, body parts,
  diets, drinks, colours, intensities, units) both must name the same members, so "morning" /
  "evening", "vegan" / "vegetarian", "home" / "gym", "5 km" / "5 miles" veto, and so does a
  member on one side only;
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

from memory.text import content_roots, numbers, root, words

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

# The guard's negations: today's, the contractions it lacks, and the disliking verbs (exact
# forms: the root of "quit" is that of "quite", the root of "not" that of "note").
_NEGATIVE = _NEGATION | frozenset(
    (
        "cant couldnt shouldnt wouldnt werent havent hasnt hadnt mustnt nor neither none nothing "
        "nobody hate hates hated hating dislike dislikes disliked detest detests detested avoid "
        "avoids avoided avoiding stop stops stopped stopping quit quits quitting skip skips "
        "skipped skipping"
    ).split()
)
# What is left of a contraction split at its apostrophe ("couldn't" -> "couldn", "t").
_NEGATION_STEMS = frozenset("couldn shouldn wouldn weren haven hasn hadn mustn".split())
# Words that add no fact when only one text has them ("I like to go running").
_LIGHT = frozenset(
    root(w)
    for w in (
        "go goes going went get gets got getting really actually generally typically normally "
        "mostly often tend try rather time thing things something bit lot also"
    ).split()
)
# Classes of alternatives: two texts must name the same members of each (a changed value).
# Roots, so plurals and -ing forms meet; ambiguous words (may, march, fall, am) are left out.
_VALUE_CLASSES: tuple[frozenset[str], ...] = tuple(
    frozenset(root(w) for w in line.split())
    for line in (
        "morning afternoon evening night tonight noon midday midnight dawn dusk sunrise sunset "
        "pm early late lunchtime",
        "monday tuesday wednesday thursday friday saturday sunday weekday weekend daily weekly "
        "monthly yearly today tomorrow yesterday",
        "january february april june july august september october november december spring "
        "summer autumn winter",
        "before after during",
        "above below over under",
        "more less fewer most least",
        "left right",
        "upper lower",
        "indoor indoors outdoor outdoors inside outside gym home treadmill trail road track pool",
        "run jog walk hike swim cycle bike ride row yoga pilates climb ski skate dance lift",
        "knee ankle hip foot feet shoulder neck wrist elbow hamstring calf shin achilles heel toe "
        "arm leg hand",
        "vegan vegetarian pescatarian omnivore keto paleo carnivore",
        "coffee tea water juice milk beer wine alcohol",
        "red orange yellow green blue purple pink black white grey gray brown",
        "easy hard light heavy slow fast short long low high hot cold warm cool small big large",
        "km kilometre kilometer mile mi metre meter k kg kilo kilogram lb lbs pound stone "
        "minute min hour hr sec day week month year",
    )
)
_UNIT_SUFFIX = re.compile(r"^\d+(?:[.,]\d+)*([a-z]+)$")
_NAME = re.compile(r"\b[A-Z]\w*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"\u201c(\n]\s*)([A-Z])")


FactKey = tuple[frozenset[str], frozenset[str], frozenset[str]]


#: Stop words that still tell two facts apart ("I run before work" / "after work"): recall may
#: ignore them, "the same fact?" may not.
_VALUE_STOPWORDS = frozenset(
    "before after above below over under up down off more most few only against".split()
)


def fact_signature(text: str) -> FactKey:
    """(content word roots, numbers, negations) of a memory text (memory.text's words)."""
    plain = text.replace("\u2019", "'").replace("'", "")
    tokens = words(plain)
    negations = frozenset(t for t in tokens if t in _NEGATION)
    roots = content_roots(plain, ignore=_FRAMING | _NEGATION)
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
        ignore = _FRAMING | _NEGATIVE | _NEGATION_STEMS
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
