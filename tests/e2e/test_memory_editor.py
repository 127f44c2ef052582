"""The sidebar's memory editor and a memory's usage, in a real browser at a laptop's and a
phone's width: edit and pin a memory from the sidebar, a delete's Undo shown whole, and a
memory's "used in N answers" rising after an answer that used it, with a link to that answer's
chat. (The OS's dark theme changes colours only: tests/e2e/test_chat_habits.py checks it.)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    grid_cell,
    no_exceptions,
    open_page,
    select_grid_row,
    sidebar,
    wait_idle,
)

CHAT = "💬 Chat with memory"
MEMORIES = "🗂️ Memories"
WIDTHS = [1440, 390]


@pytest.fixture(scope="module")
def warm(browser: Browser, app_server) -> None:  # type: ignore[no-untyped-def]
    """The server's first run loads the embedding model: waited for once, without a limit
    that a busy machine could miss (the tests' own waits are for a warm server)."""
    page = browser.new_page()
    try:
        page.goto(app_server.url)
        heading = page.get_by_role("heading", name=CHAT, level=1)
        expect(heading).to_be_visible(timeout=10 * TIMEOUT_MS)
    finally:
        page.close()


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def look(request: pytest.FixtureRequest, browser: Browser, warm: None) -> Iterator[Page]:
    width = request.param
    context = browser.new_context(viewport={"width": width, "height": 900 if width > 500 else 844})
    try:
        yield context.new_page()
    finally:
        context.close()


def unique_user() -> str:
    return "m" + uuid.uuid4().hex[:6]


def open_sidebar(page: Page) -> Locator:
    """The sidebar, opened first where a narrow screen starts with it closed."""
    bar = sidebar(page)
    if bar.get_attribute("data-collapsed") == "true":
        page.get_by_test_id("stExpandSidebarButton").click()
    expect(bar).to_have_attribute("data-collapsed", "false")
    return bar


def close_sidebar(page: Page) -> None:
    """On a phone the open sidebar covers the page: closed before the page is used."""
    bar = sidebar(page)
    if (
        bar.get_attribute("data-collapsed") == "false"
        and (page.viewport_size or {}).get("width", 1440) < 768
    ):
        bar.hover()
        page.get_by_test_id("stSidebarCollapseButton").click()
        expect(bar).to_have_attribute("data-collapsed", "true")


def recent_tab(page: Page) -> Locator:
    bar = open_sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    return bar.get_by_role("tabpanel", name="🕒 Recent")


def fits(button: Locator) -> bool:
    """The button's label is shown whole (not cut to "U…")."""
    return bool(
        button.evaluate(
            "b => [...b.querySelectorAll('*')].concat([b])"
            ".every(e => e.scrollWidth <= e.clientWidth + 1)"
        )
    )


def test_edit_pin_and_delete_from_the_sidebar(look: Page, app_server, seed) -> None:
    page, user = look, unique_user()
    mem = seed.add_episodic(user, "I run on Sundays", event_type="health_event")
    open_page(page, f"{app_server.url}?user={user}", CHAT)
    recent = recent_tab(page)
    expect(recent.get_by_text("Health event", exact=False)).to_be_visible()  # not health_event
    expect(recent.get_by_text("health_event")).to_have_count(0)

    # edit: the text and the kind, in the row's ✏️
    by_key(recent, f"sb_row_{mem.id}_edit_0").get_by_role("button").click()
    popover = page.get_by_test_id("stPopoverBody")
    popover.get_by_label("Memory").fill("I run on Saturday mornings")
    popover.get_by_role("button", name="Save").click()
    saved = page.get_by_test_id("stToast").filter(has_text="Saved “I run on Saturday")
    expect(saved).to_be_visible()
    wait_idle(page)
    assert seed.get_memory(user, "episodic", mem.id)["text"] == "I run on Saturday mornings"
    expect(popover).not_to_be_visible()  # saved: it closes by itself

    # pin, from the same row
    recent = recent_tab(page)
    by_key(recent, f"sb_row_{mem.id}_pin").get_by_role("button").click()
    # the toast comes from the run after the click (wait_idle alone may return before it)
    pinned = page.get_by_test_id("stToast").filter(has_text="Pinned “I run on Saturday")
    expect(pinned).to_be_visible()
    wait_idle(page)
    expect(recent_tab(page).get_by_text("📌 I run on Saturday mornings")).to_be_visible()
    assert seed.get_memory(user, "episodic", mem.id)["pinned"] is True

    # delete: Undo offered, its label whole
    recent = recent_tab(page)
    by_key(recent, f"sb_row_{mem.id}_del").get_by_role("button").click()
    undo = by_key(page, "undo_delete_sidebar").get_by_role("button")
    expect(undo).to_be_visible()
    expect(undo.get_by_text("Undo", exact=True)).to_be_visible()
    assert fits(undo)
    undo.click()
    expect(page.get_by_test_id("stToast").filter(has_text="Kept “I run on")).to_be_visible()
    wait_idle(page)
    expect(recent_tab(page).get_by_text("📌 I run on Saturday mornings")).to_be_visible()
    assert seed.list_memories(user, "episodic")[1] == 1
    no_exceptions(page)


def test_usage_rises_after_an_answer_and_links_to_its_chat(look: Page, app_server, seed) -> None:
    page, user = look, unique_user()
    text = "I follow a vegetarian diet"
    mem = seed.add_episodic(user, text, event_type="preference")
    question = "What should I cook tonight for my vegetarian diet?"

    open_page(page, f"{app_server.url}/memories?user={user}", MEMORIES)
    close_sidebar(page)
    table = by_key(page, "tbl_episodic")
    table.scroll_into_view_if_needed()  # on a phone the filters come first
    select_grid_row(page, table, text)
    expect(by_key(page, f"usage_{mem.id}")).to_have_text("Used in no answer yet")

    open_page(page, f"{app_server.url}?user={user}", CHAT)
    close_sidebar(page)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    answer = page.get_by_test_id("stChatMessage").filter(has_text=f"You said: {question}")
    # the fake model repeats the question; while the run redraws, the answer being streamed
    # and the one drawn after it may both be on the page for a moment
    expect(answer.last).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    chat = parse_qs(urlparse(page.url).query)["chat"][0]
    assert seed.usage.of(user)[mem.id].answers == 1

    open_page(page, f"{app_server.url}/memories?user={user}", MEMORIES)
    close_sidebar(page)
    table = by_key(page, "tbl_episodic")
    if page.viewport_size and page.viewport_size["width"] > 500:  # the column is on screen
        expect(grid_cell(table, "1 answer, last on")).to_have_count(1)
    table.scroll_into_view_if_needed()  # on a phone the filters come first
    select_grid_row(page, table, text)
    expect(page.get_by_text("Used in 1 answer, last on")).to_be_visible()
    link = page.get_by_role("link", name=question)
    expect(link).to_be_visible()
    href = link.evaluate("a => a.href")
    assert parse_qs(urlparse(href).query) == {"user": [user], "chat": [chat]}
    no_exceptions(page)

    # the link opens that chat, with the question that used the memory
    open_page(page, href, CHAT)
    messages = page.get_by_test_id("stChatMessage")
    expect(messages).to_have_count(2)  # the question and its answer (the fake repeats it)
    expect(messages.first).to_contain_text(question)
    no_exceptions(page)
