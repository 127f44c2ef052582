"""Follow-ups: the shared-data writes that follow a user's transaction (facts they added, the user
list, summaries waiting, the embedding cache), noted in that transaction (`Keys.followups`) and
run by whoever finds the note: the writer right after, or the next open (docs/maintenance.md)."""

from __future__ import annotations

import base64
import logging
from typing import Annotated, Any, Literal

import numpy as np
import redis
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer
from redisvl.exceptions import RedisVLError
from ulid import ULID

from memory.embeddings import CachedEmbedder
from memory.errors import StoreUnavailableError
from memory.models import SemanticFact
from memory.replies import as_str
from memory.stores import Stores

log = logging.getLogger(__name__)


def _vector(value: Any) -> np.ndarray:
    if isinstance(value, str):  # as stored: base64 of float32 bytes
        return np.frombuffer(base64.b64decode(value), dtype=np.float32).copy()
    return np.asarray(value, dtype=np.float32)


Vector = Annotated[
    np.ndarray,
    BeforeValidator(_vector),
    PlainSerializer(lambda v: base64.b64encode(_vector(v).tobytes()).decode("ascii")),
]


class FollowUp(BaseModel):
    """What follows one transaction of `user_id` (`what`: "import", "purge"...)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    what: str
    user_id: str
    delete_facts: list[str] = Field(default_factory=list)
    write_facts: list[tuple[SemanticFact, Vector]] = Field(default_factory=list)
    #: sessions cleared in the transaction: their entries in the summaries-waiting list go
    cleared_sessions: list[str] = Field(default_factory=list)
    user_list: Literal["add", "remove", ""] = ""
    #: texts whose cached embeddings go
    forget_texts: list[str] = Field(default_factory=list)
    id: str = Field(default_factory=lambda: str(ULID()))

    def describe(self) -> str:
        parts = []
        if self.write_facts:
            parts.append(f"{len(self.write_facts)} facts written")
        if self.delete_facts:
            parts.append(f"{len(self.delete_facts)} facts removed")
        if self.user_list == "add":
            parts.append("the user listed")
        elif self.user_list == "remove":
            parts.append("the user taken off the user list")
        if self.forget_texts:
            parts.append(f"{len(self.forget_texts)} cached embeddings dropped")
        return ", ".join(parts) or "nothing left to do"


def register(stores: Stores, user_id: str) -> None:
    """Before the transaction that queues a note: where the next open looks for it."""
    stores.client.sadd(stores.keys.followups_pending, user_id)


def queue(pipe: redis.client.Pipeline, stores: Stores, note: FollowUp) -> None:
    """The note, on the user's transaction: it exists exactly when the transaction ran."""
    pipe.hset(stores.keys.followups(note.user_id), note.id, note.model_dump_json())


def finish_followups(stores: Stores, embedder: CachedEmbedder, note: FollowUp) -> None:
    """Run a note's steps (each idempotent), then delete it."""
    keys = stores.keys
    pipe = stores.client.pipeline(transaction=False)
    stores.semantic.delete_many(pipe, note.delete_facts)
    for fact, vec in note.write_facts:  # after the deletions: a file's fact may reuse an old id
        stores.semantic.write(pipe, fact, vec)
    if note.user_list == "add":
        pipe.sadd(keys.users, note.user_id)
    elif note.user_list == "remove":
        pipe.srem(keys.users, note.user_id)
    pipe.execute()
    stores.short_term.clear_shared(note.user_id, note.cleared_sessions)
    if note.forget_texts:
        embedder.forget(list(dict.fromkeys(note.forget_texts)))
    stores.client.hdel(keys.followups(note.user_id), note.id)
    if not stores.client.exists(keys.followups(note.user_id)):
        stores.client.srem(keys.followups_pending, note.user_id)


def finish_pending(stores: Stores, embedder: CachedEmbedder) -> list[str]:
    """At open: finish the notes a stopped process left; one line per note finished."""
    keys = stores.keys
    lines: list[str] = []
    for user in sorted(as_str(u) for u in stores.client.smembers(keys.followups_pending)):
        raws = stores.client.hgetall(keys.followups(user))
        if not raws:  # the transaction did not run, or its process finished the note
            stores.client.srem(keys.followups_pending, user)
            continue
        for raw in raws.values():
            note = FollowUp.model_validate_json(raw)
            finish_followups(stores, embedder, note)
            line = (
                f"finished an interrupted {note.what} of user {note.user_id!r}: {note.describe()}"
            )
            log.warning(line)
            lines.append(line)
    return lines


def unfinished(done: str, note: FollowUp, error: BaseException) -> StoreUnavailableError:
    """The error when a note could not be finished right after its transaction."""
    return StoreUnavailableError(
        f"The {note.what} of user {note.user_id!r} is done: {done}, but what follows in "
        f"shared data ({note.describe()}) was not finished (Redis: {_cause(error)}). It is "
        "finished by the next command or app start that reaches this Redis; nothing needs to "
        "be repeated."
    )


def run_after(stores: Stores, embedder: CachedEmbedder, note: FollowUp, done: str) -> None:
    """`finish_followups` right after the note's transaction; a driver error becomes
    `unfinished` (`done`: what the transaction did)."""
    try:
        finish_followups(stores, embedder, note)
    except (redis.RedisError, RedisVLError, ConnectionError) as e:
        raise unfinished(done, note, e) from e


def _cause(error: BaseException) -> str:
    cause = error.__cause__ if isinstance(error, RedisVLError) and error.__cause__ else error
    return str(cause) or type(cause).__name__
