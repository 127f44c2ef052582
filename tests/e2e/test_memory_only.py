"""Without Ollama the chat page says so, shows the fix, and still answers from memory."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from benchmarks.common import free_port
from tests.e2e.st import TIMEOUT_MS, no_exceptions, open_page, screenshot, wait_idle


def test_memory_only_mode_banner_and_reply(page: Page, fresh_server, screenshots_dir) -> None:
    server = fresh_server(f"http://127.0.0.1:{free_port()}")  # nothing listens there
    open_page(page, server.url + "/?user=offline-demo", "💬 Chat with memory")
    banner = page.get_by_test_id("stAlert").filter(has_text="Memory-only mode")
    expect(banner).to_contain_text("Ollama is not reachable")
    expect(page.get_by_text("ollama pull qwen2.5:7b")).to_be_visible()

    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("Remember that I prefer running in the morning")
    box.press("Enter")
    reply = page.get_by_test_id("stChatMessage").nth(1)
    expect(reply).to_contain_text("I saved your message", timeout=TIMEOUT_MS)
    expect(reply).to_contain_text(re.compile(r"I prefer running in the morning"))
    expect(reply).not_to_contain_text("memory-only reply")  # the banner says it, once
    wait_idle(page)
    no_exceptions(page)
    screenshot(page, screenshots_dir / "chat-memory-only.png", height=1100)
