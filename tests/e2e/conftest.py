"""Browser tests: Debian's Chromium driven by Playwright against a real `streamlit run`.

    shared_fake_ollama      the fake Ollama HTTP server (thread in this process), for the whole run
    app_server       one `streamlit run app.py` subprocess per test module, on a free port of
                     127.0.0.1, with REDIS_URL = the session's Redis Stack, its own
                     MEMORY_NAMESPACE and OLLAMA_HOST = the fake; stopped by its PID
    fresh_server     a factory for servers that no browser has opened yet (deep-link tests)
    seed             a MemoryCoordinator on the same Redis + namespace, to arrange data
    failure_watch    (autouse) every test fails when a page it opened showed an exception box
                     or a "… failed unexpectedly" message, whatever the test checks

Nothing is skipped: if Chromium, Redis or Streamlit cannot start, the tests fail and say why.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from playwright.sync_api import Browser, Page, expect

from benchmarks.common import drop_namespace
from memory.config import PROJECT_ROOT, Settings
from tests.e2e.app_process import CHROMIUM, CHROMIUM_ARGS, AppServer, start_app
from tests.e2e.failures import FailureWatch, install
from tests.fakes.fake_ollama import FakeOllama

SCREENSHOTS = PROJECT_ROOT / "test-artifacts" / "screenshots"

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


# --- failures shown on a page --------------------------------------------------------------

WATCH_KEY = pytest.StashKey[FailureWatch]()


@pytest.fixture(autouse=True)
def failure_watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> FailureWatch:
    """Watch every browser context the test creates (`page`, `browser.new_context`, …)."""
    watch = FailureWatch()
    install(Browser, watch, monkeypatch.setattr)
    request.node.stash[WATCH_KEY] = watch
    return watch


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After the test body, before its fixtures close the pages: a failure shown fails it."""
    result = yield
    watch = item.stash.get(WATCH_KEY, None)
    failures = watch.failures() if watch is not None else []
    if failures:
        pytest.fail("a page showed a failure:\n" + "\n".join(failures), pytrace=False)
    return result


@pytest.fixture(autouse=True)
def no_reply_left_queued(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that stops before the app takes its queued reply must not hand that reply to the
    next test on the shared fake (a failed re-answer once made test_secrets' echo a meal plan)."""
    yield
    if "shared_fake_ollama" in request.fixturenames:
        request.getfixturevalue("shared_fake_ollama").reset()


# --- the Streamlit server ------------------------------------------------------------------


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


#: The two window sizes pages are checked at; `screen` opens a page at one (a phone: touch).
LAPTOP = {"width": 1440, "height": 1000}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def screen(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    size = getattr(request, "param", LAPTOP)
    phone = size is PHONE
    context = browser.new_context(viewport=size, is_mobile=phone, has_touch=phone)
    try:
        yield context.new_page()
    finally:
        context.close()
