"""The one way text is cut into words, stop words dropped and words stemmed: used by recall
(BM25 terms, word coverage), writing (duplicates, grounding) and maintenance (same fact?), so
"the same fact" means one thing everywhere.

    STOPWORDS          function words that carry no fact (also dropped from BM25 queries)
    words(text)        lower-case word tokens (letters, digits, underscores), in order
    stem(word)         recall's light suffix strip: "workouts" -> "workout" (never "es")
    root(word)         the form two words of one stem share, for judging "the same word":
                       run/runs/running, morning/mornings, hike/hiking, study/studies
    content_roots(t)   the roots of a text's content words (no stop words, no numbers)
    numbers(t)         the numbers a text states, as written ("7.5", "10,000" -> "10000")

How people write a word differs from how they meant it: pasted text carries soft hyphens and
zero-width spaces inside words, phones type fullwidth letters, "Gómez" arrives composed (NFC)
or decomposed (NFD), a name sits inside `okafor_law@example.com`. Two forms, used wherever a
text is matched against what someone named (a forget's topic, a secret's key words):

    plain(text)        NFKC (one spelling per character: composed accents, ASCII digits for
                       fullwidth ones, a space for a no-break space), soft hyphens and
                       zero-width characters removed; case and punctuation kept
    fold(text)         `plain`, case-folded, with words split at `_`, `@`, `.` and `-`:
                       what "mentions the same word" compares
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SUFFIXES = ("ing", "ed", "s")

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


#: Characters that are invisible inside a word: soft hyphen, zero-width space/non-joiner/joiner,
#: word joiner, byte order mark (a zero-width no-break space), Mongolian vowel separator.
INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e"
_DROP_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))
#: Characters that join the words of one name: `okafor_law@example.com`, `okafor-case`.
_JOINERS = re.compile(r"[_@.\-]+")


def plain(text: str) -> str:
    """`text` in one spelling: NFKC, without soft hyphens and zero-width characters."""
    return unicodedata.normalize("NFKC", text.translate(_DROP_INVISIBLE))


def fold(text: str) -> str:
    """`plain`, case-folded, words split at `_`, `@`, `.` and `-`: both sides of a match."""
    return _JOINERS.sub(" ", plain(text).casefold())


def words(text: str) -> list[str]:
    """Lower-case word tokens of `text`, in order (underscores trimmed)."""
    return [t.strip("_") for t in _WORD.findall(text.lower()) if t.strip("_")]


def stem(word: str) -> str:
    """A light suffix strip so "workouts"/"workout" and "traveling"/"travel" meet (never
    "es": "coffees" must stay "coffee")."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def root(word: str) -> str:
    """The form two words of the same stem share: `stem` (twice: "mornings" -> "morning" ->
    "morn"), short plurals and "-ing"/"-ed" forms `stem` leaves ("runs", "hiking", "liked"),
    then a final "e" ("hike"), a doubled consonant ("runn") and a final "y" ("study" ->
    "studi", as "studies" gives)."""
    r = stem(stem(word))
    if r == word and not word.endswith(("ss", "us", "is")):
        for suffix, min_len in (("ing", 6), ("ed", 5), ("s", 4)):
            if word.endswith(suffix) and len(word) >= min_len:
                r = word[: -len(suffix)]
                break
    if len(r) > 3 and r.endswith("e"):
        r = r[:-1]
    if len(r) > 3 and r[-1] == r[-2] and r[-1] not in "aeiou":
        r = r[:-1]
    if len(r) > 3 and r.endswith("y"):
        r = r[:-1] + "i"
    return r


def content_roots(text: str, *, ignore: frozenset[str] = frozenset()) -> frozenset[str]:
    """Roots of the content words of `text`: no stop words, no numbers, none of `ignore`
    (e.g. the words that frame a fact: "prefer", "like")."""
    return frozenset(
        root(w)
        for w in words(text.replace("\u2019", "'"))
        if len(w) > 1 and not w[0].isdigit() and w not in STOPWORDS and w not in ignore
    )


def numbers(text: str) -> frozenset[str]:
    """The numbers of `text` as written, thousands separators dropped ("10,000" -> "10000";
    "7,5" stays a decimal comma only when not followed by three digits)."""
    out = set()
    for n in _NUMBER.findall(text):
        out.add(re.sub(r",(?=\d{3}(\D|$))", "", n).replace(",", "."))
    return frozenset(out)
