"""Secrets never stored: find them in a text and replace each by a label such as `[card number]`.

Applied where every text is built before it is written (the stores' `build`, short-term
messages, titles and turn details, the embedding cache), so no writer can skip it:

- always masked: card numbers (13-19 digits, spaces or dashes allowed, Luhn-valid), bank
  account numbers (IBAN, mod-97-valid), government id numbers (US SSN `AAA-GG-SSSS` outside
  the never-issued ranges, UK National Insurance numbers, and numbers stated as such: "my
  passport number is ...", "BSN: ...") and secrets (values stated as a password, PIN, API key
  or token; tokens with a well-known prefix: `sk-`, `ghp_`, `xoxb-`, `AKIA`, ...);
- emails and phone numbers follow `PII_POLICY`: `keep` (default), `mask`, or `refuse` (the
  write fails with `InvalidInputError` saying what was found). `refuse` applies to what a
  person writes (a memory's text, a user's message); text they did not type (a reply, a
  memory's context, a turn's details, a search in the embedding cache) is masked instead
  (`lenient`): a model quoting an email must not make the user's message unsaveable.

Conservative by design: a number is masked only when its form proves what it is (a checksum,
a strict format) or the sentence says so. "10,000 steps", dates, times, weights, a race
number and a 16-digit number that fails Luhn stay as they are.

`mask_secrets` is idempotent: a masked text passes through unchanged, nothing found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple

from memory.errors import InvalidInputError

#: What happens to emails and phone numbers (PII_POLICY).
PiiPolicy = Literal["keep", "mask", "refuse"]

CARD = "card number"
IBAN = "bank account number"
GOV_ID = "government id number"
PASSWORD = "password"
PIN = "pin"
API_KEY = "api key"
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


#: Countries with IBANs (SWIFT's registry); a code outside it is not an IBAN.
IBAN_COUNTRIES = frozenset(
    "AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO FR GB GE GI "
    "GL GR GT HR HU IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL "
    "NO OM PK PL PS PT QA RO RS RU SA SC SD SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE".split()
)

# --- patterns ------------------------------------------------------------------------------

# A value stated as a secret: "password is X", "my PIN: 1234", "api key = X". The key words
# stay, the value goes; a value already masked (`[...]`) is left alone.
_VALUE = r"(?P<value>(?!\[)[^\s\"'`]*[^\s\"'`.,;:!?)\]])"
_STATED_SECRET = re.compile(
    r"\b(?P<key>(?P<pw>pass(?:word|code|phrase)|pwd|wi-?fi password)"
    r"|(?P<pin>pin(?: code| number)?)"
    r"|(?P<api>api[ _-]?(?:key|token|secret)|secret[ _-]?key|access[ _-]?(?:key|token)"
    r"|auth(?:entication)?[ _-]?token|bearer[ _-]?token|client[ _-]?secret|private[ _-]?key))"
    # After a bare space (no "is", no colon) only a value holding a digit: "pin 1234",
    # not "password reset".
    r"(?:\s*(?:is|was|=|:)\s*[\"'`]?|\s+(?=\S*\d))" + _VALUE,
    re.IGNORECASE,
)
# Tokens whose prefix says what they are (OpenAI/Anthropic, GitHub, Slack, AWS, Google, GitLab,
# Stripe, Hugging Face).
_PREFIXED_TOKEN = re.compile(
    r"(?<![\w-])(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}|xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}|[rs]k_live_[A-Za-z0-9]{16,}"
    r"|hf_[A-Za-z0-9]{30,})(?![\w-])"
)
# A government id stated as such: the words, then a value holding a digit.
_STATED_ID = re.compile(
    r"\b(?P<key>social security (?:number|no\.?)|ssn|passport (?:number|no\.?|#)|bsn"
    r"|burgerservicenummer|national insurance (?:number|no\.?)|ni number|nino"
    r"|national id(?:entity)?(?: card)? (?:number|no\.?)|id card (?:number|no\.?)"
    r"|(?:tax|taxpayer) (?:id|identification number|number)|steuer-?id|personnummer"
    r"|driver'?s licen[cs]e (?:number|no\.?)|aadhaar(?: number)?)"
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
_IBAN_CANDIDATE = re.compile(r"\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}\b")
# 13-19 digits, single spaces or dashes between them; not part of a longer number or of a
# word (digits inside a hex id or a hash are no card), not after a `+` (an international phone
# number).
_CARD_CANDIDATE = re.compile(r"(?<![\w+\-])\d(?:[ -]?\d){12,18}(?!\w)")
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
        """Keep what the sentence says the value is; replace the value."""

        def repl(m: re.Match[str]) -> str:
            return m.group(0)[: m.start("value") - m.start(0)] + self._note(kind_of(m))

        self.text = pattern.sub(repl, self.text)

    def ibans(self) -> None:
        def repl(m: re.Match[str]) -> str:
            # The match may run into the next word ("NL91 ABNA 0417 1643 00 is mine"):
            # try it shorter, a group at a time, until the checksum holds.
            s = m.group(0)
            while len(s.replace(" ", "")) >= 15:
                if iban_valid(s.replace(" ", "")):
                    return self._note(IBAN) + m.group(0)[len(s) :]
                if " " not in s:
                    break
                s = s.rsplit(" ", 1)[0]
            return m.group(0)

        self.text = _IBAN_CANDIDATE.sub(repl, self.text)


def _is_card(s: str) -> bool:
    digits = re.sub(r"[ -]", "", s)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits)


def _secret_kind(m: re.Match[str]) -> str:
    return PASSWORD if m.group("pw") else PIN if m.group("pin") else API_KEY


_A = {EMAIL: "an email address", PHONE: "a phone number"}


def _always(_: str) -> bool:
    return True


def mask_secrets(text: str, pii: PiiPolicy = "keep") -> Masked:
    """`text` with its secrets replaced by labels; emails and phone numbers per `pii`.
    Raises InvalidInputError under `refuse` when the text holds an email or phone number."""
    if not text:
        return Masked(text, [])
    m = _Masker(text)
    m.sub(_PREFIXED_TOKEN, API_KEY, _always)
    m.stated(_STATED_SECRET, _secret_kind)
    m.stated(_STATED_ID, lambda _: GOV_ID)
    m.ibans()
    m.sub(_SSN, GOV_ID, _always)
    m.sub(_NINO, GOV_ID, _always)
    m.sub(_CARD_CANDIDATE, CARD, _is_card)
    if pii != "keep":
        m.sub(_EMAIL, EMAIL, _always)
        m.sub(_PHONE_INTL, PHONE, _always)
        m.sub(_PHONE_NATIONAL, PHONE, _always)
        pii_found = [k for k in m.found if k in (EMAIL, PHONE)]
        if pii == "refuse" and pii_found:
            raise InvalidInputError(
                f"The text holds {' and '.join(_A[k] for k in pii_found)} and PII_POLICY is "
                "refuse: nothing was stored. Remove it and try again (PII_POLICY=mask stores "
                "it as a label instead)."
            )
    return Masked(m.text, m.found)


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
    """Every string in a JSON-like value masked (turn details: the prompt's memories, tool
    arguments and results, the reply). Under `refuse` emails and phone numbers are masked
    here: details are a record of a turn, not a memory the user chose to store."""
    policy = lenient(pii)
    if isinstance(value, str):
        return mask_secrets(value, policy).text
    if isinstance(value, dict):
        return {k: mask_json(v, policy) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v, policy) for v in value]
    return value


def without_secret_tags(tags: list[str], pii: PiiPolicy = "keep") -> list[str]:
    """Tags that hold no secret: a tag is a label of one word, so a card number or a stated
    password given as a tag cannot stand as a masked label: it is left out."""
    policy = lenient(pii)
    return [t for t in tags if not mask_secrets(t, policy).found]
