"""People's words on every screen: the demo persona's pages walked in a real browser (a chat
with the fake model, which calls two tools, and one without a model; Memories, every tab;
Stats, every section opened), at a laptop's and a phone's width. A page fails on any
snake_case name, id, bracketed kind, engineering word or raw score in its visible text
(tests/not_words.py), the phone's rows included. Exempt, as data shown exactly as sent: the
memory block in an answer's *Prompt* tab (its code box; the list above it is read) and a tool
call's arguments and result. Help texts appear only on hover:
tests/app/test_plain_words.py reads every one of them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from benchmarks.common import free_port
from memory import DEMO_USER, load_demo
from tests.e2e.app_process import AppServer, start_app
from tests.e2e.st import TIMEOUT_MS, screenshot, sidebar, wait_idle
from tests.fakes.fake_ollama import FakeOllama
from tests.not_words import internal_words
from ui.phone import NARROW_PX

WIDTHS = {"laptop": 1440, "phone": 390}

#: The page's visible text, without what is shown exactly as sent (module docstring).
_VISIBLE_TEXT = """() => {
    const exact = [...document.querySelectorAll('[role=tabpanel]')].filter(panel => {
        const tab = document.getElementById(panel.getAttribute('aria-labelledby') || '');
        return tab && tab.innerText.trim() === 'Prompt';
    }).flatMap(panel => [...panel.querySelectorAll('[data-testid=stCode]')]);
    exact.push(...document.querySelectorAll('[data-testid=stJson]'));
    // icons are drawn from words of an icon font ("expand_more"): a picture, not text
    exact.push(...document.querySelectorAll('[data-testid=stIconMaterial]'));
    const kept = exact.map(e => [e, e.style.display]);
    kept.forEach(([e]) => { e.style.display = 'none'; });
    const text = document.body.innerText;
    kept.forEach(([e, display]) => { e.style.display = display; });
    return text;
}"""


#: How long a page of the persona may take to open (a bound: the demo's Stats read a lot,
#: on a machine shared by several test runs)
OPEN_MS = 120_000


def open_page(page: Page, url: str, heading: str) -> None:
    page.goto(url)
    expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible(timeout=OPEN_MS)
    wait_idle(page, OPEN_MS)


class Walk:
    """Reads each screen of a walk and keeps what it found that is no word."""

    def __init__(self, page: Page) -> None:
        self.page, self.found = page, dict[str, list[str]]()

    def read(self, where: str) -> None:
        wait_idle(self.page)
        bad = internal_words(self.page.evaluate(_VISIBLE_TEXT))
        if bad:
            self.found[where] = sorted(set(bad))

    def tabs(self, where: str, scope: object = None) -> None:
        """Every tab of the page (or of `scope`), each read once opened."""
        root = scope or self.page
        tabs = root.get_by_role("tab")  # type: ignore[attr-defined]
        for i in range(tabs.count()):
            tab = tabs.nth(i)
            name = tab.inner_text().strip()
            tab.click()
            self.read(f"{where} → {name}")


def test_the_checker_finds_internal_names() -> None:
    text = (
        "[health_event] Sprained ankle · search_workouts → compare_periods · "
        "Session: s-20261117-1845-demo · 01JD3Z6Q4W8X9Y2B5C7E1F0G3H · id 9f3a61c2e0 · "
        "p50 (solid) and p95 (dotted), 1min buckets · Importance: 0.70 · Tags: running, demo · "
        "about 150 tokens · Context: LLM extraction · Redis hit · Miss (model ran) · id 3fa1c2 · "
        "hit rate · Typical recall time 12 ms · Avg time (ms) · extraction so far: 16 skipped · "
        "checked 10 episodic, 3 semantic, 1 procedure · Procedural · (or set OLLAMA_HOST to it) · "
        "Band · Type the user id to confirm"
    )
    found = " ".join(internal_words(text))
    for name in ("health_event", "search_workouts", "s-20261117-1845", "01JD3Z6Q4W8X9Y2B5C7E1F0G3H",
                 "9f3a61c2e0", "[health_event]", "'Session'", "'p50'", "'p95'", "1min buckets",
                 "Importance: 0.70", "running, demo", "'150 tokens'", "'LLM'", "'Redis'",
                 "(model ran)", "'3fa1c2'", "'hit rate'", "'12 ms'", "'(ms)'",
                 "'16 skipped'", "'episodic'", "'semantic'", "'procedure'", "'Procedural'",
                 "'OLLAMA_HOST'", "'Band'", "'user id'", "'Avg'"):  # fmt: skip
        assert name in found, name
    assert internal_words("Health event: Sprained ankle · strong match · 26 Nov 2026") == []
    assert internal_words("Importance: high · Tags: running, race · typical, per minute") == []
    assert internal_words("Typical recall time: under a tenth of a second · 2.4 seconds") == []
    said = "looked through 10 things about you, 3 general facts, 1 way of working · About you"
    assert internal_words(f"{said} · General knowledge · How relevant") == []
    assert internal_words("Chat model qwen2 · 7.6B · Q4_K_M · uses tools") == []  # its file


@pytest.fixture(scope="module")
def demo(seed) -> str:  # type: ignore[no-untyped-def]
    """The persona loaded once in the module's namespace; its chat with the most messages."""
    load_demo(seed, DEMO_USER, replace=True)
    chats = seed.short_term.sessions(DEMO_USER)
    return max(chats, key=lambda s: len(seed.recent_messages(DEMO_USER, s, n=200)))


