"""The secret detector (memory/writing/secrets.py): what it masks, what it leaves alone."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInputError
from memory.writing.secrets import (
    API_KEY,
    CARD,
    IBAN,
    PASSWORD,
    PHONE,
    PIN,
    PRIVATE_KEY,
    check_no_secret,
    found_in,
    iban_valid,
    luhn_valid,
    mask_json,
    mask_secrets,
)

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
        "tools": [{"arguments": {"pin": "[pin]"}}],  # a value under a secret-named key
    }


# --- the forms people write ----------------------------------------------------------------
# Each positive: (text, what is stored, the label). The text is read in one spelling first
# (`memory.text.plain`: NFKC, no soft hyphen or zero-width character), so a text with a secret
# is stored in that spelling; a text without one is stored exactly as written.
NBSP, NNBSP, EN, ZWSP, SHY = "\u00a0", "\u202f", "\u2013", "\u200b", "\u00ad"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"
    "KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n"
    "-----END RSA PRIVATE KEY-----"
)
FORMS = [
    # stated in other words than "my password is"
    ("the password for my bank is Xq7hunter", "the password for my bank is [password]", PASSWORD),
    ("the pin for my card is 7482", "the pin for my card is [pin]", PIN),
    ("The PIN of the alarm: 0451", "The PIN of the alarm: [pin]", PIN),
    ('my password is "correct horse battery staple"', 'my password is "[password]"', PASSWORD),
    ("my passphrase is “correct horse battery”", "my passphrase is “[password]”", PASSWORD),
    # assignments and JSON of secret-named keys
    ("DB_PASSWORD=hunter2xyz", "DB_PASSWORD=[password]", PASSWORD),
    ("export DB_PASSWORD='hunter 2'", "export DB_PASSWORD='[password]'", PASSWORD),
    (
        '{"password": "hunter2xyz", "user": "ana"}',
        '{"password": "[password]", "user": "ana"}',
        PASSWORD,
    ),  # fmt: skip
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [api key]",
        API_KEY,
    ),
    ("OPENWEATHER_API_KEY=0123456789abcdef", "OPENWEATHER_API_KEY=[api key]", API_KEY),
    ("GITHUB_TOKEN: abc123def456", "GITHUB_TOKEN: [api key]", API_KEY),
    ("client_secret=s3cr3tvalue", "client_secret=[api key]", API_KEY),
    ("pw: hunter2xyz", "pw: [password]", PASSWORD),
    ("passwd: hunter2xyz", "passwd: [password]", PASSWORD),
    # tokens and keys by their form
    (f"Authorization: Bearer {JWT}", "Authorization: Bearer [api key]", API_KEY),
    (f"the token {JWT} expired", "the token [api key] expired", API_KEY),
    (f"my key:\n{PEM}\nkeep it safe", "my key:\n[private key]\nkeep it safe", PRIVATE_KEY),
    # card and IBAN digits with other separators
    ("my card is 4111.1111.1111.1111", "my card is [card number]", CARD),
    (f"card 4111{NBSP}1111{NBSP}1111{NBSP}1111 ok", "card [card number] ok", CARD),
    (f"card 4111{NNBSP}1111{NNBSP}1111{NNBSP}1111", "card [card number]", CARD),
    (f"card 4111{EN}1111{EN}1111{EN}1111", "card [card number]", CARD),
    ("card 4111/1111/1111/1111", "card [card number]", CARD),
    (f"card 4111{ZWSP}1111{ZWSP}1111{ZWSP}1111", "card [card number]", CARD),
    ("card\n4111\n1111\n1111\n1111\nthanks", "card\n[card number]\nthanks", CARD),
    ("card ４１１１ １１１１ １１１１ １１１１", "card [card number]", CARD),
    (f"pass{SHY}word: hunter2xyz", "password: [password]", PASSWORD),
    ("IBAN NL91.ABNA.0417.1643.00", "IBAN [bank account number]", IBAN),
    (f"IBAN NL91{NBSP}ABNA{NBSP}0417{NBSP}1643{NBSP}00", "IBAN [bank account number]", IBAN),
    ("IBAN NL91-ABNA-0417-1643-00 is mine", "IBAN [bank account number] is mine", IBAN),
]
# Look-alikes that must stay as written (under `mask`: no email or phone number in them;
# phone numbers per PII_POLICY are checked by the PII tests above and below).
LOOK_ALIKES = [
    "version 4.1.1.1 ships on 2026.11.23",
    "released 23/11/2026 and 2026-11-23",
    "order no. 1234.5678.9012",
    "order 1234/5678/9012/3456",
    "years 2024 2025 2026 2027",
    f"total €1.234.567,89 and 1{NBSP}234{NBSP}567 kr",
    "MAX_TOKENS=4096 and input_tokens: 300",
    "a token of thanks",
    "the password reset link",
    "secretary: Anne",
    "spin: 3 sets",
    "Bearer bonds are old",
    "the pin for the map",
    "key: value",
    "NL91.ABNA.0417.1643.01 fails mod 97",
    "-----BEGIN CERTIFICATE-----",
]
PHONES = [f"call 020{NBSP}123{NBSP}4567", "call 06-12345678", "call +31 6 1234 5678"]


@pytest.mark.parametrize(("text", "masked", "label"), FORMS)
def test_a_secret_in_the_forms_people_write_becomes_a_label(
    text: str, masked: str, label: str
) -> None:
    assert mask_secrets(text) == (masked, [label])
    assert mask_secrets(masked) == (masked, [])  # idempotent


@pytest.mark.parametrize("text", LOOK_ALIKES + PHONES)
def test_look_alikes_stay_as_written(text: str) -> None:
    assert mask_secrets(text) == (text, [])


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_no_pii_either(text: str) -> None:
    assert mask_secrets(text, "mask") == (text, [])


@pytest.mark.parametrize("text", PHONES)
def test_phone_numbers_follow_the_pii_policy(text: str) -> None:
    assert mask_secrets(text, "mask") == ("call [phone number]", [PHONE])


def test_metadata_keys_and_values_under_secret_named_keys() -> None:
    meta = {
        "password": "correct horse",
        "DB_PASSWORD": 123456,
        "pin": "0451",
        "api": {"client_secret": ["a", "b"]},
        "4111 1111 1111 1111": "the card",
        "note": "version 2.1",
    }
    assert mask_json(meta) == {
        "password": "[password]",
        "DB_PASSWORD": "[password]",
        "pin": "[pin]",
        "api": {"client_secret": ["[api key]", "[api key]"]},
        "[card number]": "the card",
        "note": "version 2.1",
    }


def test_an_id_or_label_holding_a_secret_is_refused() -> None:
    check_no_secret("okafor-case", "session id")  # an ordinary id passes
    check_no_secret("2026-11-23 run", "category")
    for value in ("4111.1111.1111.1111", "NL91ABNA0417164300", "DB_PASSWORD=hunter2xyz"):
        with pytest.raises(InvalidInputError, match="session id holds"):
            check_no_secret(value, "session id")


def test_forms_together_in_one_text_are_each_masked() -> None:
    """What a writer stores is often several of them at once (a pasted config, a note)."""
    together = "\n".join(text for text, _, _ in FORMS)
    assert mask_secrets(together).text == "\n".join(masked for _, masked, _ in FORMS)
    two = "NL91 ABNA 0417 1643 00 NL91 ABNA 0417 1643 00 and XX12 3456 NL91ABNA0417164300"
    assert (
        mask_secrets(two).text
        == "[bank account number] [bank account number] and XX12 3456 [bank account number]"
    )


# --- the outside probe's forms (issue 49) ----------------------------------------------------

PROBE_FORMS = [
    # key names read as words: upper case glued, lower case glued, camelCase
    ("PGPASSWORD=Hunt3r22 psql -h db", "PGPASSWORD=[password] psql -h db", PASSWORD),
    ("mypassword=Hunt3r22", "mypassword=[password]", PASSWORD),
    ("dbPassword: Hunt3r22", "dbPassword: [password]", PASSWORD),
    ("clientSecret=s3cr3tv4lue", "clientSecret=[api key]", API_KEY),
    ("accessToken: abcd1234efgh", "accessToken: [api key]", API_KEY),
    # stated forms
    ("my password is now Hunt3r22", "my password is now [password]", PASSWORD),
    ("the password is: Hunt3r22", "the password is: [password]", PASSWORD),
    ("'password' => 'Hunt3r22'", "'password' => '[password]'", PASSWORD),
    ("my GitHub token is ghx9Kq2LmZp4Rt7Wv1", "my GitHub token is [api key]", API_KEY),
    ("PIN-code: 4321", "PIN-code: [pin]", PIN),
    # invisible format characters (Cf) between the digits: LRM, RLM, U+2063
    ("card 4111\u200e1111\u200f1111\u20631111", "card [card number]", CARD),
    ("IBAN NL91\u2063ABNA\u200e0417 1643 00", "IBAN [bank account number]", IBAN),
]


@pytest.mark.parametrize(("text", "masked", "label"), PROBE_FORMS)
def test_the_probes_secret_forms_are_masked(text: str, masked: str, label: str) -> None:
    assert mask_secrets(text) == (masked, [label])
    assert mask_secrets(masked) == (masked, [])  # idempotent


@pytest.mark.parametrize(
    "text",
    ["the token is valid", "spin: 4", "max_tokens: 100", "I use tokens: 5", "secret: I hum"],
)
def test_words_near_the_new_forms_stay(text: str) -> None:
    assert mask_secrets(text) == (text, [])


def test_json_keys_are_read_as_words_too() -> None:
    assert mask_json({"dbPassword": "Hunt3r22", "PGPASSWORD": 5, "spin": 4}) == {
        "dbPassword": "[password]",
        "PGPASSWORD": "[password]",
        "spin": 4,
    }
