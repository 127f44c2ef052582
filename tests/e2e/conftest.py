"""Browser tests: Debian's Chromium driven by Playwright against a real `streamlit run`.

    shared_fake_ollama      the fake Ollama HTTP server (thread in this process), for the whole run
    app_server       one `streamlit run app.py` subprocess per test module, on a free port of
                     127.0.0.1, with REDIS_URL = the session's Redis Stack, its own
                     MEMORY_NAMESPACE and OLLAMA_HOST = the fake; stopped by its PID
    fresh_server     a factory for servers that no browser has opened yet (deep-link tests)
    seed             a MemoryCoordinator on the same Redis + namespace, to arrange data

Nothing is skipped: if Chromium, Redis or Streamlit cannot start, the tests fail and say why.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from playwright.sync_api import expect

from memory.bench.pages import CHROMIUM, CHROMIUM_ARGS  # one Chromium set-up for bench and tests
from memory.config import PROJECT_ROOT, Settings
from memory.runtime.connection import drop_namespace
from memory.runtime.server import free_port
from tests.fakes.fake_ollama import FakeOllama

SCREENSHOTS = PROJECT_ROOT / "test-artifacts" / "screenshots"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0

# How long an expectation waits for the page (a bound, not a measurement): Playwright's 5 s
# default is short on a shared machine whose load runs high while a page reruns.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    assert Path(CHROMIUM).exists(), (
        f"{CHROMIUM} is missing: run `make setup-test` (apt-get install chromium "
        "fonts-noto-color-emoji)"
    )
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "args": CHROMIUM_ARGS,
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    return {**browser_context_args, "viewport": {"width": 1440, "height": 1000}}


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


# --- the Streamlit server ------------------------------------------------------------------


@dataclass
class AppServer:
    """One `streamlit run app.py` process."""

    url: str
    namespace: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop our own process by its PID: SIGTERM, then SIGKILL if it hangs."""
        if self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT_S)


def start_app(
    redis_url: str,
    namespace: str,
    ollama_url: str,
    log_dir: Path,
    *,
    env_extra: dict[str, str] | None = None,
    args_extra: list[str] | None = None,
) -> AppServer:
    """`env_extra`/`args_extra`: e.g. AUTH_MODE=oidc and `--secrets.files` of the test's own
    secrets file (tests/e2e/test_sign_in.py)."""
    port = free_port()
    log_path = log_dir / f"streamlit-{port}.log"
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "MEMORY_NAMESPACE": namespace,
        "OLLAMA_HOST": ollama_url,
        "PYTHONUNBUFFERED": "1",
        **(env_extra or {}),
    }
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        *(args_extra or []),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=log)
    server = AppServer(f"http://127.0.0.1:{port}", namespace, proc, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(
                f"streamlit did not answer in {START_TIMEOUT_S}s:\n{server.log_tail()}"
            )
        time.sleep(0.1)


@pytest.fixture(scope="module")
def e2e_namespace(redis_url: str) -> Iterator[str]:
    ns = "e" + uuid.uuid4().hex[:12]
    yield ns
    client = redis.Redis.from_url(redis_url)
    try:
        drop_namespace(client, ns)
    finally:
        client.close()


@pytest.fixture(scope="module")
def app_server(
    redis_url: str, e2e_namespace: str, shared_fake_ollama: FakeOllama, tmp_path_factory
) -> Iterator[AppServer]:
    server = start_app(
        redis_url, e2e_namespace, shared_fake_ollama.url, tmp_path_factory.mktemp("app")
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh_server(
    redis_url: str, e2e_namespace: str, shared_fake_ollama: FakeOllama, tmp_path: Path
) -> Iterator[Callable[..., AppServer]]:
    """Start servers no browser has opened yet (each one is stopped after the test);
    `fresh_server(ollama_url)` points one at another Ollama (e.g. nothing, for memory-only)."""
    started: list[AppServer] = []

    def make(ollama_url: str | None = None) -> AppServer:
        server = start_app(redis_url, e2e_namespace, ollama_url or shared_fake_ollama.url, tmp_path)
        started.append(server)
        return server

    yield make
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def seed(redis_url: str, e2e_namespace: str, shared_fake_ollama: FakeOllama):  # type: ignore[no-untyped-def]
    """A coordinator on the app's Redis and namespace, to arrange data for a test."""
    from memory.coordinator import MemoryCoordinator

    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        redis_url=redis_url,
        memory_namespace=e2e_namespace,
        ollama_host=shared_fake_ollama.url,
    )
    coordinator = MemoryCoordinator.from_settings(settings)
    yield coordinator
    coordinator.close()
