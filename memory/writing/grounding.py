"""Is a model-made memory supported by what the user said? A lexical check, no model call:
numbers as values, names, the polarity of each word (a negator within `NEGATION_SCOPE` words),
then `min_word_share` of the content words, last an embedding similarity for paraphrases
(docs/agent.md, "Grounded memories"; known limits: tests/unit/test_writing_grounding.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

from pydantic import StrictInt

from memory.data_files import DataModel, Words, load_data_file
from memory.text import FRAMING, NEGATORS, STOPWORDS, root
from memory.writing.secrets import mask_text

# The two thresholds, and the examples they were set on: tests/unit/test_writing_grounding.py.
MIN_WORD_SHARE = 0.6  # of the claim's content words found, by default
MIN_SIMILARITY = 0.8  # the cosine of the similarity second chance

#: How many words after a negator it negates (within the clause): "don't really like black
#: coffee" reaches "coffee".
NEGATION_SCOPE = 4


class _GroundingWords(DataModel):
    """`memory/data/grounding_words.toml` (what each table is for: its comments)."""

    clause_words: Words
    units: dict[str, StrictInt]
    tens: dict[str, StrictInt]
    multipliers: dict[str, StrictInt]


_WORDS = load_data_file("grounding_words.toml", _GroundingWords)
_CLAUSE_WORDS = _WORDS.clause_words
_UNITS, _TENS, _MULTIPLIERS = _WORDS.units, _WORDS.tens, _WORDS.multipliers
_ORDINALS = frozenset(("st", "nd", "rd", "th"))

_TOKEN = re.compile(
    r"(?P<time>(?<![\d.,:])\d{1,2}:\d{2})(?![\d:])"
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<suffix>[^\W\d_]*)"
    r"|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)*)"
    r"|(?P<end>[.!?;:\n])"  # a sentence ends: negation stops, a capital is expected
    r"|(?P<start>[\"()\[\]*\u2022\u201c\u201d])"  # a quote or bullet: a capital is expected
    r"|(?P<clause>[,\u2013\u2014])"  # a clause ends: negation stops
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_CONTRACTIONS = ("s", "m", "re", "ve", "ll", "d")
#: Prefix matching looks at the first PREFIX_MIN..PREFIX_MAX letters of a root.
_PREFIX_MIN = 5
_PREFIX_MAX = 30
_LISTED = 10  # words or numbers named in a reason
_LISTED_CHARS = 40  # ... each cut to this length


#: Sentences end at . ! ? before a space (not inside "7.5" or "06:30"), or at a line break.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
#: A sentence that asks (no "?" typed): it opens with an auxiliary or a question word.
_ASKING = re.compile(
    r"^(?:do|does|did|am|is|are|was|were|can|could|would|will|should|shall|have|has|may|"
    r"what|when|where|who|whom|whose|which|why|how)\b",
    re.IGNORECASE,
)
#: "Can you remember that I'm vegan?": a request phrased as a question; its fact is stated.
_REMEMBER_REQUEST = re.compile(
    r"^(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?:remember|note|keep in mind|save|store|record|memori[sz]e)\s+(?:that\s+)?"
    r"(?P<fact>.+?)(?:,?\s*please)?\s*[?.!]*$",
    re.IGNORECASE | re.DOTALL,
)


def stated(text: str) -> list[str]:
    """The sentences of a message that state something: questions left out, the fact of a
    request to remember phrased as a question kept ("Can you note that I run?" -> "I run")."""
    out: list[str] = []
    for part in _SENTENCE_BREAK.split(text.translate(_APOSTROPHES)):
        sentence = part.strip()
        if not sentence:
            continue
        request = _REMEMBER_REQUEST.match(sentence)
        if request is not None:
            out.append(request.group("fact").strip())
        elif not sentence.endswith("?") and not (
            _ASKING.match(sentence) and not sentence.endswith((".", "!"))
        ):
            out.append(sentence)
    return out


@dataclass(frozen=True)
class Grounding:
    """The verdict on one claim, with a reason in plain words for the log."""

    supported: bool
    reason: str


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    root: str
    negated: bool
    name: bool  # capitalised in mid-sentence


@dataclass(slots=True)
class _Number:
    text: str
    values: set[object] = field(default_factory=set)
    tens: bool = False  # a tens word ("twenty") that a unit word may complete


@dataclass(slots=True)
class _Parsed:
    words: list[_Word] = field(default_factory=list)
    numbers: list[_Number] = field(default_factory=list)


@lru_cache(maxsize=1 << 16)  # a text repeats its words; stemming each costs most of the time
def _is_negator(word: str) -> bool:
    return word in NEGATORS or word.endswith("n't")


def _plain(word: str) -> str:
    """A lower-case word without a contraction's tail ("user's" -> "user", "i'm" -> "i")."""
    head, sep, tail = word.partition("'")
    if sep and tail in _CONTRACTIONS:
        return head
    return word.replace("'", "")


