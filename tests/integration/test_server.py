"""The embedded Redis Stack: start/reuse, persistence, status, stop, loopback-only binding.

Each test runs its own server on a free port with its own data dir (not the session server).
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT
from memory.errors import StoreUnavailableError
from memory.runtime.server import EmbeddedRedis, pid_alive


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "data", free_port(), PROJECT_ROOT)
    yield server
    pid = server.status()["pid"]
    server.stop()
    if pid is not None and pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


def client(server: EmbeddedRedis) -> redis.Redis:
    return redis.Redis.from_url(server.url, decode_responses=True)


def test_start_twice_reuses_the_running_server(embedded: EmbeddedRedis) -> None:
    url = embedded.start()
    pid = embedded.status()["pid"]
    assert url == f"redis://127.0.0.1:{embedded.port}"

    assert embedded.start() == url
    again = EmbeddedRedis(embedded.data_dir, embedded.port, PROJECT_ROOT)  # e.g. another process
    assert again.start() == url
    assert embedded.status()["pid"] == pid
    assert again.status()["running"]  # `python -m memory redis status`


def test_data_survives_stop_and_start(embedded: EmbeddedRedis) -> None:
    embedded.start()
    with client(embedded) as r:
        r.set("greeting", "hello")
        r.json().set("doc", "$", {"name": "Ada", "tags": ["x"]})
    assert embedded.stop() is True
    assert not embedded.status()["running"]

    embedded.start()
    with client(embedded) as r:
        assert r.get("greeting") == "hello"
        assert r.json().get("doc") == {"name": "Ada", "tags": ["x"]}


def test_data_survives_kill_9_and_stale_pidfile(embedded: EmbeddedRedis) -> None:
    embedded.start()
    with client(embedded) as r:
        r.set("before-crash", "kept")
        r.execute_command("CONFIG", "SET", "appendfsync", "always")
        r.set("fsynced", "yes")
    pid = embedded.status()["pid"]
    os.kill(pid, signal.SIGKILL)
    while pid_alive(pid):
        pass
    assert embedded.pidfile.exists()  # left behind by the crash

    embedded.start()
    assert embedded.status()["pid"] != pid
    with client(embedded) as r:
        assert r.get("fsynced") == "yes"
        assert r.get("before-crash") == "kept"


def test_status_reports_modules_and_location(embedded: EmbeddedRedis) -> None:
    before = embedded.status()
    assert before["running"] is False and before["pid"] is None and before["modules"] == []

    embedded.start()
    status = embedded.status()
    assert status["running"] is True
    assert isinstance(status["pid"], int) and pid_alive(status["pid"])
    assert status["url"] == embedded.url
    assert status["data_dir"] == str(embedded.data_dir)
    assert {"search", "ReJSON"} <= set(status["modules"])
    # Only the two modules we need are loaded (not timeseries, bloom, gears).
    assert set(status["modules"]) == {"search", "ReJSON"}


def test_stop_waits_until_the_process_is_gone(embedded: EmbeddedRedis) -> None:
    embedded.start()
    pid = embedded.status()["pid"]
    assert embedded.stop() is True
    assert not pid_alive(pid)
    assert not embedded.pidfile.exists()
    assert embedded.status()["running"] is False
    assert embedded.stop() is False  # no-op when not running
    with pytest.raises(redis.ConnectionError):
        client(embedded).ping()


def test_binds_loopback_only_with_aof(embedded: EmbeddedRedis) -> None:
    embedded.start()
    with client(embedded) as r:
        assert r.config_get("bind")["bind"] == "127.0.0.1"
        assert r.config_get("protected-mode")["protected-mode"] == "yes"
        assert r.config_get("appendonly")["appendonly"] == "yes"
        assert r.config_get("save")["save"] == ""
        assert Path(r.config_get("dir")["dir"]) == embedded.data_dir


def test_a_hash_with_a_vector_stays_compact(embedded: EmbeddedRedis) -> None:
    embedded.start()
    with client(embedded) as r:
        r.hset("m", mapping={"embedding": b"\x00" * 1536, "description": "I like tea"})
        assert r.object("encoding", "m") == "listpack"


def test_port_taken_by_another_program_is_reported(embedded: EmbeddedRedis) -> None:
    with socket.socket() as other:
        # as servers do: free_port left the port in TIME_WAIT, which only SO_REUSEADDR binds
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", embedded.port))
        other.listen()
        with pytest.raises(StoreUnavailableError, match="already used by another process"):
            embedded.start()
    assert embedded.status()["running"] is False
