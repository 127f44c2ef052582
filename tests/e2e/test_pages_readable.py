"""Memories and Stats pages a reader can use, in a real browser at a laptop's
width: tables whose text wraps with every column reachable, the editor titled by the memory's
words, "Never expires" disabling the date, a saved row that never joins the next bulk delete,
and Stats led by three plain tiles with no empty charts."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import Page, expect

from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    grid_cell,
    no_exceptions,
    open_page,
    select_grid_row,
    wait_idle,
)

LAPTOP = {"width": 1280, "height": 900}
LONG = (
    "Prefers trail running at dawn along the river because the light is soft, the paths are "
    "quiet and the air is cool; avoids the city loop on weekends entirely"
)


def unique_user() -> str:
    return "u" + uuid.uuid4().hex[:6]


def open_memories(page: Page, url: str, user: str) -> None:
    page.set_viewport_size(LAPTOP)
    open_page(page, f"{url}/memories?user={user}", "🗂️ Memories")


def test_episodic_table_wraps_text_and_shows_expires_without_scrolling(
    page: Page, app_server, seed
) -> None:
    user = unique_user()
    seed.add_episodic(user, LONG, event_type="preference")
    seed.add_episodic(user, "Sleep 7.5 hours on weeknights", event_type="goal")
    open_memories(page, app_server.url, user)
    table = by_key(page, "tbl_episodic")
    expect(grid_cell(table, LONG)).to_have_count(1)
    # The grid puts in its accessible table only the columns it draws: Expires and the
    # column after it are there, so Expires is whole on screen without a horizontal scroll.
    headers = table.locator("th").all_inner_texts()
    assert "Expires" in headers, headers
    assert headers[headers.index("Expires") + 1 :], f"Expires is the last column drawn: {headers}"
    # Rows taller than 4rem are where the grid wraps text at word ends instead of cutting it.
    inner = table.locator(".dvn-scroll-inner").first.evaluate("e => e.scrollHeight")
    assert (inner - 35) / 2 > 64, f"rows of {(inner - 35) / 2:.0f} px hold one line of text"
    no_exceptions(page)


def test_editor_is_titled_by_the_text_and_never_expires_disables_the_date(
    page: Page, app_server, seed
) -> None:
    user = unique_user()
    memory = seed.add_episodic(user, LONG, event_type="preference")
    open_memories(page, app_server.url, user)
    select_grid_row(page, by_key(page, "tbl_episodic"), "Prefers trail running")
    editor = by_key(page, f"ed_ep_{memory.id}_box")
    expect(page.get_by_role("heading", name="Edit memory: “Prefers trail running")).to_be_visible()
    expect(page.get_by_text(memory.id)).to_have_count(0)  # the id is no title
    never = editor.get_by_text("Never expires")
    date = editor.get_by_role("group", name="Expires on")
    expect(editor.get_by_role("checkbox", name="Never expires")).to_be_checked()
    expect(date).to_be_disabled()
    never.click()
    wait_idle(page)
    expect(date).to_be_enabled()
    never.click()
    wait_idle(page)
    expect(date).to_be_disabled()
    no_exceptions(page)


def test_a_saved_row_never_joins_the_next_bulk_delete(page: Page, app_server, seed) -> None:
    user = unique_user()
    edited = seed.add_episodic(user, "Ran my first 10k in 58 minutes", event_type="milestone")
    other = seed.add_episodic(user, "Sleep 7.5 hours on weeknights", event_type="goal")
    kept = seed.add_episodic(user, "I am vegetarian", event_type="preference")
    open_memories(page, app_server.url, user)
    table = by_key(page, "tbl_episodic")

    select_grid_row(page, table, "Ran my first 10k")
    editor = by_key(page, f"ed_ep_{edited.id}_box")
    editor.get_by_label("Memory").fill("Ran my first 10k in 55 minutes")
    editor.get_by_role("button", name="Save changes").click()
    expect(
        page.get_by_test_id("stToast").filter(has_text="Saved “Ran my first 10k")
    ).to_be_visible()
    wait_idle(page)
    expect(grid_cell(table, "10k in 55 minutes")).to_have_count(1)
    expect(editor).to_have_count(0)  # the saved row is no longer ticked
    expect(page.get_by_role("button", name="selected")).to_have_count(0)

    select_grid_row(page, table, "Sleep 7.5 hours")
    delete = page.get_by_role("button", name="Delete 1 selected")
    expect(delete).to_be_visible()
    delete.click()
    wait_idle(page)
    notice = page.get_by_text("Deleted “Sleep 7.5 hours on weeknights”")
    expect(notice).to_be_visible()  # with its Undo, where the delete was asked for
    expect(grid_cell(table, "Sleep 7.5 hours")).to_have_count(0)
    expect(notice).to_have_count(0, timeout=TIMEOUT_MS)  # carried out after the window
    wait_idle(page)
    left = {r["id"]: r["text"] for r in seed.list_memories(user, "episodic")[0]}
    assert left == {edited.id: "Ran my first 10k in 55 minutes", kept.id: "I am vegetarian"}
    assert other.id not in left
    no_exceptions(page)


# --- Stats ---------------------------------------------------------------------------------


def test_stats_opens_with_three_plain_tiles_and_built_in_facts_apart(
    page: Page, app_server, seed
) -> None:
    user = unique_user()
    seed.add_episodic(user, "I am vegetarian", event_type="preference")
    seed.retrieve_all_context(user, "s-1", "What should I cook tonight?")  # one recall
    page.set_viewport_size(LAPTOP)
    open_page(page, f"{app_server.url}/stats?user={user}", "📊 Stats")
    expect(page.get_by_test_id("stMetricLabel")).to_have_count(3, timeout=TIMEOUT_MS)
    labels = page.get_by_test_id("stMetricLabel").all_inner_texts()
    assert labels == [
        "Things I remember about you", "Answers that used memory", "Typical recall time",
    ]  # fmt: skip
    values = page.get_by_test_id("stMetricValue").all_inner_texts()
    assert values[0] == "1"  # alice's memory, not the 23 built-in facts
    expect(page.get_by_text("built-in facts every user shares")).to_be_visible()
    titles = page.locator(".js-plotly-plot .gtitle")
    # one recall is one point: said in a sentence, not drawn
    expect(
        page.get_by_text(re.compile(r"Recall time: \d+ answers? in this window"))
    ).to_be_visible()
    expect(titles.filter(has_text="Time per step, per")).to_have_count(0)  # behind an expander
    page.get_by_text("Recall in detail").click()
    wait_idle(page)
    # the first chart of the page: the browser loads the chart library first
    expect(titles.filter(has_text="Time per step, per")).to_be_visible(timeout=TIMEOUT_MS)
    no_exceptions(page)


def test_stats_of_a_new_user_draws_no_empty_chart(page: Page, app_server) -> None:
    page.set_viewport_size(LAPTOP)
    open_page(page, f"{app_server.url}/stats?user={unique_user()}", "📊 Stats")
    expect(page.get_by_text("growth appears once they exist")).to_be_visible()
    for title in ("Growth over time", "Memories per type"):
        expect(page.locator(".js-plotly-plot .gtitle").filter(has_text=title)).to_have_count(0)
    no_exceptions(page)
