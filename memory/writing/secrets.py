"""Secrets never stored: found in a text and replaced by a label such as `[card number]`, where
every text is built before it is written, so no writer can skip it. What is masked and when:
docs/privacy.md, "Secrets never stored"; `mask_secrets` is idempotent."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple

from memory.data_files import DataModel, Words, load_data_file
from memory.errors import InvalidInputError
from memory.models import use_secret_detector
from memory.text import plain

#: What happens to emails and phone numbers (PII_POLICY).
PiiPolicy = Literal["keep", "mask", "refuse"]

CARD = "card number"
IBAN = "bank account number"
GOV_ID = "government id number"
PASSWORD = "password"
PIN = "pin"
API_KEY = "api key"
PRIVATE_KEY = "private key"
EMAIL = "email address"
PHONE = "phone number"


class Masked(NamedTuple):
    """A text with its secrets replaced, and the labels of what was replaced (each once)."""

    text: str
    found: list[str]


def _label(kind: str) -> str:
    return f"[{kind}]"


# --- checksums -----------------------------------------------------------------------------


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to 10..35, mod 97 == 1."""
    s = iban.upper()
    if not (15 <= len(s) <= 34) or s[:2] not in IBAN_COUNTRIES or not s.isalnum():
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


class SecretWords(DataModel):
    """`memory/data/secret_words.toml` (what each list is for: its comments)."""

    iban_countries: Words
    secret_words: Words
    copula: Words
    qualifiers: Words
    id_names: list[re.Pattern[str]]
    token_patterns: dict[str, re.Pattern[str]]


SECRET_WORDS = load_data_file("secret_words.toml", SecretWords)
IBAN_COUNTRIES = frozenset(c.upper() for c in SECRET_WORDS.iban_countries)

# --- patterns ------------------------------------------------------------------------------

