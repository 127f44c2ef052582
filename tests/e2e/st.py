"""Small Playwright helpers for Streamlit pages (waits, sidebar, screenshots)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from ui.browse import ROW_HEIGHT as MEMORY_ROW_PX

TIMEOUT_MS = 30_000


def wait_idle(page: Page, timeout: float = TIMEOUT_MS) -> None:
    """Wait until the app is connected and no script run is in progress."""
    page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout
    )
    page.wait_for_selector(
        "[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout
    )


def open_page(page: Page, url: str, heading: str) -> None:
    """Open a URL and wait for the page's title (an `h1`) and the end of its run."""
    page.goto(url)
    expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)


def sidebar(page: Page) -> Locator:
    return page.get_by_test_id("stSidebar")


def by_key(page: Page | Locator, key: str) -> Locator:
    """The element container of a widget created with `key=...` (Streamlit adds a class)."""
    return page.locator(f".st-key-{key}")


def no_exceptions(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def screenshot(page: Page, path: Path, height: int = 2200) -> None:
    """A tall-viewport screenshot: Streamlit scrolls inside its own container, so a
    full-page screenshot would not grow with the content."""
    size = page.viewport_size or {"width": 1440, "height": 1000}
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        wait_idle(page)
        for close in page.get_by_test_id("stToast").get_by_role("button").all():
            close.click()  # toasts of earlier actions would cover the page's corner
        page.wait_for_timeout(400)  # let charts and grids finish drawing after the resize
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)


def grid_cell(table: Locator, text: str) -> Locator:
    """A cell of an `st.dataframe` (drawn on a canvas; its accessible table holds the text)."""
    return table.locator("td[role='gridcell']", has_text=text)


HEADER_PX = 35  # st.dataframe's header height
ROW_PX = MEMORY_ROW_PX  # the Memories page's tables: rows tall enough to wrap text


def select_grid_row(page: Page, table: Locator, text: str, row_px: int = ROW_PX) -> None:
    """Tick the selection box of the row holding `text`, as a user clicks it (only rows drawn
    without scrolling; `row_px`: the table's row height)."""
    cell = grid_cell(table, text)
    row = int(cell.locator("xpath=..").get_attribute("aria-rowindex") or "0")  # header is 1
    grid = table.get_by_test_id("stDataFrame")
    grid.scroll_into_view_if_needed()  # a click outside the window would miss the row
    y = HEADER_PX + row_px * (row - 2) + row_px / 2
    box = grid.bounding_box()
    assert box is not None and row >= 2, f"row of {text!r} not found"
    if box["y"] + y > (page.viewport_size or {"height": 1000})["height"]:
        page.mouse.wheel(0, box["y"] + y - 200)  # the row, not only the table's top, in view
        page.wait_for_timeout(300)  # the scroll settles before the box is read again
        box = grid.bounding_box()
        assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + y)
    wait_idle(page)
