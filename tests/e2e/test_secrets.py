"""Secrets never stored, in a real browser: a card number typed into the chat is stored as
`[card number]` (the memory in the sidebar, the conversation after a reload) and the answer's
execution details say what was masked."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from tests.e2e.st import TIMEOUT_MS, no_exceptions, open_page, sidebar, wait_idle

CARD = "4111 1111 1111 1111"


def test_a_card_number_is_stored_as_a_label_and_the_details_say_so(page: Page, app_server, seed):
    user = "u" + uuid.uuid4().hex[:6]
    open_page(page, f"{app_server.url}?user={user}", "💬 Chat with memory")
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(f"Remember: my card number is {CARD}")
    box.press("Enter")
    messages = page.get_by_test_id("stChatMessage")
    # The fake model echoes the message: the live answer shows what it said.
    expect(messages.nth(1)).to_contain_text("You said:", timeout=TIMEOUT_MS)
    wait_idle(page)

    details = messages.nth(1).get_by_test_id("stExpander").filter(has_text="Execution details")
    details.get_by_text("Execution details").click()
    expect(details.get_by_text("Stored without your card number")).to_be_visible()

    bar = sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    expect(recent.get_by_text("My card number is [card number]")).to_be_visible()
    rows, _ = seed.list_memories(user, "episodic")
    assert [r["text"] for r in rows] == ["My card number is [card number]"]

    # A reload shows the conversation as stored: labels, never the digits; the details
    # still say what was masked.
    page.reload()
    messages = page.get_by_test_id("stChatMessage")
    expect(messages.nth(0)).to_contain_text("my card number is [card number]", timeout=TIMEOUT_MS)
    expect(messages.nth(1)).to_contain_text("[card number]")
    expect(page.get_by_text(CARD, exact=False)).to_have_count(0)
    details = messages.nth(1).get_by_test_id("stExpander").filter(has_text="Execution details")
    details.get_by_text("Execution details").click()
    expect(details.get_by_text("Stored without your card number")).to_be_visible()
    no_exceptions(page)
