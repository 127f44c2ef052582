"""Fixtures shared by every test folder.

A real Redis Stack (the embedded one of `memory.runtime.server`) runs once per test session on a
port with a throw-away data dir; each test gets its own `namespace`, whose keys and indexes are
removed afterwards, so tests never see each other's data. Tests under tests/integration,
tests/app, tests/e2e, tests/lab and tests/benchmarks get the matching marker automatically
(`pytest -m "not e2e"`).
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from benchmarks.common import drop_namespace, free_port
from memory.config import PROJECT_ROOT, Settings
from memory.runtime.server import EmbeddedRedis, pid_alive

pytest_plugins = ["tests.fakes.fixtures"]

TESTS_DIR = Path(__file__).resolve().parent
FOLDER_MARKERS = ("integration", "app", "e2e", "lab", "benchmarks")


#: Rough seconds one test of a folder takes (the order of magnitude, for scheduling only).
SECONDS_PER_TEST = {"e2e": 15.0, "integration": 2.0, "benchmarks": 2.0, "app": 1.5, "lab": 0.5}
UNIT_SECONDS = 0.1
#: Files that take minutes on their own, whatever their number of tests, longest first: their
#: tests' sums in a `make coverage` run's --durations=60 at 8a5d185 (load ~20: the demo walk
#: 2 x 135 s, now one with the model and one a third as long without; the context plan 10 x ~15 s;
#: sign-in ~110 s; the 40-turn session 70 s; the import tests ~50 s since the large one
#: writes 10,000 records, not 100,000).
LONG_FILES: tuple[str, ...] = (
    "tests/e2e/test_demo_script.py",
    "tests/integration/test_context_plan.py",
    "tests/e2e/test_memory_editor.py",
    "tests/e2e/test_sign_in.py",
    "tests/integration/test_real_model_behaviour.py",
    "tests/integration/test_long_operations.py",
)
for _name in LONG_FILES:  # a renamed file must not quietly fall back to the end of the run
    assert (TESTS_DIR.parent / _name).is_file(), f"LONG_FILES names a missing file: {_name}"


def folder_of(item: pytest.Item) -> str | None:
    try:
        return item.path.resolve().relative_to(TESTS_DIR).parts[0]
    except (ValueError, IndexError):
        return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = folder_of(item)
        if folder in FOLDER_MARKERS:
            item.add_marker(folder)
    longest_files_first(items)


def longest_files_first(items: list[pytest.Item]) -> None:
    """Order the files by their likely time, longest first, each file's tests kept together
    and in order. `make test` runs files in this order (`--dist loadfile
    --no-loadscope-reorder`), so the last files handed out are short ones: a long file handed
    out last would leave one worker running alone at the end."""
    cost: dict[str, float] = {}  # in order of first appearance
    for item in items:
        per_test = SECONDS_PER_TEST.get(folder_of(item) or "", UNIT_SECONDS)
        cost[file_of(item)] = cost.get(file_of(item), 0.0) + per_test
    order = {file: i for i, file in enumerate(cost)}

    def key(item: pytest.Item) -> tuple[int, float, int]:
        file = file_of(item)
        long_rank = LONG_FILES.index(file) if file in LONG_FILES else len(LONG_FILES)
        return long_rank, -cost[file], order[file]

    items.sort(key=key)  # stable: a file's tests keep their order


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.fixture(scope="session", autouse=True)
def no_speed_file() -> Iterator[None]:
    """Model speeds stay in each test's process (AGENT_SPEED_FILE empty), also in the apps and
    CLIs tests start: a speed learned by one test never caps another's replies. Tests of the
    file pass their own."""
    before = os.environ.get("AGENT_SPEED_FILE")
    os.environ["AGENT_SPEED_FILE"] = ""
    yield
    if before is None:
        os.environ.pop("AGENT_SPEED_FILE", None)
    else:
        os.environ["AGENT_SPEED_FILE"] = before


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """A Redis Stack for the whole session. Fails (never skips) when it cannot start."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), free_port(), PROJECT_ROOT)
    server.start()  # raises StoreUnavailableError with the server's log tail
    pid = server.status()["pid"]
    try:
        yield server
    finally:
        try:
            server.stop()
        finally:
            if pid is not None and pid_alive(pid):  # stop() failed: end our own process only
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def redis_url(redis_server: EmbeddedRedis) -> str:
    return redis_server.url


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=False)
    yield client
    client.close()


@pytest.fixture
def namespace(redis_client: redis.Redis) -> Iterator[str]:
    """A fresh MEMORY_NAMESPACE; its keys (ns:*, ns_*) and indexes (ns*) are dropped after."""
    ns = "t" + uuid.uuid4().hex[:12]
    yield ns
    drop_namespace(redis_client, ns)


@pytest.fixture
def settings(redis_url: str, namespace: str, tmp_path: Path) -> Settings:
    """Settings pointing at the session's Redis and this test's namespace (no `.env` read)."""
    return Settings(
        _env_file=None,
        redis_url=redis_url,
        memory_namespace=namespace,
        redis_data_dir=tmp_path / "redis",
    )