# A value stated as a secret: "password is X", "my PIN: 1234", "api key = X", "the password for
# my bank is X", a whole quoted passphrase. The key words stay, the value goes; a value
# already masked (`[...]`) is left alone.
_VALUE = r"(?P<value>(?!\[)[^\s\"'`“”‘’]*[^\s\"'`“”‘’.,;:!?)\]])"
_QUOTED = (
    r"(?:\"(?P<dq>(?!\[)[^\"\n]{1,200})\"|“(?P<cq>(?!\[)[^”\n]{1,200})”"
    r"|'(?P<sq>(?!\[)[^'\n]{1,200})'|‘(?P<csq>(?!\[)[^’\n]{1,200})’)"
)
# "is", "was", "is now", "is:", "=", "=>", ":" between the key words and the value.
# Possessive: "is now [password]" must not read "now" as the value.
_IS = r"(?:(?:is|was)(?:\s+now)?+(?:\s*:)?+|=>?+|:)"
_STATED_SECRET = re.compile(
    r"\b(?P<key>(?P<pw>pass(?:word|wd|code|phrase)|pwd|wi-?fi password)"
    r"|(?P<pin>pin(?:[ -]?code|[ -]?number)?)"
    r"|(?P<api>api[ _-]?(?:key|token|secret)|secret[ _-]?key|access[ _-]?(?:key|token)"
    r"|auth(?:entication)?[ _-]?token|bearer[ _-]?token|client[ _-]?secret|private[ _-]?key)"
    # "my GitHub token is X", "the npm token: X": a token only when its value looks like one
    # (a digit, or 16 characters): "the token is valid" keeps its word.
    r"|(?P<tok>token))"
    # What it is for ("for my bank", "of the alarm"), then "is" or a colon; or the plain
    # forms. After a bare space (no "is", no colon) only a value holding a digit: "pin 1234",
    # not "password reset".
    r"(?:\s+(?:for|of|to)\s+[^\n.,;:!?\"=]{1,40}?(?:\s+" + _IS + r"\s*|\s*[:=]\s*)"
    r"|\s*" + _IS + r"\s*|\s+(?=\S*\d))"
    r"(?(tok)(?=[\"'`“‘]?[^\s\"'`“”‘’]*\d|[\"'`“‘]?[^\s\"'`“”‘’]{16}))"
    r"(?:" + _QUOTED + r"|[\"'`]?" + _VALUE + r")",
    re.IGNORECASE,
)
# A secret-named key: `*_PASSWORD`, `*SECRET*`, `*_API_KEY`, `*_TOKEN`, `pw`, `passwd`, `pin`
# (the name ends with the secret's word, or holds "secret" as one of its words).
_SECRET_NAME = (
    # Words before the secret's: separated (`DB_PASSWORD`), camelCase (`dbPassword`), or glued
    # to a long word (`PGPASSWORD`, `mypassword`, `authtoken`; a glued `pin` is "spin").
    r"(?:[\w.-]*?[_.-]|[\w.-]*?(?-i:[a-z0-9](?=[A-Z]))"
    r"|[\w.-]*?(?=pass(?:word|wd|code|phrase)|token))?"
    r"(?:(?P<npw>pass(?:word|wd|code|phrase)|pwd|pw)|(?P<npin>pin)"
    r"|api[_-]?key|apikey|access[_-]?key|private[_-]?key|token|secret[_.-][\w.-]*)"
    # "secret" alone is a word of prose ("my secret: I hum"); a key only inside a name
    r"|[\w.-]+?secret"
)
_SECRET_KEY = re.compile(_SECRET_NAME, re.IGNORECASE)
# Assigned to one, as in a config file, a shell, JSON or YAML: `DB_PASSWORD=x`, `"password":
# "x"`, `aws_secret_access_key = x`; a quoted value goes whole.
_ASSIGNED_SECRET = re.compile(
    r"(?<![\w.-])[\"']?(?P<key>" + _SECRET_NAME + r")[\"']?\s*(?>=>|[:=])\s*"
    r"(?:" + _QUOTED + r"|(?P<value>(?!\[)[^\s\"',;}\]]+))",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\bBearer\s+(?P<value>(?!\[)[A-Za-z0-9._~+/-]{16,}=*)", re.IGNORECASE)
_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
# Tokens whose prefix says what they are (OpenAI/Anthropic, GitHub, Slack, AWS, Google, GitLab,
# Stripe, Hugging Face).
_PREFIXED_TOKEN = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(p.pattern for p in SECRET_WORDS.token_patterns.values())
    + r")(?![\w-])"
)
# A government id stated as such: the words, then a value holding a digit.
_STATED_ID = re.compile(
    r"\b(?P<key>" + "|".join(p.pattern for p in SECRET_WORDS.id_names) + ")"
    r"(?:\s*(?:is|was|=|:|#)\s*|\s+)"
    # Groups holding a digit, separated by single spaces, and a final check letter
    # ("AB 12 34 56 C"); the next word ("123456789 is valid") is not part of it.
    r"(?P<value>[A-Za-z0-9-]*\d[A-Za-z0-9-]*(?: [A-Za-z0-9-]*\d[A-Za-z0-9-]*)*(?: (?-i:[A-Z])\b)?)",
    re.IGNORECASE,
)
_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
# UK National Insurance number: two prefix letters (some never used), six digits, A-D.
_NINO = re.compile(
    r"\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"
)
# What people put between the groups of a card or an account number besides a space: dots,
# dashes of any width, slashes, a line break.
_GROUP_SEP = r"(?:[ .\-/\u2010-\u2015\u2212]|\r?\n)"
_IBAN_CANDIDATE = re.compile(r"\b[A-Za-z]{2}\d{2}(?:" + _GROUP_SEP + r"?[A-Za-z0-9]){11,30}\b")
_IBAN_SEP = re.compile(_GROUP_SEP)
# 13-19 digits, single spaces or dashes between them; not part of a longer number or of a
# word (digits inside a hex id or a hash are no card), not after a `+` (an international phone
# number).
_CARD_CANDIDATE = re.compile(r"(?<![\w+\-])\d(?:[ -]?\d){12,18}(?!\w)")
# Groups of four (or Amex's 4-6-5) split by one other separator, the same each time.
_CARD_GROUPED = re.compile(
    r"(?<![\w+\-./])\d{4}(?P<sep>" + _GROUP_SEP + r")"
    r"(?:\d{4}(?:(?P=sep)\d{4}){1,2}(?:(?P=sep)\d{1,3})?|\d{6}(?P=sep)\d{5})"
    r"(?![\w]|[.\-/\u2010-\u2015\u2212]\d)"
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# Phone numbers by their form: international (+ and 8-15 digits), or national starting with
# 0 (10-11 digits, as written in Europe), or the North American (555) 123-4567 form. A plain
# number, a date (2026-11-23), a time (07:30) or a range (9-17) does not qualify.
_PHONE_INTL = re.compile(r"(?<![\w+])\+\d(?:[ .\-]?\(?\d\)?){7,14}(?!\d)")
_PHONE_NATIONAL = re.compile(
    r"(?<![\w+\-./:])(?:0\d(?:[ \-]?\d){8,9}|\(\d{3}\) ?\d{3}[ .\-]\d{4}|\d{3}[.\-]\d{3}[.\-]\d{4})"
    r"(?![\w\-./:])"
)


# --- masking -------------------------------------------------------------------------------


class _Masker:
    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[str] = []

    def _note(self, kind: str) -> str:
        if kind not in self.found:
            self.found.append(kind)
        return _label(kind)

    def sub(self, pattern: re.Pattern[str], kind: str, check: Callable[[str], bool]) -> None:
        def repl(m: re.Match[str]) -> str:
            return self._note(kind) if check(m.group(0)) else m.group(0)

        self.text = pattern.sub(repl, self.text)

    def stated(self, pattern: re.Pattern[str], kind_of: Callable[[re.Match[str]], str]) -> None:
        """Keep what the sentence says the value is (and a quoted value's quotes); replace
        the value."""

        def repl(m: re.Match[str]) -> str:
            group = next(g for g in _VALUE_GROUPS if g in m.re.groupindex and m.group(g))
            start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
            whole = m.group(0)
            return whole[:start] + self._note(kind_of(m)) + whole[end:]

        self.text = pattern.sub(repl, self.text)

    def ibans(self) -> None:
        # A candidate may run into the next word ("NL91 ABNA 0417 1643 00 is mine") or the
        # next account number: try it shorter, a group at a time, until the checksum holds;
        # the search goes on right after what was masked (or after the candidate's first
        # group when none holds).
        text, out, pos = self.text, [], 0
        while (m := _IBAN_CANDIDATE.search(text, pos)) is not None:
            s = m.group(0)
            while len(_IBAN_SEP.sub("", s)) >= 15 and not iban_valid(_IBAN_SEP.sub("", s)):
                seps = list(_IBAN_SEP.finditer(s))
                s = s[: seps[-1].start()] if seps else ""
            if len(_IBAN_SEP.sub("", s)) >= 15:
                out += [text[pos : m.start()], self._note(IBAN)]
                pos = m.start() + len(s)
            else:
                first = _IBAN_SEP.search(s or m.group(0))
                step = first.end() if first else len(m.group(0))
                out.append(text[pos : m.start() + step])
                pos = m.start() + step
        self.text = "".join(out) + text[pos:]


def _is_card(s: str) -> bool:
    digits = re.sub(r"\D", "", s)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits)


#: The groups a secret's value may sit in: quoted (straight or curly quotes), or bare.
_VALUE_GROUPS = ("dq", "cq", "sq", "csq", "value")


def _secret_kind(m: re.Match[str]) -> str:
    return PASSWORD if m.group("pw") else PIN if m.group("pin") else API_KEY


_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")


def _without_format_characters(text: str) -> str:
    """`text` without Unicode's invisible format characters (category Cf): a mark between
    the digits of a card hides it from every pattern."""
    if text.isascii():
        return text
    return _NOT_ASCII.sub(
        lambda m: "".join(c for c in m.group(0) if unicodedata.category(c) != "Cf"), text
    )


def _named_kind(m: re.Match[str]) -> str:
    """What a secret-named key holds: `DB_PASSWORD` a password, `pin` a PIN, else a key."""
    return PASSWORD if m.group("npw") else PIN if m.group("npin") else API_KEY


_KINDS = frozenset({CARD, IBAN, GOV_ID, PASSWORD, PIN, API_KEY, PRIVATE_KEY, EMAIL, PHONE})


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _always(_: str) -> bool:
    return True


def mask_secrets(text: str, pii: PiiPolicy = "keep") -> Masked:
    """`text` with its secrets replaced by labels; emails and phone numbers per `pii`.
    Raises InvalidInputError under `refuse` when the text holds an email or phone number."""
    if not text:
        return Masked(text, [])
    m = _Masker(plain(_without_format_characters(text)))
    m.sub(_PEM, PRIVATE_KEY, _always)
    m.sub(_PREFIXED_TOKEN, API_KEY, _always)
    m.stated(_BEARER, lambda _: API_KEY)
    m.stated(_ASSIGNED_SECRET, _named_kind)
    m.stated(_STATED_SECRET, _secret_kind)
    m.stated(_STATED_ID, lambda _: GOV_ID)
    m.ibans()
    m.sub(_SSN, GOV_ID, _always)
    m.sub(_NINO, GOV_ID, _always)
    m.sub(_CARD_GROUPED, CARD, _is_card)
    m.sub(_CARD_CANDIDATE, CARD, _is_card)
    if pii != "keep":
        m.sub(_EMAIL, EMAIL, _always)
        m.sub(_PHONE_INTL, PHONE, _always)
        m.sub(_PHONE_NATIONAL, PHONE, _always)
        pii_found = [k for k in m.found if k in (EMAIL, PHONE)]
        if pii == "refuse" and pii_found:
            raise InvalidInputError(
                f"The text holds {' and '.join(_a(k) for k in pii_found)} and PII_POLICY is "
                "refuse: nothing was stored. Remove it and try again (PII_POLICY=mask stores "
                "it as a label instead)."
            )
    # Nothing found: the text as written (its own spelling), not the one read.
    return Masked(m.text, m.found) if m.found else Masked(text, [])


def lenient(pii: PiiPolicy) -> PiiPolicy:
    """The policy for text nobody chose to store: `refuse` masks instead."""
    return "mask" if pii == "refuse" else pii


def found_in(texts: Iterable[str], pii: PiiPolicy = "keep") -> list[str]:
    """What `mask_secrets` replaces in these texts (each label once); never raises."""
    found: list[str] = []
    for t in texts:
        found += [k for k in mask_secrets(t, lenient(pii)).found if k not in found]
    return found


def mask_text(text: str, pii: PiiPolicy = "keep") -> str:
    """Just the masked text (for a store's `build`)."""
    return mask_secrets(text, pii).text


def mask_json(value: Any, pii: PiiPolicy = "keep") -> Any:
    """Every string in a JSON-like value masked, keys too (metadata; turn details: the
    prompt's memories, tool arguments and results, the reply); every value under a
    secret-named key (`password`, `pin`, `*_TOKEN`, ...) becomes its label. Under `refuse`
    emails and phone numbers are masked here: details are a record of a turn, not a memory
    the user chose to store."""
    policy = lenient(pii)
    if isinstance(value, str):
        return mask_secrets(value, policy).text
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = mask_secrets(k, policy).text if isinstance(k, str) else k
            named = (
                _SECRET_KEY.fullmatch(plain(_without_format_characters(k)))
                if isinstance(k, str)
                else None
            )
            out[key] = _all_labels(v, _named_kind(named)) if named else mask_json(v, policy)
        return out
    if isinstance(value, list):
        return [mask_json(v, policy) for v in value]
    return value


def _all_labels(value: Any, kind: str) -> Any:
    """`value` under a secret-named key: every string or number in it is the secret."""
    if isinstance(value, dict):
        return {k: _all_labels(v, kind) for k, v in value.items()}
    if isinstance(value, list):
        return [_all_labels(v, kind) for v in value]
    if isinstance(value, str) and value and not _is_label(value):
        return _label(kind)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _label(kind)
    return value


def _is_label(value: str) -> bool:
    return value.startswith("[") and value.endswith("]") and value[1:-1] in _KINDS


def check_no_secret(value: str, what: str) -> str:
    """An id or a label as it is, or InvalidInputError when it holds a secret: an id or a
    label cannot stand as `[card number]` (two ids would become one, a label's characters are
    limited), so it is refused, saying what to do."""
    found = mask_secrets(value).found if value else []
    if found:
        raise InvalidInputError(
            f"The {what} holds {' and '.join(_a(k) for k in found)}: secrets are never "
            f"stored. Choose another {what}."
        )
    return value


def without_secret_tags(tags: list[str], pii: PiiPolicy = "keep") -> list[str]:
    """Tags that hold no secret: a tag is a label of one word, so a card number or a stated
    password given as a tag cannot stand as a masked label: it is left out."""
    policy = lenient(pii)
    return [t for t in tags if not mask_secrets(t, policy).found]


# Every id `memory.models.check_id` validates (users, sessions, turns) is refused with a secret.
use_secret_detector(check_no_secret)
