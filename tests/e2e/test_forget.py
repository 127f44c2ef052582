"""Forgetting a topic in a real browser: the Memories page's *Forget a topic*
tab previews what mentions it (texts shown as text), offers an undo window, and then deletes
it and what came from it, with a count."""

from __future__ import annotations

import json
import uuid

from playwright.sync_api import Locator, Page, expect

from tests.e2e.st import (
    HEADER_PX,
    TIMEOUT_MS,
    by_key,
    grid_cell,
    no_exceptions,
    open_page,
    screenshot,
    wait_idle,
)

ROW_PX = 35  # the preview table's rows: st.data_editor's default height
FORGET_BOX_PX = 44  # where the small first column draws its tick box (a click beside it selects)
HOSTILE = "Ms **Okafor** <img src=x onerror=alert(1)> [call](javascript:alert(1))"
SHOWN = "Ms Okafor <img src=x onerror=alert(1)> call"  # the words markdown shows, as text


def preview(page: Page, topic: str) -> None:
    page.get_by_role("tab", name="🗑️ Forget").click()
    by_key(page, "fg_query").get_by_label("Topic").fill(topic)
    by_key(page, "fg_preview").get_by_role("button", name="Preview").click()
    wait_idle(page)


def tick_forget(page: Page, table: Locator, text: str) -> None:
    """Tick the Forget box (the first column) of the row holding `text`, as a user clicks it."""
    cell = grid_cell(table, text)
    row = int(cell.locator("xpath=..").get_attribute("aria-rowindex") or "0")  # header is 1
    box = table.get_by_test_id("stDataFrame").bounding_box()
    assert box is not None and row >= 2, f"row of {text!r} not found"
    y = box["y"] + HEADER_PX + ROW_PX * (row - 2) + ROW_PX / 2
    page.mouse.click(box["x"] + FORGET_BOX_PX, y)
    wait_idle(page)


def test_forget_a_topic_with_preview_undo_and_counts(
    page: Page, app_server, seed, screenshots_dir
) -> None:
    user = "f" + uuid.uuid4().hex[:6]
    lawyer = seed.add_episodic(user, "My divorce lawyer is Ms Okafor", event_type="fact")
    seed.add_episodic(user, HOSTILE, event_type="preference")
    run = seed.add_episodic(user, "I run on Sundays", event_type="preference")
    seed.store_interaction(user, "s1", "Ms Okafor called about the divorce", "Noted.")
    open_page(page, f"{app_server.url}/memories?user={user}", "🗂️ Memories")

    preview(page, "Okafor divorce")
    table = by_key(page, "fg_table")
    expect(grid_cell(table, "My divorce lawyer is Ms Okafor")).to_have_count(1)
    expect(grid_cell(table, SHOWN)).to_have_count(1)  # as text: no image, no link
    expect(grid_cell(table, "I run on Sundays")).to_have_count(0)
    # The hostile text holds "Okafor" but not "divorce": listed, left unticked until ticked
    three = page.get_by_role("button", name="Forget 3 items and what came from them")
    expect(three).to_be_visible()
    tick_forget(page, table, SHOWN)
    go = page.get_by_role("button", name="Forget 4 items and what came from them")
    # 3 memories (one the logged exchange) and the question; its answer goes with it
    expect(go).to_be_visible()
    no_exceptions(page)
    screenshot(page, screenshots_dir / "memories-forget.png", height=1300)

    # Undo inside the window: nothing goes.
    go.click()
    expect(page.get_by_text("Forgetting 4 items about")).to_be_visible()
    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_text("Nothing was forgotten.")).to_be_visible(timeout=TIMEOUT_MS)
    assert seed.get_memory(user, "episodic", lawyer.id)

    # Again, and let the window pass.
    preview(page, "Okafor divorce")
    tick_forget(page, by_key(page, "fg_table"), SHOWN)
    page.get_by_role("button", name="Forget 4 items and what came from them").click()
    expect(page.get_by_text("Forgetting 4 items about")).to_be_visible()
    done = page.get_by_text("Forgot “Okafor divorce”")
    expect(done).to_be_visible(timeout=TIMEOUT_MS)
    expect(done).to_contain_text("4 items and")  # the preview's unit, then what followed
    expect(done).to_contain_text("3 memories")
    expect(done).to_contain_text("2 chat messages")
    no_exceptions(page)

    exported = json.dumps(seed.export_user(user)).lower()
    assert "okafor" not in exported and "divorce" not in exported
    assert seed.get_memory(user, "episodic", run.id)["description"] == "I run on Sundays"
    preview(page, "Okafor divorce")
    expect(page.get_by_text("mentions “Okafor divorce”")).to_be_visible()
