"""The one way text is cut into words, stop words dropped and words stemmed, for recall,
forget, writing and maintenance alike, so "the same word" means one thing everywhere. A word
is letters and digits of any script with their combining marks, case-folded, read in one
spelling first (`plain`; docs/privacy.md, "What matches"). The word lists: data/words.toml."""

from __future__ import annotations

import functools
import re
import unicodedata

from memory.data_files import DataModel, Words, load_data_file

_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")
_UNICODE_WORD = re.compile(r"\w+")
_NOT_WORD = re.compile(r"[^\w\s]")
#: where an ASCII text has a word with parts: an underscore, a lower-case letter before a
#: capital, a run of capitals before a lower-case letter, letters and digits side by side
_ASCII_COMPOUND = re.compile(r"_|[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z]\d|\d[A-Za-z]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class _TextWords(DataModel):
    """`memory/data/words.toml` (what each list is for: its comments)."""

    stopwords: Words
    suffixes: tuple[str, ...]
    framing: Words
    negation: Words
    disliking: Words
    negation_stems: Words


_WORDS = load_data_file("words.toml", _TextWords)
STOPWORDS = _WORDS.stopwords
#: `stem`'s suffixes; recall's `forms_of` builds a term's forms from them.
SUFFIXES = _WORDS.suffixes
FRAMING = _WORDS.framing
NEGATION = _WORDS.negation
#: a negation or a disliking verb: either flips what follows
NEGATORS = NEGATION | _WORDS.disliking
NEGATION_STEMS = _WORDS.negation_stems

#: Invisible characters: every format character (Unicode Cf: soft hyphen, zero-width space and
#: joiners, direction marks, BOM...; tests/unit/test_words.py checks the list against
#: `unicodedata`), the combining grapheme joiner and the variation selectors.
_IGNORABLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
    "\u034f\ufe00-\ufe0f\U000e0100-\U000e01ef]"
)


def plain(text: str) -> str:
    """`text` in one spelling: NFKC, without format characters and invisible marks."""
    if text.isascii():  # nothing to drop or compose (the common case: fast)
        return text
    return unicodedata.normalize("NFKC", _IGNORABLE.sub("", text))


def _fold_case(text: str) -> str:
    """Case-folded, the dotted capital I as "i" (not "i" + a combining dot), the dotless ı
    as "i": İzmir, IZMIR and ızmir are one word."""
    folded = text.casefold()
    if text.isascii():
        return folded
    return folded.replace("i\u0307", "i").replace("ı", "i")


def fold(text: str) -> str:
    """`plain`, case-folded as `words` folds: both sides of a match."""
    return _fold_case(plain(text))


def _raw_words(text: str) -> list[str]:
    """Words of a non-ASCII text as written: runs of letters, digits, `_` and marks."""
    if not any(unicodedata.category(c)[0] == "M" for c in _NOT_WORD.findall(text)):
        return _UNICODE_WORD.findall(text)  # no mark to keep: `re` alone (most texts)
    out: list[str] = []
    start = -1
    for i, ch in enumerate(text):
        if ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M":
            if start < 0:
                start = i
        elif start >= 0:
            out.append(text[start:i])
            start = -1
    if start >= 0:
        out.append(text[start:])
    return out


def _parts(word: str) -> list[str]:
    """The parts of one word as written: split at `_`, between letters and digits, before an
    upper-case letter that follows a lower-case one ("OkaforLaw") and before the last capital
    of a run followed by a lower-case one ("HTMLParser" -> HTML, Parser). Marks stay with the
    letter before them. [] when the word is one part."""
    if word.isdigit() or (word.isalpha() and (word.islower() or word.isupper() or word.istitle())):
        return []
    out: list[str] = []
    cur: list[str] = []
    prev = ""
    for i, ch in enumerate(word):
        if ch == "_":
            if cur:
                out.append("".join(cur))
            cur, prev = [], ""
            continue
        if prev and not unicodedata.category(ch).startswith("M"):
            nxt = word[i + 1] if i + 1 < len(word) else ""
            if (
                ch.isdigit() != prev.isdigit()
                or (prev.islower() and ch.isupper())
                or (prev.isupper() and ch.isupper() and nxt.islower())
            ):
                out.append("".join(cur))
                cur = []
        cur.append(ch)
        if not unicodedata.category(ch).startswith("M"):
            prev = ch
    if cur:
        out.append("".join(cur))
    return out if len(out) > 1 else []


