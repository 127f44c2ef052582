"""Hostile text in a real browser: markdown images in a reply, a memory, a fact or `?user=`
must not make the browser fetch anything, and a name from the URL is shown as text.

A listener on 127.0.0.1 counts every request it gets: the honest check that nothing was
loaded (an image the page only hid would still have been fetched)."""

from __future__ import annotations

import threading
import urllib.parse
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.st import TIMEOUT_MS, open_page, sidebar, wait_idle


class Listener:
    """An HTTP server on 127.0.0.1 recording the paths it was asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                outer.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, what: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/leak?q={what}"


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    lst.thread.start()
    yield lst
    lst.server.shutdown()
    lst.server.server_close()


def send(page: Page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")


def test_no_markdown_image_is_fetched_and_names_are_text(
    page: Page, app_server, shared_fake_ollama, seed, listener
):
    # The user name itself carries an image, a link and bold markup.
    user = f"u{uuid.uuid4().hex[:6]} **bold** [site]({listener.url('name-link')}) " + (
        f"![n]({listener.url('name')})"
    )
    seed.add_episodic(user, f"I like tea ![m]({listener.url('memory')})", event_type="preference")
    seed.add_semantic(
        f"Green tea has caffeine ![f]({listener.url('fact')})", category="nutrition", added_by=user
    )
    shared_fake_ollama.queue_reply(f"Here you go ![r]({listener.url('reply')}) enjoy")

    open_page(page, f"{app_server.url}?user={urllib.parse.quote(user)}", "💬 Chat with memory")
    send(page, f"Show me ![u]({listener.url('message')}) please")
    messages = page.get_by_test_id("stChatMessage")
    expect(messages.last).to_contain_text("enjoy", timeout=TIMEOUT_MS)
    wait_idle(page)
    # The sidebar lists the memory and the fact (their markdown shown as text).
    bar = sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    expect(recent.get_by_text("I like tea")).to_be_visible()
    expect(recent.get_by_text("Green tea has caffeine")).to_be_visible()
    # Reload: the history (reply and message from Redis) is drawn again from stored text.
    open_page(page, f"{app_server.url}?user={urllib.parse.quote(user)}", "💬 Chat with memory")
    expect(messages.last).to_contain_text("enjoy", timeout=TIMEOUT_MS)
    wait_idle(page)

    assert listener.paths == []
    # The images are still reachable as links a person may choose to click.
    expect(messages.last.get_by_role("link", name="r")).to_have_attribute(
        "href", listener.url("reply")
    )
    # The name is shown literally: its markdown is text, not bold and not a link.
    caption = page.get_by_text("You are ")
    # (word joiners, invisible, keep the bare URL from being auto-linked)
    shown = caption.inner_text().replace("\u2060", "")
    assert f"**bold** [site]({listener.url('name-link')})" in shown
    expect(caption.get_by_role("link")).to_have_count(0)


def test_a_pasted_message_over_the_limit_is_refused_with_the_limit_not_dropped(
    page: Page, app_server
) -> None:
    from memory.models import MAX_TEXT_CHARS

    open_page(page, f"{app_server.url}?user=u{uuid.uuid4().hex[:6]}", "💬 Chat with memory")
    pasted = "x" * (MAX_TEXT_CHARS + 1)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(pasted)
    expect(box).to_have_value(pasted)  # the box takes it (a max length would drop the paste)
    box.press("Enter")
    alert = page.get_by_test_id("stAlertContentError")
    expect(alert).to_contain_text(f"the limit is {MAX_TEXT_CHARS:,}", timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stCode")).to_contain_text(pasted[:100])
