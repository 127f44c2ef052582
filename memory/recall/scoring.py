"""How sure recall is that a candidate is relevant: parts on scales that mean the same for
every query, summed as log-odds into `z` (orders the candidates) and calibrated against the
query's best `z` into a probability (the bands). The parts, the formula and where each weight
comes from: docs/recall.md."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence

from memory import defaults
from memory.recall.terms import query_terms
from memory.text import SUFFIXES, fold, names_word, stem, words

# --- fitted by `python -m lab.fit_recall` (tune split) ----------------------------------------
BIAS = -8.11
W_VECTOR = 7.16
W_COVERAGE = 3.94
W_TIME = 0.53
W_STATED = 5.64
CAL_SCALE = 0.56
CAL_LEAD = 0.96
CAL_BIAS = 0.12
#: log-odds a session neighbour of the best candidates gains per unit of the best such seed's
#: probability (`neighbour`, below). Never for a request for advice or about the user's tastes
#: (`request_kind`): what answers it is what the user stated, not the turn after it
#: (hybrid.py).
W_NEIGHBOUR = 1.28
#: ... and a neighbour's probability is at least NEIGHBOUR_FLOOR ** hops times its seed's: turns
#: stored without the one before as their context (a chat's messages; LoCoMo's turns carry it)
#: get no own evidence from the question they answer. Not fitted: the benchmark turns carry
#: their previous turn, so it can hardly be measured there (no floor and 0.3 differ by 0.002
#: in the tune split's R@5 + R@10: `python -m lab.fit_recall --variants`); the
#: value is the decay the rule had when it was the whole neighbour part.
NEIGHBOUR_FLOOR = 0.3
# --- not fitted: priors the benchmark cannot measure --------------------------------------------
#: log-odds for one of the user's own facts when the message asks for advice or a plan
W_OWN = 2.5
W_RECENCY = defaults.W_RECENCY
W_IMPORTANCE = defaults.W_IMPORTANCE

#: The band thresholds on p, from the same reliability table, are memory.models.BAND_HIGH and
#: BAND_MODERATE (every layer bands scores).
#: default RECALL_MIN_SCORE: hits below it are dropped
MIN_SCORE = defaults.MIN_SCORE


def word_key(word: str) -> str:
    """The form recall matches a word by: `stem`, without the consonant doubled before an
    ending ("swimming" -> swimm -> swim, as "swim"; "called" and "call" both give "cal").
    Lighter than `memory.text.root`, which also merges short plurals ("eats" with "eat"):
    tried for recall, that lowered R@5 on the personal development file."""
    s = stem(word)
    if len(s) > 3 and s[-1] == s[-2] and s[-1].isalpha() and s[-1] not in "aeiou":
        return s[:-1]
    return s


def terms_of_query(text: str) -> list[str]:
    """The query's content words (stopwords removed) by their `word_key`, distinct, in order."""
    return list(dict.fromkeys(word_key(t) for t in query_terms(text)))


def forms_of(terms: Sequence[str]) -> list[frozenset[str]]:
    """Per term, the word forms whose `word_key` it is ("swim": swim, swims, swimming...).
    Matching these against a memory's plain words avoids stemming every word of every
    candidate (that cost ~5 ms per query on LoCoMo turns)."""
    return [_forms_of_key(t) for t in terms]


@functools.lru_cache(maxsize=8192)
def _forms_of_key(key: str) -> frozenset[str]:
    """The key, or its last letter doubled, with each of `stem`'s endings, kept when their
    `word_key` is `key`."""
    spellings = (key, key + key[-1]) if key else (key,)
    return frozenset(
        f for f in (s + e for s in spellings for e in ("", *SUFFIXES)) if word_key(f) == key
    )


def word_set(text: str) -> frozenset[str]:
    """The lower-case words of a text with the parts of words written as several
    (`memory.text.words`; not stemmed: see `forms_of`)."""
    return frozenset(words(text, parts=True))


