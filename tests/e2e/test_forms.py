"""Forms filled the way people fill them, in a real browser: the sidebar's add (type, click
another field, type, click Remember) read back from the store with its tags and kind; a ticked
row of the Memories page that stays on its memory when a filter changes the rows; and the
watch that fails every browser test whose page showed a failure (tests/e2e/failures.py)."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from memory.writing import classify_event_type
from tests.e2e.failures import FailureWatch
from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    grid_cell,
    open_page,
    select_grid_row,
    sidebar,
    wait_idle,
)

CHAT = "💬 Chat with memory"
MEMORIES = "🗂️ Memories"


@pytest.fixture(scope="module", autouse=True)
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


def unique_user() -> str:
    return "f" + uuid.uuid4().hex[:6]


def remember(page: Page, text: str, tags: str, kind: str | None = None) -> None:
    """Type the memory, click the Tags field, type the tags, maybe pick a kind, click Remember:
    each field is left by a click elsewhere, so the page reruns between them."""
    bar = sidebar(page)
    bar.get_by_label("What should be remembered?").click()
    page.keyboard.type(text)
    bar.get_by_label("Tags (optional)").click()
    page.keyboard.type(tags)
    if kind is not None:
        for attempt in range(3):  # leaving Tags reruns the page, which may close the list
            by_key(bar, "sb_add_kind").click()
            try:
                page.get_by_role("option", name=kind, exact=True).click(timeout=5_000)
                break
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
                wait_idle(page)
    bar.get_by_role("button", name="Remember").click()
    # this memory's own toast: an earlier add's may still be showing
    expect(page.get_by_test_id("stToast").filter(has_text=f"Remembered: {text}")).to_be_visible()
    wait_idle(page)


def stored(seed, user: str) -> dict[str, tuple[list[str], str]]:  # type: ignore[no-untyped-def]
    rows, _ = seed.list_memories(user, "episodic")
    return {r["text"]: (list(r["tags"]), r["event_type"]) for r in rows}


def test_the_sidebar_add_as_people_fill_it(page: Page, app_server, seed) -> None:  # type: ignore[no-untyped-def]
    user = unique_user()
    open_page(page, f"{app_server.url}?user={user}", CHAT)
    remember(page, "I am lactose intolerant", "food")
    guessed = classify_event_type("I am lactose intolerant", ["food"]).value
    assert stored(seed, user) == {"I am lactose intolerant": (["food"], guessed)}

    # the guess is shown beside the Kind box, whose own label stays put
    bar = sidebar(page)
    bar.get_by_label("What should be remembered?").click()
    page.keyboard.type("I want to swim 2 km without stopping")
    bar.get_by_label("Tags (optional)").click()
    expect(bar.get_by_text("✨ Guessed kind:")).to_be_visible()
    expect(bar.get_by_role("combobox", name="Kind")).to_have_value("✨ Guess from the text")
    bar.get_by_label("What should be remembered?").fill("")
    wait_idle(page)

    remember(page, "I want to swim 2 km without stopping", "swimming", kind="Milestone")
    assert stored(seed, user)["I want to swim 2 km without stopping"] == (
        ["swimming"],
        "milestone",
    )


def test_a_ticked_row_stays_on_its_memory_when_a_filter_changes(
    page: Page, app_server, seed
) -> None:  # type: ignore[no-untyped-def]
    user = unique_user()
    short = "Prefers short answers with bullet points"
    ankle = "Left ankle a bit stiff after the long run"
    older = seed.add_episodic(user, short, event_type="preference").timestamp
    seed.add_episodic(user, ankle, event_type="health_event", timestamp_ms=older + 60_000)
    open_page(page, f"{app_server.url}/memories?user={user}", MEMORIES)
    table = by_key(page, "tbl_episodic")
    select_grid_row(page, table, ankle)  # the newest: the first row
    expect(by_key(page, "selected_episodic")).to_contain_text(f"Selected: “{ankle}”")
    expect(page.get_by_role("button", name="Delete 1 selected")).to_be_visible()

    # one click on a pill: no list is left open over the table (a multiselect's stayed)
    by_key(page, "f_ep_kinds").get_by_role("button", name="Preference", exact=True).click()
    wait_idle(page)
    expect(grid_cell(table, short)).to_have_count(1)  # now the first row, and not ticked
    expect(page.get_by_role("button", name="Delete 1 selected")).to_have_count(0)
    expect(page.get_by_text("✏️ Edit memory")).to_have_count(0)
    assert seed.list_memories(user, "episodic")[1] == 2


def test_a_failure_shown_on_a_page_is_caught(page: Page, failure_watch: FailureWatch) -> None:
    """The watch sees a failure that comes and goes (a toast), not only one left on the page."""
    page.route(
        "http://watched.test/", lambda r: r.fulfill(body="<p>ok</p>", content_type="text/html")
    )
    page.goto("http://watched.test/")
    page.evaluate(
        """() => {
          const toast = document.createElement('div');
          toast.textContent = 'Adding the memory failed unexpectedly (ValueError: x).';
          document.body.append(toast);
          setTimeout(() => toast.remove(), 300);
        }"""
    )
    expect(page.get_by_text("failed unexpectedly")).to_have_count(0)  # gone again
    assert page.get_by_text("ok").count() == 1  # a call that lets the page's report through
    failures = failure_watch.failures()
    assert len(failures) == 1 and "failed unexpectedly (ValueError: x)" in failures[0]

    page.evaluate(
        """() => { const box = document.createElement('div');
                   box.dataset.testid = 'stException'; box.textContent = 'ValueError';
                   document.body.append(box); }"""
    )
    assert any("exception box: ValueError" in f for f in failure_watch.failures())
    page.goto("http://watched.test/")  # the box goes with the page
    # both seen, and cleared after the page went: a report of the box could land after a clear
    # made before it (clean-clone CI, a loaded runner), and the teardown failed on it
    failure_watch.found.clear()
