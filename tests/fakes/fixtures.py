"""Pytest fixtures for the fake Ollama server and the agent's fakes.

Enable them for the whole suite with, in tests/conftest.py:

    pytest_plugins = ["tests.fakes.fixtures"]

Fixtures:
    fake_ollama       a started FakeOllama (127.0.0.1, free port), stopped after the test
    closed_ollama_url an http://127.0.0.1:PORT where nothing listens (Ollama "down")
    fake_coordinator  an in-memory FakeCoordinator (agent unit tests)
    wellness_today    the fixed "today" of the synthetic wellness data in tests
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import date

import pytest

from tests.fakes.fake_coordinator import FakeCoordinator
from tests.fakes.fake_ollama import FakeOllama


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    with FakeOllama() as fake:
        yield fake


def _closed_port() -> int:
    # Bind, read the port, close: nothing listens there afterwards (connection refused).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def closed_ollama_url() -> str:
    return f"http://127.0.0.1:{_closed_port()}"


@pytest.fixture
def fake_coordinator() -> FakeCoordinator:
    return FakeCoordinator()


@pytest.fixture
def wellness_today() -> date:
    return date(2026, 11, 20)
