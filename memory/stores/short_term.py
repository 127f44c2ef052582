"""Short-term memory: a session's recent messages in a capped, expiring Redis list, beside each
answer's details (opaque JSON) and the user's session titles; the keys: docs/architecture.md."""

from __future__ import annotations

import json
import logging
from typing import Any, get_args

import redis
from ulid import ULID

from memory.boundary import translate
from memory.errors import InvalidInputError
from memory.keys import Keys, digest
from memory.models import ChatMessage, check_id, check_text, check_unicode, now_ms
from memory.replies import as_str
from memory.tokens import newest_within_budget
from memory.writing.secrets import PiiPolicy, check_no_secret, lenient, mask_json, mask_text

log = logging.getLogger(__name__)

ROLES: tuple[str, ...] = get_args(ChatMessage.model_fields["role"].annotation)
MAX_MESSAGE_CHARS = 32_000  # a long assistant answer is still one message
#: An answer's execution details as kept: a JSON object, opaque to memory.
Details = dict[str, Any]
#: One answer's stored details at most (JSON characters); the agent compacts them below this.
MAX_DETAILS_CHARS = 512_000
#: A session title's length at most (characters).
MAX_TITLE_CHARS = 80


class ShortTermStore:
    def __init__(
        self, client: redis.Redis, keys: Keys, max_messages: int, ttl_s: int, pii: PiiPolicy
    ) -> None:
        self._r = client
        self._keys = keys
        self.max_messages = max_messages
        self.ttl_s = ttl_s
        self.pii = pii  # PII_POLICY, for the titles and details written here

    @staticmethod
    def build(
        role: str,
        content: str,
        metadata: dict | None = None,
        timestamp_ms: int | None = None,
        pii: PiiPolicy = "keep",
    ) -> ChatMessage:
        """`timestamp_ms`: when it was said (default now; e.g. a dated history, the demo).
        Secrets become labels (`memory.writing.secrets`; `pii`: emails, phone numbers)."""
        if role not in ROLES:
            raise InvalidInputError(f"Unknown role {role!r}; use one of {', '.join(ROLES)}.")
        if isinstance(content, str) and len(content) > MAX_MESSAGE_CHARS:
            raise InvalidInputError(f"A message is limited to {MAX_MESSAGE_CHARS} characters.")
        if role == "user":
            text = check_text(content, "Message")  # a NUL is refused, in a sentence
        else:
            text = _without_nul((content or "").strip())
        return ChatMessage(
            id=str(ULID()),
            role=role,
            # `refuse` is for what the user typed; a reply quoting an email is masked.
            content=mask_text(text, pii if role == "user" else lenient(pii)),
            timestamp=now_ms() if timestamp_ms is None else int(timestamp_ms),
            metadata=metadata or {},
        )

    def write(
        self,
        pipe: redis.client.Pipeline,
        user_id: str,
        session_id: str,
        messages: list[ChatMessage],
    ) -> None:
        check_id(user_id)
        check_id(session_id, "session id")  # refuses a secret too
        for m in messages:  # an imported message keeps its id
            check_no_secret(m.id, "message id")
        key = self._keys.session(user_id, session_id)
        pipe.rpush(key, *[m.model_dump_json() for m in messages])
        pipe.ltrim(key, -self.max_messages, -1)
        pipe.expire(key, self.ttl_s)
        pipe.sadd(self._keys.user_sessions(user_id), session_id)
        # the session's title lives as long as its messages (a field TTL, Redis 7.4+)
        pipe.hexpire(self._keys.session_titles(user_id), self.ttl_s, session_id)

    def recent_request(
        self, pipe: redis.client.Pipeline, user_id: str, session_id: str, n: int
    ) -> None:
        pipe.lrange(self._keys.session(user_id, session_id), -n, -1)

    @staticmethod
    def parse(raw: list[Any]) -> list[ChatMessage]:
        return [ChatMessage.model_validate(json.loads(r)) for r in raw]

    def recent(self, user_id: str, session_id: str, n: int = 50) -> list[ChatMessage]:
        check_id(user_id)
        check_id(session_id, "session id")
        return self.parse(self._r.lrange(self._keys.session(user_id, session_id), -n, -1))

    def all_messages(self, user_id: str, session_id: str) -> list[ChatMessage]:
        """Every kept message of a session (the list is capped at `max_messages`)."""
        return self.recent(user_id, session_id, self.max_messages)

    @staticmethod
    def within_budget(messages: list[ChatMessage], budget_tokens: int) -> list[ChatMessage]:
        """Newest messages whose estimated tokens fit the budget (oldest trimmed first)."""
        return newest_within_budget(messages, budget_tokens)

    @translate  # the UI reads it directly: a down Redis is a message
    def sessions(self, user_id: str) -> list[str]:
        """The user's sessions, the most recently active first (a returning user continues
        the newest one); ties and sessions without messages by name."""
        names = sorted(
            as_str(s) for s in self._r.smembers(self._keys.user_sessions(check_id(user_id)))
        )
        pipe = self._r.pipeline(transaction=False)
        for s in names:
            pipe.lindex(self._keys.session(user_id, s), -1)
        last: dict[str, int] = {}
        for s, raw in zip(names, pipe.execute(), strict=True):
            try:
                last[s] = int(json.loads(raw).get("timestamp") or 0) if raw else 0
            except (ValueError, TypeError, AttributeError):
                last[s] = 0
        return sorted(names, key=lambda s: -last[s])

    # --- titles -------------------------------------------------------------------------
    @translate
    def titles(self, user_id: str) -> dict[str, str]:
        """session id -> title, for the sessions of `user_id` that have one."""
        raw = self._r.hgetall(self._keys.session_titles(check_id(user_id)))
        return {as_str(k): as_str(v) for k, v in raw.items()}

    def set_title(
        self, user_id: str, session_id: str, title: str, *, only_if_missing: bool = False
    ) -> bool:
        """Name a session (one line, at most MAX_TITLE_CHARS); `only_if_missing`: keep a
        title it already has (the first message names a session once). True when written."""
        check_id(user_id)
        check_id(session_id, "session id")  # refuses a secret too
        words = check_unicode(str(title or ""), "title").split()  # a NUL is refused
        text = mask_text(" ".join(words), lenient(self.pii))
        if not text:
            raise InvalidInputError("A session title cannot be empty.")
        if len(text) > MAX_TITLE_CHARS:
            raise InvalidInputError(f"A session title is limited to {MAX_TITLE_CHARS} characters.")
        key = self._keys.session_titles(user_id)
        pipe = self._r.pipeline(transaction=True)
        if only_if_missing:
            pipe.hsetnx(key, session_id, text)
        else:
            pipe.hset(key, session_id, text)
        # expires with the session's messages (refreshed with them in `write`)
        pipe.hexpire(key, self.ttl_s, session_id)
        written = pipe.execute()[0]
        return bool(written) or not only_if_missing

    def append(self, user_id: str, session_id: str, messages: list[ChatMessage]) -> None:
        pipe = self._r.pipeline(transaction=True)
        self.write(pipe, user_id, session_id, messages)
        pipe.execute()

    def count(self, user_id: str, session_id: str) -> int:
        return int(self._r.llen(self._keys.session(user_id, session_id)))

    def ttl(self, user_id: str, session_id: str) -> int:
        return int(self._r.ttl(self._keys.session(user_id, session_id)))

    def delete_message(self, user_id: str, session_id: str, message_id: str) -> bool:
        key = self._keys.session(user_id, session_id)
        for raw in self._r.lrange(key, 0, -1):
            if json.loads(raw).get("id") == message_id:
                return bool(self._r.lrem(key, 1, as_str(raw)))
        return False

    # --- execution details of the answers ------------------------------------------------
    def save_details(
        self, user_id: str, session_id: str, turn_id: str, details: dict[str, Any], part: str = ""
    ) -> None:
        """Keep `details` (a JSON object, opaque here) for the answer of `turn_id`; `part`
        names a later addition kept beside it (e.g. "extraction"). Expires with the session;
        details of turns whose messages were trimmed away are dropped."""
        check_id(user_id)
        check_id(session_id, "session id")
        if not turn_id or "#" in turn_id or "#" in part:
            raise InvalidInputError("A turn id (without '#') is needed to store its details.")
        # Details quote the message, the reply, tool arguments and recalled memories.
        raw = json.dumps(mask_json(details, self.pii), ensure_ascii=False, allow_nan=False)
        if len(raw) > MAX_DETAILS_CHARS:
            raise InvalidInputError(
                f"Execution details are limited to {MAX_DETAILS_CHARS:,} characters."
            )
        key = self._keys.details(user_id, session_id)
        field = f"{turn_id}#{part}" if part else turn_id
        pipe = self._r.pipeline(transaction=True)
        pipe.hset(key, field, raw)
        pipe.expire(key, self.ttl_s)
        pipe.hlen(key)
        *_, size = pipe.execute()
        if int(size) > 2 * self.max_messages:
            self._trim_details(user_id, session_id)

    def _trim_details(self, user_id: str, session_id: str) -> None:
        """Keep only the details of turns whose messages are still in the list."""
        kept = {
            str(m.metadata.get("turn_id"))
            for m in self.all_messages(user_id, session_id)
            if m.metadata.get("turn_id")
        }
        key = self._keys.details(user_id, session_id)
        gone = [f for f in map(as_str, self._r.hkeys(key)) if f.split("#", 1)[0] not in kept]
        if gone:
            self._r.hdel(key, *gone)

    def details(self, user_id: str, session_id: str) -> dict[str, dict[str, dict[str, Any]]]:
        """turn id -> {part ("" for the details themselves) -> the JSON object stored}.
        Unreadable entries are skipped."""
        check_id(user_id)
        check_id(session_id, "session id")
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for field, raw in self._r.hgetall(self._keys.details(user_id, session_id)).items():
            turn_id, _, part = as_str(field).partition("#")
            try:
                value = json.loads(raw)
            except (TypeError, ValueError):
                continue
            if isinstance(value, dict):
                out.setdefault(turn_id, {})[part] = value
        return out

    # --- raw reads and deletes (forgetting a topic: `memory.admin.forget`) ----------------
    def raw_messages(self, user_id: str, session_id: str) -> list[tuple[str, ChatMessage]]:
        """Every kept message with its stored JSON (what `remove_raw` names)."""
        raws = [as_str(r) for r in self._r.lrange(self._keys.session(user_id, session_id), 0, -1)]
        return list(zip(raws, self.parse(raws), strict=True))

    def remove_raw(
        self, pipe: redis.client.Pipeline, user_id: str, session_id: str, raws: list[str]
    ) -> None:
        """Queue the removal of these stored messages (by value: a message appended
        meanwhile stays where it is)."""
        key = self._keys.session(user_id, session_id)
        for raw in raws:
            pipe.lrem(key, 0, raw)

    def raw_details(self, user_id: str, session_id: str) -> dict[str, str]:
        """field (`turn id` or `turn id#part`) -> stored JSON of the session's turn details."""
        raw = self._r.hgetall(self._keys.details(user_id, session_id))
        return {as_str(k): as_str(v) for k, v in raw.items()}

    def drop_details(
        self, pipe: redis.client.Pipeline, user_id: str, session_id: str, fields: list[str]
    ) -> None:
        if fields:
            pipe.hdel(self._keys.details(user_id, session_id), *fields)

    def clear(self, pipe: redis.client.Pipeline, user_id: str, session_id: str) -> None:
        """Queue the deletion of a session's keys (all in the user's slot); then, after the
        transaction, `clear_shared`."""
        pipe.delete(self._keys.session(user_id, session_id))
        pipe.delete(self._keys.details(user_id, session_id))
        pipe.srem(self._keys.user_sessions(user_id), session_id)
        pipe.hdel(self._keys.session_titles(user_id), session_id)
        # Its summary bookkeeping goes too: no summary can wait for messages that are gone.
        pipe.delete(self._keys.summary_state(user_id, session_id))

    def clear_shared(self, user_id: str, session_ids: list[str]) -> None:
        """What cleared sessions leave in shared data (the store-wide list of summaries
        waiting: another slot, so not in the user's transaction)."""
        if session_ids:
            fields = [digest(user_id, s) for s in session_ids]
            self._r.hdel(self._keys.summaries_pending, *fields)


def _without_nul(text: str) -> str:
    """A reply (the model's, a tool's) is not refused for a NUL it holds: the NULs are removed,
    and the log says so once per message."""
    if "\x00" not in text:
        return text
    log.warning("removed %d NUL character(s) from a stored reply", text.count("\x00"))
    return text.replace("\x00", "")