class TermForms:
    """The query's terms (`forms_of`) indexed for matching many candidates: `matches` gives
    what `term_matches` gives on the texts' `word_set`s, but intersects each text's words with
    all forms at once instead of building a set of its words and testing every term's forms
    against it (recall matches ~90 candidates of two fields per query)."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.forms = tuple(forms_of(terms))
        #: form -> the terms it is a form of (one unless `terms` repeats a term)
        terms_of: dict[str, list[int]] = {}
        for i, forms in enumerate(self.forms):
            for form in forms:
                terms_of.setdefault(form, []).append(i)
        self.terms_of = {form: tuple(ids) for form, ids in terms_of.items()}
        self.all_forms = frozenset(terms_of)
        #: forms of other scripts also name a word they start or sit inside (`names_word`:
        #: 서울 in 서울에서, a Thai word inside a run written without spaces)
        self._glued = tuple(f for f in self.all_forms if not f.isascii())
        # A form is its term plus an ending (`_forms_of_key`): one search for the terms (`re`
        # tries ~10x as many forms at every position) skips the texts holding none, unsplit.
        alternatives = "|".join(re.escape(t) for t in sorted(set(terms)))
        self._any_form = re.compile(alternatives or "(?!)")  # no terms: matches nothing

    def matches(self, texts: Sequence[str], field_weights: Sequence[float]) -> list[float | None]:
        """`term_matches(forms, [word_set(t) for t in texts], field_weights)`."""
        out: list[float | None] = [None] * len(self.forms)
        for text, fw in zip(texts, field_weights, strict=True):
            if not text or self._any_form.search(fold(text)) is None:
                continue
            held = words(text, parts=True)
            found = set(self.all_forms.intersection(held))
            found.update(f for f in self._glued if any(names_word(w, f) for w in held))
            for form in found:
                for i in self.terms_of[form]:
                    best = out[i]
                    if best is None or fw > best:
                        out[i] = fw
        return out


@functools.lru_cache(maxsize=256)
def term_forms(terms: tuple[str, ...]) -> TermForms:
    """`TermForms(terms)`, built once per query: recall matches each store's candidates (and
    its neighbours) against the same terms, and a chat repeats its questions."""
    return TermForms(terms)


def term_matches(
    forms: Sequence[frozenset[str]],
    fields: Sequence[frozenset[str]],
    field_weights: Sequence[float] | None = None,
) -> list[float | None]:
    """Per term, the weight of the best field that holds one of its forms (None: no field);
    a candidate's matches serve both `idf_of_matches` and `coverage_of_matches`."""
    pairs = list(zip(fields, field_weights or [1.0] * len(fields), strict=True))
    out: list[float | None] = []
    for f in forms:
        best = None
        for held, fw in pairs:
            if not f.isdisjoint(held) and (best is None or fw > best):
                best = fw
        out.append(best)
    return out


def idf_of_matches(n_terms: int, matches: Sequence[Sequence[float | None]]) -> list[float]:
    """BM25's IDF of each term over the candidates, from their `term_matches`."""
    n = len(matches)
    df = [sum(1 for m in matches if m[i] is not None) for i in range(n_terms)]
    return [math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for d in df]


def coverage_of_matches(
    idf: Sequence[float], matches: Sequence[float | None], total: float | None = None
) -> float:
    """Share of the query's IDF mass found in the memory, each word at the weight of the best
    field that holds it (its `term_matches`: description 1.0, context 0.5); `total`:
    `sum(idf)`, when the caller scores many candidates against one IDF."""
    if total is None:
        total = sum(idf)
    if total <= 0:
        return 0.0
    got = 0.0
    for w, m in zip(idf, matches, strict=True):
        got += w * (m if m is not None else 0.0)
    return got / total


def logit(
    vector: float,
    cover: float,
    time: float,
    stated: float = 0.0,
    recency: float = 0.0,
    importance: float = 0.5,
    w_recency: float = W_RECENCY,
    w_importance: float = W_IMPORTANCE,
    own: float = 0.0,
) -> float:
    """The ranking score z of a candidate (see the module docstring)."""
    return (
        BIAS
        + W_VECTOR * vector
        + W_COVERAGE * cover
        + W_TIME * time
        + W_STATED * stated
        + W_OWN * own
        + w_recency * recency
        + w_importance * (importance - 0.5)
    )


def calibrated(z: float, best_z: float) -> float:
    """Probability of relevance of a candidate with score `z` when the query's best has
    `best_z`."""
    x = CAL_SCALE * z + CAL_LEAD * (z - best_z) + CAL_BIAS
    return 1.0 / (1.0 + math.exp(-x))


def probability(vector: float, cover: float, time: float, best_z: float | None = None) -> float:
    """`calibrated` for a candidate with these parts (the best one unless `best_z` is given;
    no recency or importance nudges)."""
    z = logit(vector, cover, time, w_recency=0.0, w_importance=0.0)
    return calibrated(z, z if best_z is None else best_z)