def _parse(text: str, *, source: bool) -> _Parsed:
    """The content words (with polarity) and numbers of a text, in one linear pass. In a
    source, "one" is a number and a "5k" also stands for the words "km"/"kilometers"."""
    out = _Parsed()
    sentence_start = True
    negated = False
    scope = 0  # words the current negation still reaches
    last_number: _Number | None = None  # the token just before, when it was a number

    def add_word(text: str, name: bool) -> None:
        nonlocal negated, scope
        if len(text) < 2 or text in STOPWORDS or text in FRAMING:
            return  # stop and framing words do not use up a negation's scope
        out.words.append(_Word(text, root(text), negated, name))
        scope -= 1
        if scope <= 0:
            negated = False

    def add_number(number: _Number) -> None:
        nonlocal sentence_start, last_number
        out.numbers.append(number)
        last_number = number
        sentence_start = False

    def multiply(number: _Number, word: str) -> None:
        """The number or that many thousands (hundreds, ...); "5k" may be 5 km."""
        number.values |= {v * _MULTIPLIERS[word] for v in number.values if isinstance(v, Decimal)}
        if source and word == "k":
            for unit in ("km", "kilometers", "kilometres"):
                out.words.append(_Word(unit, root(unit), negated, False))

    for m in _TOKEN.finditer(text.translate(_APOSTROPHES)):
        kind = "num" if m.lastgroup == "suffix" else m.lastgroup  # a number ends in its suffix
        if kind in ("end", "start", "clause"):
            if kind != "start":
                negated, scope = False, 0
            sentence_start = sentence_start or kind != "clause"
            last_number = None
            continue
        if kind == "time":
            hours, minutes = (int(p) for p in m.group("time").split(":"))
            # 22:30 and 10:30 pm are one time: a time matches either half of the day
            number = _Number(
                m.group("time"), {("time", hours, minutes), ("time", hours % 12, minutes)}
            )
            if minutes == 0:
                number.values.add(Decimal(hours))
            add_number(number)
            continue
        if kind == "num":
            digits = m.group("num")
            suffix = m.group("suffix").lower()
            value = Decimal(digits.replace(",", ""))  # the pattern passes digits and one dot
            number = _Number(digits + (suffix if suffix in _MULTIPLIERS else ""), {value})
            add_number(number)
            if suffix in _MULTIPLIERS:
                multiply(number, suffix)
            elif suffix and suffix not in _ORDINALS:
                add_word(suffix, False)  # a unit: "10km" -> 10, "km"
            continue
        raw = m.group("word")
        low = raw.lower()
        name = not sentence_start and raw[0].isupper()
        sentence_start = False
        previous, last_number = last_number, None
        if _is_negator(low):
            negated, scope = not negated, NEGATION_SCOPE
            continue
        if low in _CLAUSE_WORDS:
            negated, scope = False, 0
            continue
        if low in _MULTIPLIERS:
            if previous is not None:  # "5 k", "5 thousand"
                previous.text += f" {low}"
                multiply(previous, low)
                last_number = previous
            elif low != "k":  # "a thousand"
                add_number(_Number(low, {Decimal(_MULTIPLIERS[low])}))
            continue
        if low in _UNITS:
            if low == "one" and not source:  # in a claim mostly a pronoun: "the blue one"
                continue
            if previous is not None and previous.tens and 0 < _UNITS[low] < 10:
                previous.values = {Decimal(_only(previous) + _UNITS[low])}
                previous.text += f"-{low}"
                previous.tens = False
                last_number = previous
            else:
                add_number(_Number(low, {Decimal(_UNITS[low])}))
            continue
        if low in _TENS:
            add_number(_Number(low, {Decimal(_TENS[low])}, tens=True))
            continue
        add_word(_plain(low), name)
    return out


def _only(number: _Number) -> int:
    return int(next(v for v in number.values if isinstance(v, Decimal)))