@pytest.fixture(scope="module")
def offline_server(
    redis_url: str, e2e_namespace: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AppServer]:
    """The same store with no model where Ollama would be (memory-only answers)."""
    server = start_app(
        redis_url,
        e2e_namespace,
        f"http://127.0.0.1:{free_port()}",
        tmp_path_factory.mktemp("offline"),
    )
    try:
        yield server
    finally:
        server.stop()


def ask(page: Page, text: str) -> None:
    before = page.get_by_test_id("stChatMessage").count()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")
    expect(page.get_by_test_id("stChatMessage")).to_have_count(before + 2, timeout=TIMEOUT_MS)
    wait_idle(page)


def read_answer(walk: Walk, where: str) -> None:
    """The last answer, its status box and every tab of its details."""
    answer = walk.page.get_by_test_id("stChatMessage").last
    answer.get_by_test_id("stExpander").get_by_text("Execution details").click()
    status = answer.get_by_test_id("stExpander").first  # the status box, above the details
    status.locator("summary").click()
    walk.tabs(where, answer)


@pytest.mark.parametrize("width", list(WIDTHS))
def test_every_screen_of_the_demo_reads_in_words(
    page: Page,
    app_server: AppServer,
    offline_server: AppServer,
    demo: str,
    shared_fake_ollama: FakeOllama,
    screenshots_dir: Path,
    width: str,
) -> None:
    page.set_viewport_size({"width": WIDTHS[width], "height": 1000})
    walk = Walk(page)
    user = f"user={DEMO_USER}&chat={demo}"

    # --- chat with the model: two tools, then the answer -----------------------------------
    open_page(page, f"{app_server.url}/?{user}", "💬 Chat with memory")
    walk.read("chat")
    if WIDTHS[width] > NARROW_PX:  # the sidebar is open beside the page
        walk.tabs("sidebar", sidebar(page))
    shared_fake_ollama.queue_tool_calls(
        [("search_workouts", {"days": 14}), ("compare_periods", {"metric": "steps"})]
    )
    shared_fake_ollama.queue_reply("Three easy runs this week, the long one on Sunday.")
    ask(page, "Plan my running this week")
    read_answer(walk, "chat with a model")

    # --- without a model ------------------------------------------------------------------
    open_page(page, f"{offline_server.url}/?{user}", "💬 Chat with memory")
    ask(page, "What is my goal for the race?")
    walk.read("chat without a model")
    read_answer(walk, "chat without a model")
    screenshot(page, screenshots_dir / f"plain-words-chat-{width}.png", height=2400)

    # --- Memories: every tab, a search among them -----------------------------------------
    open_page(page, f"{app_server.url}/memories?{user}", "🗂️ Memories")
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("tab", name="Search").click()
    query = main.get_by_role("textbox", name="Search", exact=True)
    query.fill("running")
    query.press("Enter")
    wait_idle(page)
    expect(main.get_by_text(re.compile(r"\d+ results? for"))).to_be_visible()
    screenshot(page, screenshots_dir / f"plain-words-search-{width}.png")  # types shown whole
    walk.tabs("Memories", main)
    main.get_by_role("tab", name=re.compile("Ways of working")).click()  # tools in words
    screenshot(page, screenshots_dir / f"plain-words-memories-{width}.png")

    # --- Stats: every section opened ------------------------------------------------------
    open_page(page, f"{app_server.url}/stats?{user}", "📊 Stats")
    shown = page if WIDTHS[width] > NARROW_PX else page.get_by_test_id("stMainBlockContainer")
    for i in range(shown.get_by_test_id("stExpander").count()):  # the sidebar's too, if open
        shown.get_by_test_id("stExpander").nth(i).locator("summary").click()
        wait_idle(page)
    walk.read("Stats")

    assert walk.found == {}, "internal names on screen:\n" + "\n".join(
        f"{where}: {', '.join(bad)}" for where, bad in walk.found.items()
    )
