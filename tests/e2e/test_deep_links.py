"""Each page opened by its URL as the very first request of a freshly started server works:
its own content, the sidebar with the memory editor, no exception."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.st import TIMEOUT_MS, no_exceptions, open_page, sidebar


@pytest.mark.parametrize(
    ("path", "heading", "marker"),
    [
        ("/memories", "🗂️ Memories", "Import / export"),
        ("/stats", "📊 Stats", "Answers that used memory"),
    ],
)
def test_page_opened_by_url_on_a_fresh_server(
    page: Page, fresh_server, path: str, heading: str, marker: str
) -> None:
    server = fresh_server()
    open_page(page, server.url + path, heading)
    expect(page.get_by_text(marker).first).to_be_visible(timeout=TIMEOUT_MS)
    bar = sidebar(page)
    expect(bar.get_by_text("Memory editor")).to_be_visible()
    expect(bar.get_by_role("button", name="Remember")).to_be_visible()
    expect(bar.get_by_role("link", name="Memories")).to_be_visible()
    expect(bar.get_by_role("link", name="Stats")).to_be_visible()
    no_exceptions(page)
    assert server.process.poll() is None