class _SourceIndex:
    """The sources' roots and root prefixes, each with the polarities it was seen in."""

    def __init__(self, parsed: Sequence[_Parsed]) -> None:
        self.roots: dict[str, set[bool]] = {}
        self.prefixes: dict[str, set[bool]] = {}
        self.values: set[object] = set()
        for p in parsed:
            for n in p.numbers:
                self.values |= n.values
            for w in p.words:
                if w.negated in self.roots.get(w.root, ()):
                    continue
                self.roots.setdefault(w.root, set()).add(w.negated)
                for j in range(_PREFIX_MIN, min(len(w.root), _PREFIX_MAX) + 1):
                    self.prefixes.setdefault(w.root[:j], set()).add(w.negated)

    def polarities(self, r: str) -> set[bool]:
        """The polarities a matching source word was seen in (empty: not found). Match: the
        same root, or the shorter root (>= 5 letters) begins the longer."""
        found = set(self.roots.get(r, ()))
        if len(r) >= _PREFIX_MIN:
            if len(r) <= _PREFIX_MAX:
                found |= self.prefixes.get(r, set())  # r begins a source root
            for j in range(_PREFIX_MIN, min(len(r), _PREFIX_MAX + 1)):
                found |= self.roots.get(r[:j], set())  # a source root begins r
        return found


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(
        i if len(i) <= _LISTED_CHARS else i[:_LISTED_CHARS] + "..." for i in items[:_LISTED]
    )
    return shown + (", ..." if len(items) > _LISTED else "")


def check_grounded(
    claim: str,
    sources: Sequence[str],
    *,
    similarity: Callable[[str, str], float] | None = None,
    min_word_share: float = MIN_WORD_SHARE,
    statements_only: bool = False,
) -> Grounding:
    """Is `claim` (a memory a model wrote) supported by `sources` (what the user said)? See the
    module docstring for the rules. `similarity(claim, source)` (e.g. the cosine of their
    embeddings) is called only when the words fall short and no veto applied.
    `statements_only`: the sources' questions support nothing (rule 6)."""
    if isinstance(sources, str):  # one message passed bare: not its characters
        sources = (sources,)
    if not claim.strip():
        return Grounding(False, "empty claim")
    # Both sides without their secrets: the message was masked where the turn began, so a
    # claim quoting its card number is judged on the label the message holds.
    claim = mask_text(claim)
    texts = [mask_text(s) for s in sources if s and s.strip()]
    if statements_only and texts:
        texts = [" ".join(stated(t)) for t in texts]
        texts = [t for t in texts if t.strip()]
        if not texts:
            return Grounding(False, "the user only asked: a question states no fact")
    if not texts:
        return Grounding(False, "nothing the user said to check against")

    c = _parse(claim, source=False)
    # Distinct words by (root, polarity), a name if any occurrence is one; numbers by text.
    distinct: dict[tuple[str, bool], _Word] = {}
    for w in c.words:
        if (w.root, w.negated) not in distinct or w.name:
            distinct[(w.root, w.negated)] = w
    words = list(distinct.values())
    numbers = list({n.text: n for n in c.numbers}.values())
    if not words and not numbers:
        return Grounding(False, "nothing to check: no content words or numbers")

    index = _SourceIndex([_parse(t, source=True) for t in texts])

    missing_numbers = tuple(n.text for n in numbers if not n.values & index.values)
    if missing_numbers:
        return Grounding(False, f"numbers not in what the user said: {_listed(missing_numbers)}")

    found: list[_Word] = []
    missing: list[_Word] = []
    flipped: list[_Word] = []
    for w in words:
        polarities = index.polarities(w.root)
        if w.negated in polarities:
            found.append(w)
        elif polarities:
            flipped.append(w)
        else:
            missing.append(w)
    unsupported = tuple(dict.fromkeys(w.text for w in missing))
    names = tuple(dict.fromkeys(w.text for w in missing if w.name))
    if names:
        return Grounding(
            False, f"not in what the user said: {_listed(unsupported)} (names: {_listed(names)})"
        )
    if flipped:
        texts_flipped = tuple(dict.fromkeys(w.text for w in flipped))
        return Grounding(False, f"negation differs: {_listed(texts_flipped)}")

    counts = ", ".join(
        ([f"{len(found)} of {len(words)} words"] if words else [])
        + ([f"numbers {_listed([n.text for n in numbers])}"] if numbers else [])
    )
    if not words or len(found) / len(words) >= min_word_share:
        return Grounding(True, f"supported ({counts})")

    reason = f"not in what the user said: {_listed(unsupported)}"
    if similarity is not None:
        best = max(similarity(claim, t) for t in texts)
        if best >= MIN_SIMILARITY:
            return Grounding(True, f"supported by similarity {best:.2f} ({counts})")
        reason += f" (best similarity {best:.2f})"
    return Grounding(False, reason)
