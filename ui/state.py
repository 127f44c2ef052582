"""Per-browser-session state, initialised in one function (`init_state`). Widgets copy into
plain keys in callbacks, so switching pages never loses a choice; the user and chat are also
in the address (`?user=…&chat=…`), so a reload or a second tab opens the same ones."""

from __future__ import annotations

import re
import secrets
from datetime import datetime
from typing import Any

import streamlit as st

from memory import words
from memory.errors import InvalidInputError
from memory.models import check_id
from ui.format import no_images

#: Who a visit without sign-in or `?user=` starts as: not "demo", which a presenter took for
#: the demo persona's user (`demo-maya`, loaded by its own button).
DEFAULT_USER = "guest"
#: The address's parameters for the user and the chat (session) shown.
URL_USER, URL_CHAT = "user", "chat"

#: Memory types the agent can recall before each answer, with their sidebar labels (the
#: words table's names, as every page says them).
RECALL_TYPES: dict[str, str] = dict(words.table().memory_types)


def new_session_id() -> str:
    """A readable, unique-enough session id: `s-20261121-2254-3fa1`."""
    return f"s-{datetime.now():%Y%m%d-%H%M}-{secrets.token_hex(2)}"


NEW_SESSION_ID = re.compile(r"s-\d{8}-\d{4}-[0-9a-f]{4}")  # what new_session_id makes


def init_state(sessions_of: Any = None, signed_in_as: str | None = None) -> None:
    """Set every key this app uses, once per browser session. `sessions_of(user_id)` (most
    recent first) lets `?chat=` reopen one of the user's chats, else their newest; any other
    `chat` opens a new one. A signed-in user starts as themselves."""
    ss = st.session_state
    if "user_id" not in ss:
        ss.user_id = signed_in_as or _from_url(URL_USER, "user id") or DEFAULT_USER
    if "session_id" not in ss:
        sessions = _sessions(sessions_of, ss.user_id)
        if st.query_params.get(URL_CHAT):  # a chat named in the address: that one, or a new one
            asked = _from_url(URL_CHAT, "session id")
            kept = asked in sessions or NEW_SESSION_ID.fullmatch(asked or "")
            ss.session_id = asked if asked and kept else new_session_id()
        else:
            ss.session_id = sessions[0] if sessions else new_session_id()
    ss.setdefault("model", None)  # None: the agent's configured default model
    ss.setdefault("recall", dict.fromkeys(RECALL_TYPES, True))
    ss.setdefault("turn_details", {})  # assistant message id / turn id -> TurnResult
    ss.setdefault("flash", [])  # (kind, text) shown once on the next run


def _from_url(name: str, what: str) -> str | None:
    """An id from the address, validated like any id (the address is typed by anyone);
    None when absent or not a valid id."""
    raw = str(st.query_params.get(name, "") or "").strip()
    if not raw:
        return None
    try:
        return str(check_id(raw, what))
    except InvalidInputError:
        return None


def _sessions(sessions_of: Any, user_id: str) -> list[str]:
    if sessions_of is None:
        return []
    try:
        return [str(s) for s in sessions_of(user_id)]
    except Exception:  # noqa: BLE001 - the caller shows store errors; fall back quietly here
        return []


def url_params() -> dict[str, str]:
    """The address's parameters for the current user and chat (page links carry them)."""
    ss = st.session_state
    if "user_id" not in ss or "session_id" not in ss:
        return {}
    return {URL_USER: str(ss.user_id), URL_CHAT: str(ss.session_id)}


def sync_url() -> None:
    """Write the current user and chat into the address. Only changed values are written:
    each write is a browser history update, not a rerun."""
    for name, value in url_params().items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value


def switch_user(user_id: str, sessions_of: Any = None) -> None:
    ss = st.session_state
    ss.user_id = user_id
    ss.session_id = next(iter(_sessions(sessions_of, user_id)), None) or new_session_id()


def keep_user(user_id: str, sessions_of: Any = None) -> None:
    """Pin the session to one user (a signed-in non-admin is always themselves)."""
    if st.session_state.user_id != user_id:
        switch_user(user_id, sessions_of)


def switch_session(session_id: str) -> None:
    st.session_state.session_id = session_id


def recall_types() -> list[str]:
    """The memory types the user wants recalled automatically."""
    return [t for t, on in st.session_state.recall.items() if on]


def flash(text: str, kind: str = "success") -> None:
    """Queue a message for the next run (callbacks cannot draw on the page)."""
    st.session_state.flash.append((kind, text))


def notice(place: str, text: str, kind: str = "success") -> None:
    """Keep an action's result for its place on the page (`show_notice`)."""
    st.session_state.setdefault("notices", {})[place] = (kind, text)


def notice_then_rerun(place: str, text: str, kind: str = "success") -> None:
    """`notice`, then run the page again at once: the action wrote before the page drew its
    counts and tables, so the message, tiles and tables of the next run agree."""
    notice(place, text, kind)
    st.rerun()


#: How a notice shows, by its kind, in its place on the page.
NOTICE_AS = {
    "info": (st.info, "♻️"),
    "warning": (st.warning, "✋"),
    "success": (st.success, "✅"),
}


def show_notice(place: str) -> None:
    """The message an action left for this place (`notice`)."""
    notices: dict[str, tuple[str, str]] = st.session_state.get("notices", {})
    if got := notices.pop(place, None):
        show, icon = NOTICE_AS.get(got[0], NOTICE_AS["success"])
        show(no_images(got[1]), icon=icon)  # notices quote memory texts


def pop_flashes() -> list[tuple[str, str]]:
    items = list(st.session_state.get("flash", []))
    st.session_state.flash = []
    return items


def remember_details(key: str, details: Any) -> None:
    """Keep a turn's execution details for re-display under its answer (bounded)."""
    store: dict[str, Any] = st.session_state.turn_details
    store[key] = details
    while len(store) > 200:
        store.pop(next(iter(store)))


def popover_key(base: str) -> str:
    """The key of a popover that a save closes (`close_popover`): under load the browser kept
    a closed popover open, and a new key makes a new popover, which opens closed."""
    return f"{base}_{st.session_state.get(f'{base}__gen', 0)}"


def close_popover(base: str) -> None:
    st.session_state[f"{base}__gen"] = st.session_state.get(f"{base}__gen", 0) + 1
