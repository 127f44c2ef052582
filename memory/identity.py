"""Which Redis the memories are on, and what happens when another one answers at its address:
a marker claimed at open (`Keys.store_id`), read where it costs least, `StoreReplacedError`
on a mismatch, writes refused until `python -m memory redis confirm`, and a return without
alarm to a store known to hold the memories (docs/architecture.md, "Limits and errors")."""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

import redis
from redisvl.exceptions import RedisVLError

from memory.boundary import store_error
from memory.errors import MemorySystemError, StoreReplacedError
from memory.keys import Keys

log = logging.getLogger(__name__)


def address_of(client: redis.Redis) -> str:
    """host:port of the client's server (never the URL: it may hold a password)."""
    kw = client.connection_pool.connection_kwargs
    return str(kw.get("path") or f"{kw.get('host', '?')}:{kw.get('port', '?')}")


class StoreIdentity:
    def __init__(
        self, client: redis.Redis, keys: Keys, reopen: Callable[[], list[str]], data_hint: str
    ) -> None:
        """`data_hint`: where the memories' data lies, for the message that names a swap."""
        self._r = client
        self.key, self.unconfirmed_key = keys.store_id, keys.store_unconfirmed
        self._reopen = reopen  # recreates what is missing; says what it recreated
        self._where = address_of(client)
        self._hint = data_hint
        self.token: str | None = None
        #: markers of the stores known to hold the memories (returning to one is no swap)
        self.trusted: set[str] = set()
        self._lock = threading.RLock()  # reopen calls back into the coordinator

    def claim(self, trust: bool = True) -> None:
        """Set the marker if the server has none, and remember the server's value; `trust`:
        it holds the memories, unless it is flagged (then the flag says which stores do)."""
        pipe = self._r.pipeline(transaction=True)
        pipe.set(self.key, secrets.token_hex(16), nx=True)
        pipe.get(self.key)
        self.token = _text(pipe.execute()[1])
        # read apart: the flag's key lies in another hash slot than the marker's
        flag = self._r.get(self.unconfirmed_key)
        if flag is not None:
            self.trusted.update(_memories_on(flag))
        elif trust and self.token is not None:
            self.trusted.add(self.token)

    def request(self, pipe: Any) -> None:
        """Queue the marker's read in a pipeline the caller runs anyway."""
        pipe.get(self.key)

    def verify(self, seen: Any) -> None:
        """Raise (after recovering) when `seen`, the marker read just now, is not ours."""
        if _text(seen) != self.token and not self._returned_to(seen):
            raise self.replaced(seen)

    def check(self) -> None:
        """Before a write (one round trip): nothing lands on a server the memories are not on,
        nor on a replacement nobody confirmed."""
        pipe = self._r.pipeline(transaction=False)
        pipe.get(self.key)
        pipe.get(self.unconfirmed_key)
        seen, unconfirmed = pipe.execute()
        self.verify(seen)
        if unconfirmed is not None:
            raise StoreReplacedError(self._refusal())
        if self.token is not None:
            self.trusted.add(self.token)  # confirmed, maybe by another process

    def explain(self, error: BaseException) -> MemorySystemError | None:
        """For the error boundary: the better error when `error` comes from another store."""
        cause = error.__cause__ if isinstance(error, RedisVLError) and error.__cause__ else error
        if isinstance(cause, redis.ConnectionError | redis.TimeoutError | ConnectionError):
            return None  # down or still loading: no server to compare with
        try:
            seen = self._r.get(self.key)
        except redis.RedisError:
            return None
        if _text(seen) == self.token or self._returned_to(seen):
            return None
        return self.replaced(seen)

    def _returned_to(self, seen: Any) -> bool:
        """Whether `seen` is the marker of a store known to hold the memories (the original
        Redis came back after a stand-in): then it is ours again, and nothing is flagged."""
        token = _text(seen)
        if token is None or token not in self.trusted:
            return False
        with self._lock:
            self.token = token
        log.warning("The Redis at %s is the store the memories are on again.", self._where)
        return True

    def replaced(self, seen: Any) -> MemorySystemError:
        """Claim the server now answering, recreate what is missing there, say what happened."""
        try:
            with self._lock:
                self.claim(trust=False)
                recreated = self._reopen()
                # The flag names the stores that hold the memories: a process that opens on
                # this stand-in then knows them when they come back.
                flag = {"where": self._where, "memories_on": sorted(self.trusted)}
                self._r.set(self.unconfirmed_key, json.dumps(flag))
        except MemorySystemError as e:  # e.g. its indexes hold another embedding model
            return e
        except (redis.RedisError, RedisVLError) as e:
            return store_error(e)
        what = "; ".join(recreated) if recreated else "nothing was missing"
        marker = "has no store marker" if seen is None else "has another store marker"
        return StoreReplacedError(
            f"The Redis at {self._where} is not the one your memories were on: it {marker} "
            "(it was restarted on another data folder, emptied, or REDIS_URL now points at "
            "another server). The memories stored before are not on it. Recreated there: "
            f"{what}. Nothing of this action was saved. To get the earlier memories back, "
            f"check {self._hint}, and start Redis on the data folder that holds them. "
            + self._refusal()
        )

    def _refusal(self) -> str:
        return (
            f"New memories are not stored on the Redis at {self._where} until you confirm it "
            "is the one to use: run `python -m memory redis confirm` (reading works meanwhile)."
        )


def _memories_on(flag: Any) -> list[str]:
    """The store markers a flag names (a flag from before they were named names none)."""
    try:
        tokens = json.loads(_text(flag) or "").get("memories_on", [])
    except (ValueError, AttributeError):
        return []
    return [t for t in tokens if isinstance(t, str)]


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else None if value is None else str(value)
