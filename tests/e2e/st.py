"""Small Playwright helpers for Streamlit pages (waits, sidebar, screenshots)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

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


#: a layout is settled when the boxes of charts and grids stayed the same for this many frames
SETTLED_FRAMES = 10


def settled(page: Page, timeout: float = TIMEOUT_MS) -> None:
    """Wait until every chart and grid has kept its size and place for SETTLED_FRAMES
    animation frames (they redraw a while after the viewport changes)."""
    page.wait_for_function(
        """frames => {
            const boxes = [...document.querySelectorAll('.js-plotly-plot, canvas')]
                .map(e => JSON.stringify(e.getBoundingClientRect())).join();
            window.__settled = boxes === window.__boxes ? (window.__settled || 0) + 1 : 0;
            window.__boxes = boxes;
            return window.__settled >= frames;
        }""",
        arg=SETTLED_FRAMES,
        polling="raf",
        timeout=timeout,
    )


def screenshot(page: Page, path: Path, height: int = 2200) -> None:
    """A tall-viewport screenshot: Streamlit scrolls inside its own container, so a
    full-page screenshot would not grow with the content."""
    size = page.viewport_size or {"width": 1440, "height": 1000}
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        wait_idle(page)
        for close in page.get_by_test_id("stToast").get_by_role("button").all():
            try:  # toasts of earlier actions would cover the page's corner
                close.click(timeout=2_000)
            except PlaywrightTimeoutError:
                pass  # it closed by itself meanwhile (clean-clone CI at 9e39b23 waited 30 s)
        settled(page)  # charts and grids redraw after the resize
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)


def grid_cell(table: Locator, text: str) -> Locator:
    """A cell of an `st.dataframe` (drawn on a canvas; its accessible table holds the text).
    The grid lists only the rows it draws on screen, so the table is scrolled to the middle
    of the screen first."""
    center(table.get_by_test_id("stDataFrame"))
    return table.locator("td[role='gridcell']", has_text=text)


def center(element: Locator) -> None:
    element.evaluate("el => el.scrollIntoView({block: 'center'})")


HEADER_PX = 35  # st.dataframe's header height
TOP_BAR_PX = 64  # Streamlit's header bar, drawn over the top of the page
ROW_PX = MEMORY_ROW_PX  # the Memories page's tables: rows tall enough to wrap text


def select_grid_row(page: Page, table: Locator, text: str, row_px: int = ROW_PX) -> None:
    """Tick the selection box of the row holding `text`, as a user clicks it (only rows drawn
    without scrolling; `row_px`: the table's row height)."""
    cell = grid_cell(table, text)
    row = int(cell.locator("xpath=..").get_attribute("aria-rowindex") or "0")  # header is 1
    grid = table.get_by_test_id("stDataFrame")
    box = grid.bounding_box()
    assert box is not None and row >= 2, f"row of {text!r} not found"
    offset = HEADER_PX + row_px * (row - 2) + row_px / 2
    viewport = page.viewport_size or {"height": 0}
    if not TOP_BAR_PX < box["y"] + offset < viewport["height"] - row_px / 2:
        # a click outside the viewport is lost: bring the table to the middle of the screen
        center(grid)
        box = grid.bounding_box()
        assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + offset)
    wait_idle(page)
