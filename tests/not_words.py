"""What no person should read on a screen: code names, ids, bracketed kinds, the engineering
words and raw numbers a walk found (p50, "1min buckets", tokens, a score as 0.70, a hit rate,
milliseconds, "16 skipped"), a tag the app added itself, a setting's name (OLLAMA_HOST), the
memory types' code names ("Episodic") and a relevance "band". One checker for the browser walk
(tests/e2e/test_plain_words.py), the help texts AppTest reads (tests/app/test_plain_words.py)
and the word tables (tests/unit)."""

from __future__ import annotations

import re

NOT_WORDS = {
    "snake_case name": re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),
    "chat id": re.compile(r"\bs-\d{8}-\d{4}"),
    # six hex characters with a digit and a letter: a short id as well as a long one
    "hex id": re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b"),
    "ULID": re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b"),
    "bracketed kind": re.compile(r"\[[a-z_/ ]+\]"),
    "percentile": re.compile(r"\b[pP](?:50|90|95|99)\b"),
    "time bucket": re.compile(r"\b\d+(?:min|s|h|D)\s+buckets?\b|\b\d+min\b"),
    # a model's measure where a person reads a size ("about 150 tokens", "8,192-token window")
    "tokens": re.compile(r"\b[\d,]+[ -]tokens?\b(?!/s)"),
    "engineering word": re.compile(
        r"\b(?:Redis|In-process|LLM|Recall path|[Ss]essions?|[Ee]mbeddings?|[Hh]it rates?"
        r"|[Uu]ser ids?|Avg)\b"
        r"|\(model ran\)"
    ),
    # a time as an engineer measures it: people read seconds ("under a tenth of a second")
    "milliseconds": re.compile(r"\b\d+(?:[.,]\d+)?\s?ms\b|\(ms\)|\b[Mm]illiseconds?\b"),
    # a count of something left undone that does not say why ("16 skipped")
    "bare count": re.compile(r"\b\d+ (?:skipped|jobs?)\b"),
    # a score shown as its number beside its name (a slider's own value is a control's)
    "raw score": re.compile(r"\b(?:[Ii]mportance|[Ss]core|[Cc]onfidence):?[ \t]*[01]\.\d{2}\b"),
    "the app's own tag": re.compile(r"\b[Tt]ags?:[^·\n]*\bdemo\b"),
    # a setting's name is for the docs: a person is told in words what to change
    # (words of two letters or more: a model file's "Q4_K_M" is the model's own name)
    "environment variable": re.compile(r"\b[A-Z]{2,}(?:_[A-Z0-9]{2,})+\b"),
    # the memory types as the code names them: screens say what they hold ("About you")
    "memory type's code name": re.compile(r"\b(?:[Ee]pisodic|[Ss]emantic|[Pp]rocedur(?:al|es?))\b"),
    # a relevance band is said as how well a memory matched ("strong match")
    "relevance band": re.compile(r"\b[Bb]ands?\b"),
}


def internal_words(text: str) -> list[str]:
    """Each name found, with the words around it (where it is on the screen)."""
    return [
        f"{what} {m.group(0)!r} in “…{text[max(0, m.start() - 40) : m.end() + 20]}…”".replace(
            "\n", " "
        )
        for what, rx in NOT_WORDS.items()
        for m in rx.finditer(text)
    ]
