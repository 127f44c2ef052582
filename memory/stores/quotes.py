"""A memory-only reply quotes the memories it lists word for word (agent/replies.py: a line
"- text", then its day and what was answered then), and the chat's history keeps it as shown.
When such a memory is deleted (*Forget this*, a delete), the stored replies that listed it say
it was forgotten instead of still quoting it."""

from __future__ import annotations

import re

from memory.stores import Stores
from memory.stores.usage import UsageRecords
from memory.words import FORGOTTEN_TEXT

#: The line that takes the place of a forgotten memory's line in a stored reply
FORGOTTEN_LINE = f"- {FORGOTTEN_TEXT}"
#: How each line of what was answered then starts, under its memory's line: a quote inside
#: the list item (goes with the memory's line when that is forgotten)
ANSWER_QUOTE = "  > "

# Every ASCII punctuation character can be backslash-escaped in CommonMark; escaping them all
# also stops Streamlit's extras (`:red[...]`, `:emoji:`, `$math$`) and bare-URL autolinks.
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
# GFM turns bare `http://…`, `www.…` and `a@b.c` into links after escapes are resolved: an
# invisible word joiner (U+2060) after `:`, `www` and `@` keeps them plain text.
_AUTOLINK = re.compile(r"(:(?=//)|(?i:www)(?=\.)|@)")


def md_literal(text: str) -> str:
    """Text as one line of markdown that reads literally: no styling, link, heading or list."""
    text = _AUTOLINK.sub("\\1\u2060", " ".join(text.split()))
    return _MD_PUNCT.sub(r"\\\1", text)


def listed(text: str) -> str:
    """The line that lists a memory in a memory-only reply: its text, read literally."""
    return f"- {md_literal(text)}"


def quoting_answers(stores: Stores, user_id: str, memory_id: str) -> dict[str, set[str]]:
    """session id -> ids of the stored answers that used the memory (read before a delete
    drops these records)."""
    out: dict[str, set[str]] = {}
    for a in UsageRecords(stores.client, stores.keys).records(user_id):
        if memory_id in a.memory_ids:
            out.setdefault(a.session_id, set()).add(a.turn_id)
    return out


def without_quote(reply: str, text: str) -> str:
    """`reply` with each line that lists `text` as `FORGOTTEN_LINE`, without the quote of what
    was answered then that follows it."""
    quotes = (listed(text), f"- {text}")  # a reply stored before texts were escaped
    out: list[str] = []
    dropping = False
    for line in reply.split("\n"):
        if dropping and line.startswith(ANSWER_QUOTE):
            continue
        dropping = line in quotes or line.startswith(
            tuple(f"{q}{end}" for q in quotes for end in (" (", "; "))
        )
        out.append(FORGOTTEN_LINE if dropping else line)
    return "\n".join(out)


def drop_quotes(stores: Stores, user_id: str, answers: dict[str, set[str]], text: str) -> int:
    """Rewrite the memory-only replies of `answers` (`quoting_answers`) that list `text`;
    how many changed. Each in place of the old one (by value, in one transaction per
    session: a message appended meanwhile stays where it is)."""
    changed = 0
    for session_id, turns in answers.items():
        key = stores.keys.session(user_id, session_id)
        pipe = stores.client.pipeline(transaction=True)
        for raw, m in stores.short_term.raw_messages(user_id, session_id):
            if m.role != "assistant" or not m.metadata.get("memory_only"):
                continue
            if m.metadata.get("turn_id") not in turns:
                continue
            content = without_quote(m.content, text)
            if content != m.content:
                pipe.linsert(
                    key, "BEFORE", raw, m.model_copy(update={"content": content}).model_dump_json()
                )
                pipe.lrem(key, 1, raw)
                changed += 1
        if len(pipe):
            pipe.execute()
    return changed
