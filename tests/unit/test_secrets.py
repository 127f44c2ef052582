"""The secret detector (memory/writing/secrets.py): what it masks, what it leaves alone."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInputError
from memory.writing.secrets import found_in, iban_valid, luhn_valid, mask_json, mask_secrets

POSITIVE = [
    # cards: Luhn-valid, with spaces, dashes or none
    ("my card is 4111 1111 1111 1111 ok", "my card is [card number] ok", "card number"),
    ("card 5500-0000-0000-0004.", "card [card number].", "card number"),
    ("amex 378282246310005", "amex [card number]", "card number"),
    # IBAN: mod 97, spaced or not, any case, followed by words
    (
        "IBAN NL91 ABNA 0417 1643 00 is mine",
        "IBAN [bank account number] is mine",
        "bank account number",
    ),
    ("iban: gb82west12345698765432", "iban: [bank account number]", "bank account number"),
    ("DE89 3704 0044 0532 0130 00", "[bank account number]", "bank account number"),
    # government ids
    ("my SSN is 123-45-6789", "my SSN is [government id number]", "government id number"),
    ("NI number AB 12 34 56 C", "NI number [government id number]", "government id number"),
    ("send AB123456C today", "send [government id number] today", "government id number"),
    (
        "my passport number is X1234567 and valid",
        "my passport number is [government id number] and valid",
        "government id number",
    ),
    ("BSN: 123456782", "BSN: [government id number]", "government id number"),
    (
        "social security number 078051120",
        "social security number [government id number]",
        "government id number",
    ),
    # secrets stated as such
    ("my password is hunter2.", "my password is [password].", "password"),
    ("Password: Tr0ub4dor&3", "Password: [password]", "password"),
    ("the wifi password is swordfish", "the wifi password is [password]", "password"),
    ("pin is 1234", "pin is [pin]", "pin"),
    ("my PIN: 4321", "my PIN: [pin]", "pin"),
    ("my api key is abc123xyz", "my api key is [api key]", "api key"),
    # tokens with a known prefix, stated or not
    ("API key sk-abcdefghijklmnopqrstuvwx", "API key [api key]", "api key"),
    ("use sk-proj-abcdefghijklmnop1234 here", "use [api key] here", "api key"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[api key]", "api key"),
    ("slack xoxb-1234-5678-abcdefgh", "slack [api key]", "api key"),
    ("AKIAIOSFODNN7EXAMPLE", "[api key]", "api key"),
]

NEGATIVE = [
    "I walked 10,000 steps",
    "my race number is 1234",  # a bib number is printed on the runner's shirt: not a secret
    "on 2026-11-23 at 07:30",
    "I weigh 72.5 kg",
    "call at 3pm",
    "4111111111111112 fails the Luhn check",
    "order number 48213377",
    "order 1234567890123",
    "I work 9-17",
    "I ran 5k in 25:13 on 12.11.2026",
    "bench 100 kg x 5 x 3",
    "666-12-3456 is not a valid SSN",
    "I forgot my password yesterday",
    "my passwords are weak",
    "a pin for the map",
    "I use scikit-learn and a task-management-framework",
    "resting heart rate 52 bpm, HRV 68 ms, 7 h 45 min of sleep",
    # digits inside an id or a hash (metadata is masked too): a Luhn-valid run, no card
    "42b32765e6004491860454bf679af4d2",
    "commit a4111111111111111f",
]


@pytest.mark.parametrize(("text", "masked", "label"), POSITIVE)
def test_a_secret_becomes_a_label(text: str, masked: str, label: str) -> None:
    assert mask_secrets(text) == (masked, [label])


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_numbers_and_words_stay(text: str) -> None:
    # Under `mask` too: none of these is an email or a phone number either.
    assert mask_secrets(text, "mask") == (text, [])


def test_masking_twice_changes_nothing_and_finds_nothing() -> None:
    once = mask_secrets("card 4111 1111 1111 1111, password is hunter2, mail a@b.io", "mask")
    assert sorted(once.found) == ["card number", "email address", "password"]
    assert mask_secrets(once.text, "mask") == (once.text, [])


def test_each_kind_is_listed_once() -> None:
    text = "4111 1111 1111 1111 and 5500 0000 0000 0004"
    assert mask_secrets(text) == ("[card number] and [card number]", ["card number"])


def test_an_iban_that_fails_mod_97_is_no_bank_account() -> None:
    assert mask_secrets("NL91 ABNA 0417 1643 01 fails").found == []


PII = "write to anna@example.com or call +31 6 1234 5678 or (555) 123-4567 or 06-12345678"


def test_keep_leaves_emails_and_phone_numbers() -> None:
    assert mask_secrets(PII, "keep") == (PII, [])


def test_mask_replaces_emails_and_phone_numbers() -> None:
    assert mask_secrets(PII, "mask") == (
        "write to [email address] or call [phone number] or [phone number] or [phone number]",
        ["email address", "phone number"],
    )


def test_refuse_says_what_was_found() -> None:
    with pytest.raises(InvalidInputError, match="an email address and a phone number"):
        mask_secrets(PII, "refuse")
    # A secret alone is masked, never refused: the policy is about emails and phones.
    assert mask_secrets("pin is 1234", "refuse").found == ["pin"]


def test_checksums() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82WEST12345698765432") and not iban_valid("GB82WEST12345698765433")
    assert not iban_valid("ZZ82WEST12345698765432")  # no such country


def test_found_in_and_details_never_refuse() -> None:
    """A turn's details and what the details list are masked, not refused."""
    assert found_in(["hi anna@example.com", "pin is 1234"], "refuse") == ["email address", "pin"]
    details = {"reply": "mail anna@example.com", "tools": [{"arguments": {"pin": "pin 9876"}}]}
    assert mask_json(details, "refuse") == {
        "reply": "mail [email address]",
        "tools": [{"arguments": {"pin": "pin [pin]"}}],
    }
