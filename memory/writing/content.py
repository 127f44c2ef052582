"""Does a memory still say anything once its secrets are masked (docs/privacy.md)? On the words:
contentless when it names a secret and every content word belongs to that name or a qualifier
("for the bike shop"). Known limit: "My card for the bike shop expired" is dropped."""

from __future__ import annotations

import re

from memory.text import FRAMING, STOPWORDS, words
from memory.writing.secrets import SECRET_WORDS as _LISTS

_LABEL = re.compile(r"\[[a-z ]+\]")


#: Words that name a secret; a copula; words that start a qualifier of the secret's name.
SECRET_WORDS = _LISTS.secret_words
_COPULA, _QUALIFIERS = _LISTS.copula, _LISTS.qualifiers


def says_nothing_after_masking(text: str) -> bool:
    """True when `text` names a secret and states nothing else (see the module doc)."""
    had_label = bool(_LABEL.search(text))
    tokens = words(_LABEL.sub(" ", text))
    i = 0
    while i < len(tokens) and tokens[i] in FRAMING:
        i += 1
    named = 0
    while i < len(tokens) and tokens[i] in SECRET_WORDS:
        i, named = i + 1, named + 1
    if not named and not had_label:
        return False
    rest = tokens[i:]
    while rest and rest[-1] in _COPULA:  # "… is [card number]"
        rest = rest[:-1]
    if not rest:
        return True
    if rest[0] in _QUALIFIERS and named:
        # only a qualifier of the name ("for the bike shop"): a copula inside it would start
        # a claim ("… for work is expired")
        return not any(w in _COPULA for w in rest)
    return had_label and all(w in STOPWORDS for w in rest)
