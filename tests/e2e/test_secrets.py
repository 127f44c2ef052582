"""Secrets never stored, in a real browser: a card number typed into the chat is kept only as
`[card number]` (the conversation after a reload); a memory that would only name the card is
not stored; the answer's last line and its execution details say what was masked."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from tests.e2e.st import TIMEOUT_MS, no_exceptions, open_page, wait_idle

CARD = "4111 1111 1111 1111"


def test_a_card_number_is_kept_only_as_a_label_and_the_answer_says_so(page: Page, app_server, seed):
    user = "u" + uuid.uuid4().hex[:6]
    open_page(page, f"{app_server.url}?user={user}", "💬 Chat with memory")
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(f"Remember: my card number is {CARD}")
    box.press("Enter")
    messages = page.get_by_test_id("stChatMessage")
    # The fake model echoes the message: the live answer shows what it said.
    expect(messages.nth(1)).to_contain_text("You said:", timeout=TIMEOUT_MS)
    wait_idle(page)

    expect(messages.nth(1).get_by_text("🔒 stored without your card number")).to_be_visible()
    details = messages.nth(1).get_by_test_id("stExpander").filter(has_text="Execution details")
    details.get_by_text("Execution details").click()
    expect(details.get_by_text("Stored without your card number")).to_be_visible()

    # "My card number is [card number]" would say nothing: no memory, only the masked chat
    rows, _ = seed.list_memories(user, "episodic")
    assert [r["text"] for r in rows if r["event_type"] != "interaction"] == []
    assert not any("4111" in r["text"] for r in rows)

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
