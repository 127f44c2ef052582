"""A Redis that is still loading its data answers LOADING: the user is told to wait, not that
Redis is unreachable (which would send them to start a server that already runs).

The waits are shortened to one try: the point is the message once waiting has run out."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import redis

from memory.config import PROJECT_ROOT, Settings
from memory.errors import StoreUnavailableError
from memory.runtime import connection, server
from memory.runtime.server import EmbeddedRedis


def _loading(*_args: Any, **_kwargs: Any) -> Any:
    raise redis.BusyLoadingError("Redis is loading the dataset in memory")


def assert_says_wait(message: str) -> None:
    assert "still loading its data" in message
    assert "try again" in message.lower()
    assert "not reachable" not in message and "Cannot reach" not in message


def test_connect_to_a_loading_redis_says_it_is_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "LOADING_TIMEOUT_S", 0.0)
    monkeypatch.setattr(redis.Redis, "ping", _loading)
    settings = Settings(_env_file=None, redis_url="redis://127.0.0.1:6390")
    with pytest.raises(StoreUnavailableError) as err:
        connection.connect(settings)
    assert_says_wait(str(err.value))


class LoadingClient:
    def __enter__(self) -> LoadingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    ping = staticmethod(_loading)


def test_the_embedded_server_still_loading_says_to_wait(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(server, "READY_TIMEOUT_S", 0.0)
    embedded = EmbeddedRedis(tmp_path, 6390, PROJECT_ROOT)
    monkeypatch.setattr(embedded, "_client", LoadingClient)
    with pytest.raises(StoreUnavailableError) as err:
        embedded._wait_ready(os.getpid())  # a live pid: "ours", still loading
    assert_says_wait(str(err.value))
