"""Daily use: a search that shows the clear match and nothing unrelated (at a laptop's
width), and what a phone lays out otherwise, each at a laptop's and a phone's width: a sidebar
that closes after a page link, the memories table read as rows, chart titles clear of the
toolbar. The OS's dark theme changes colours only
(no width, nothing the server sees): tests/e2e/test_chat_habits.py checks that it applies."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import LAPTOP, PHONE, AppServer
from tests.e2e.st import TIMEOUT_MS, by_key, no_exceptions, open_page, sidebar, wait_idle

#: where the layout is the point, a test runs at both widths; otherwise at a laptop's
BOTH_WIDTHS = pytest.mark.parametrize(
    "screen", [pytest.param(LAPTOP, id="1440"), pytest.param(PHONE, id="390")], indirect=True
)
CHAT = "💬 Chat with memory"
ALLERGY = "I'm allergic to peanuts"


def unique_user() -> str:
    return "d" + uuid.uuid4().hex[:6]


def is_phone(page: Page) -> bool:
    return (page.viewport_size or LAPTOP)["width"] < 768


def sidebar_open(page: Page) -> bool:
    return sidebar(page).get_attribute("data-collapsed") != "true"


def open_sidebar(page: Page) -> Locator:
    """The sidebar, opened by its button on a phone (where it starts closed)."""
    if not sidebar_open(page):
        page.get_by_test_id("stExpandSidebarButton").click()
        expect(sidebar(page)).not_to_have_attribute("data-collapsed", "true")
    return sidebar(page)


@pytest.fixture(scope="module")
def persona(seed) -> str:  # type: ignore[no-untyped-def]
    """The demo persona with an allergy of her own (the demo has none)."""
    from memory.demo import load_demo

    user = unique_user()
    load_demo(seed, user)
    seed.add_episodic(user, ALLERGY, event_type="health_event")
    seed.bookkeeping.drain()
    return user


def test_nut_allergy_shows_the_allergy_at_least_moderate_and_nothing_unrelated(
    screen: Page, app_server: AppServer, persona: str
) -> None:
    page = screen
    open_page(page, f"{app_server.url}/?user={persona}", CHAT)
    bar = open_sidebar(page)
    bar.get_by_role("tab", name="🔎 Search").click()
    field = bar.get_by_role("textbox", name="Search memories")
    field.fill("nut allergy")
    field.press("Enter")
    wait_idle(page)
    results = bar.get_by_role("tabpanel").filter(has_text="No more relevant memories")
    expect(results).to_be_visible(timeout=TIMEOUT_MS)
    found = results.get_by_test_id("stMarkdownContainer").all_inner_texts()
    texts = [t.strip() for t in found if " · " in t]  # a hit: its text, then type · match
    assert len(texts) == 1 and ALLERGY in texts[0], found  # the allergy, and nothing else
    assert "possible match" in texts[0] or "strong match" in texts[0], texts
    no_exceptions(page)


def test_the_memories_page_search_stops_at_what_is_relevant(
    screen: Page, app_server: AppServer, persona: str
) -> None:
    page = screen
    open_page(page, f"{app_server.url}/memories?user={persona}", "🗂️ Memories")
    page.get_by_test_id("stMainBlockContainer").get_by_role("tab", name="🔎 Search").click()
    by_key(page, "s_query").get_by_role("textbox").fill("nut allergy")
    by_key(page, "s_go").get_by_role("button").click()
    wait_idle(page)
    expect(page.get_by_text("1 result for “nut allergy”")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("No more relevant memories")).to_be_visible()
    # a question about nothing she told shows nothing, and says so
    by_key(page, "s_query").get_by_role("textbox").fill("swimming pool opening hours")
    by_key(page, "s_go").get_by_role("button").click()
    wait_idle(page)
    expect(page.get_by_text("No relevant memories as close as asked")).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(page.get_by_text(re.compile(r"results? for “swimming"))).to_have_count(0)
    no_exceptions(page)


@BOTH_WIDTHS
def test_a_page_link_closes_the_sidebar_on_a_phone_only(
    screen: Page, app_server: AppServer
) -> None:
    page = screen
    open_page(page, f"{app_server.url}/?user={unique_user()}", CHAT)
    open_sidebar(page).get_by_role("link", name="Memories").click()
    expect(page.get_by_role("heading", name="🗂️ Memories", level=1)).to_be_visible(
        timeout=TIMEOUT_MS
    )
    wait_idle(page)
    if is_phone(page):
        expect(sidebar(page)).to_have_attribute("data-collapsed", "true")
        box = sidebar(page).bounding_box()
        assert box is not None and box["x"] + box["width"] <= 0, box  # off screen
    else:  # beside the page on a laptop: it stays open
        assert sidebar_open(page)
    no_exceptions(page)


@BOTH_WIDTHS
def test_the_memories_table_reads_as_rows_on_a_phone(
    screen: Page, app_server: AppServer, persona: str
) -> None:
    page = screen
    open_page(page, f"{app_server.url}/memories?user={persona}", "🗂️ Memories")
    rows = by_key(page, "rows_tbl_episodic")
    row = rows.get_by_test_id("stMarkdownContainer").filter(has_text=ALLERGY)
    if is_phone(page):
        expect(row).to_contain_text("Kind: Health event")  # the columns a phone's grid hides
        expect(row).to_contain_text("When: ")
        box = row.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    else:  # a laptop has the grid alone
        expect(rows).to_be_hidden()
    expect(by_key(page, "tbl_episodic")).to_be_visible()
    no_exceptions(page)


@BOTH_WIDTHS
def test_chart_titles_are_clear_of_the_chart_toolbar(
    screen: Page, app_server: AppServer, persona: str
) -> None:
    page = screen
    open_page(page, f"{app_server.url}/stats?user={persona}", "📊 Stats")
    charts = page.locator(".js-plotly-plot")
    expect(charts.first).to_be_visible(timeout=TIMEOUT_MS)
    for i in range(charts.count()):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        chart.hover()
        toolbar = chart.locator(".modebar").bounding_box()
        title = chart.locator(".gtitle").bounding_box()
        assert toolbar is not None and title is not None
        apart = (
            title["y"] >= toolbar["y"] + toolbar["height"]
            or title["x"] + title["width"] <= toolbar["x"]
        )
        assert apart, (i, title, toolbar)
    no_exceptions(page)