def words(text: str, *, parts: bool = False) -> list[str]:
    """Lower-case words of `text`, in order (underscores trimmed); with `parts`, followed by
    the parts of its words written as several (`_parts`)."""
    if text.isascii():  # recall's hot path: most texts have no word with parts
        raws = _ASCII_WORD.findall(text)
        out = " ".join(raws).lower().split()
        if _ASCII_COMPOUND.search(text) is None:
            return out
        if "_" in text:
            out = [w for w in (w.strip("_") for w in out) if w]
        if parts:
            for raw in raws:
                out.extend(p.lower() for p in _parts(raw.strip("_")))
        return out
    out = []
    more: list[str] = []
    for raw in _raw_words(plain(text)):
        raw = raw.strip("_")
        if raw:
            out.append(_fold_case(raw))
            if parts:
                more.extend(_fold_case(p) for p in _parts(raw))
    return out + more


@functools.lru_cache(maxsize=4096)
def _script_of(ch: str) -> str:
    return unicodedata.name(ch, "").split(" ", 1)[0]


def script(word: str) -> str:
    """The script of the first letter of `word` ("LATIN", "DEVANAGARI", "HANGUL", "THAI",
    "CJK"...), "" when it has none (digits only)."""
    for ch in word:
        if ch.isalpha():
            return "LATIN" if ch.isascii() else _script_of(ch)
    return ""


def latin_share(text: str) -> float:
    """The share of the letters of `text` that are Latin (1.0 without letters)."""
    if text.isascii():
        return 1.0
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return 1.0
    latin = sum(1 for ch in letters if ch.isascii() or _script_of(ch) == "LATIN")
    return latin / len(letters)


def stem(word: str) -> str:
    """A light suffix strip so "workouts"/"workout" and "traveling"/"travel" meet (never
    "es": "coffees" must stay "coffee")."""
    for suffix in SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def root(word: str) -> str:
    """The form two words of the same stem share: `stem` (twice: "mornings" -> "morning" ->
    "morn"), short plurals and "-ing"/"-ed" forms `stem` leaves ("runs", "hiking", "liked"),
    then a final "e" ("hike"), a doubled consonant ("runn") and a final "y" ("study" ->
    "studi", as "studies" gives). English rules: a word of another script is its own root."""
    if not word.isascii() and script(word) != "LATIN":
        return word
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


def content_roots(
    text: str, *, ignore: frozenset[str] = frozenset(), parts: bool = False
) -> frozenset[str]:
    """Roots of the content words of `text`: no stop words, no numbers, none of `ignore`
    (e.g. the words that frame a fact: "prefer", "like"); `parts`: as `words`."""
    return frozenset(
        root(w)
        for w in words(text, parts=parts)
        if len(w) > 1 and not w[0].isdigit() and w not in STOPWORDS and w not in ignore
    )


def numbers(text: str) -> frozenset[str]:
    """The numbers of `text` as written, thousands separators dropped ("10,000" -> "10000";
    "7,5" stays a decimal comma only when not followed by three digits)."""
    out = set()
    for n in _NUMBER.findall(text):
        out.add(re.sub(r",(?=\d{3}(\D|$))", "", n).replace(",", "."))
    return frozenset(out)


#: Scripts written without spaces between words: a "word" of the splitter is a whole phrase.
UNSPACED = frozenset({"THAI", "LAO", "KHMER", "MYANMAR", "CJK", "HIRAGANA", "KATAKANA"})
#: Arabic writes "and", "so", "with", "for", "as" and "the" glued before a word: بالقاهرة is
#: "in the Cairo" (longest first).
ARABIC_PROCLITICS = ("وال", "فال", "بال", "كال", "لل", "ال", "و", "ف", "ب", "ل", "ك")


def names_word(word: str, root: str) -> bool:
    """Does one word of a text name the word `root` (both as `words` gives them)? Forget's
    topic and recall's word score decide alike, per script: docs/privacy.md, "What matches"."""
    if word == root:
        return True
    kind = script(root)
    if kind in ("LATIN", "") or len(root) < 2:
        return False
    if kind in UNSPACED:
        return root in word
    if word.startswith(root):
        return True
    if kind == "ARABIC":
        for clitic in ARABIC_PROCLITICS:
            if word.startswith(clitic) and word[len(clitic) :].startswith(root.removeprefix("ال")):
                return True
    return False


#: A text whose letters are at least this share Latin is one the embedders know (below).
KNOWN_SHARE = 0.5


def embedder_knows(text: str) -> bool:
    """Can the embedder's cosine be trusted for `text`? The embedders offered were trained on
    English (docs/privacy.md, "What matches"): decided by the share of Latin letters."""
    return latin_share(text) >= KNOWN_SHARE
