"""A memory-only reply quotes the memories it lists word for word (agent/replies.py: a line
"- text", then its day and what was answered then), and the chat's history keeps it as shown.
When such a memory is deleted (*Forget this*, a delete), the stored replies that listed it say
it was forgotten instead of still quoting it."""

from __future__ import annotations

from memory.stores import Stores
from memory.stores.usage import UsageRecords
from memory.words import FORGOTTEN_TEXT

#: The line that takes the place of a forgotten memory's line in a stored reply
FORGOTTEN_LINE = f"- {FORGOTTEN_TEXT}"
#: How each line of what was answered then starts, under its memory's line: a quote inside
#: the list item (goes with the memory's line when that is forgotten)
ANSWER_QUOTE = "  > "


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
    quote = f"- {text}"
    out: list[str] = []
    dropping = False
    for line in reply.split("\n"):
        if dropping and line.startswith(ANSWER_QUOTE):
            continue
        dropping = line == quote or line.startswith((f"{quote} (", f"{quote}; "))
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
