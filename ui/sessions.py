"""Session titles: a chat is named after its first message, and the name can be edited. Titles
come from people: shown as plain text or escaped markdown, never as markup."""

from __future__ import annotations

import re
from datetime import datetime

from memory.service import MemoryService
from ui.errors import guard
from ui.format import fmt_ms_time

#: How long a title made from a message may be (the sidebar is narrow).
TITLE_CHARS = 48
#: How much of a title the sidebar's chat picker shows, cut at a word (the full title is in
#: the chat page's caption and the rename box): what its full-width box holds at 390 px.
PICKER_CHARS = 30
#: The store's limit for a title (memory/stores/short_term.py).
MAX_TITLE_CHARS = 80
_ID_DATE = re.compile(r"^s-(\d{8}-\d{4})-")


def title_from(message: str, limit: int = TITLE_CHARS) -> str:
    """The first words of a message, on one line, cut at a word with an ellipsis."""
    text = " ".join(message.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,.;:!?-") + "…"


def fallback_label(session_id: str) -> str:
    """A session without a title: `s-20261123-0117-9171` reads "Chat of 23 Nov 2026, 01:17"."""
    m = _ID_DATE.match(session_id)
    if m:
        try:
            when = datetime.strptime(m.group(1), "%Y%m%d-%H%M")
        except ValueError:
            return session_id
        return f"Chat of {fmt_ms_time(when)}"
    return session_id


def label(session_id: str, titles: dict[str, str]) -> str:
    return titles.get(session_id) or fallback_label(session_id)


def picker_label(session_id: str, titles: dict[str, str]) -> str:
    """The chat's name as the picker shows it: cut at a word with "…" when long."""
    return title_from(label(session_id, titles), PICKER_CHARS)


def distinct(names: dict[str, str]) -> dict[str, str]:
    """Chat names told apart ("Marathon", "Marathon (2)"): a select box hands back the option
    whose name was picked, so two chats of one name would act on the first of them."""
    out: dict[str, str] = {}
    for session_id, name in names.items():
        n, candidate = 1, name
        while candidate in out.values():
            n += 1
            candidate = f"{name} ({n})"
        out[session_id] = candidate
    return out


def titles_of(coord: MemoryService, user_id: str) -> dict[str, str]:
    titles: dict[str, str] = {}
    with guard("Reading the chat titles"):
        titles = dict(coord.short_term.titles(user_id) or {})
    return titles


def name_of(coord: MemoryService, user_id: str, session_id: str) -> str | None:
    """The chat's name: its title, or its date once it holds messages; None for a new chat."""
    title = titles_of(coord, user_id).get(session_id)
    if title:
        return title
    listed: list[str] = []
    with guard("Listing your chats"):
        listed = list(coord.short_term.sessions(user_id) or [])
    return fallback_label(session_id) if session_id in listed else None


def name_after(coord: MemoryService, user_id: str, session_id: str, message: str) -> None:
    """Name a chat after its first message (a title it already has is kept)."""
    title = title_from(message)
    if title:
        with guard("Naming the chat"):
            coord.set_session_title(user_id, session_id, title, only_if_missing=True)
