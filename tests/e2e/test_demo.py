"""The demo persona in a real browser: *Load demo persona* on the first screen switches to
Maya, her memories are in the sidebar's Recent tab, and her first question recalls them."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import Page, expect

from memory import DEMO_QUESTIONS, DEMO_USER, load_demo
from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    no_exceptions,
    open_page,
    screenshot,
    sidebar,
    wait_idle,
)


def test_load_the_demo_persona_from_the_first_screen(
    page: Page, app_server, seed, screenshots_dir
) -> None:
    open_page(page, app_server.url + "/?user=visitor", "💬 Chat with memory")
    expect(page.get_by_text("Tell me about yourself")).to_be_visible()
    by_key(page, "es_demo_load").get_by_role("button", name="Load demo persona").click()
    expect(page.get_by_text("You are chatting as")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(page.get_by_text(f"You are {DEMO_USER} in")).to_be_visible()

    bar = sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    expect(recent.get_by_text(re.compile(r"^Left ankle a bit stiff after her run"))).to_be_visible()
    expect(recent.get_by_text(re.compile(r"^Ran 16 km on"))).to_be_visible()
    assert seed.list_memories("visitor", "episodic")[1] == 0  # the visitor got nothing
    no_exceptions(page)
    screenshot(page, screenshots_dir / "demo-first-screen.png", height=1400)

    # her first question: the reply (the fake model lists what it was given) recalls the
    # sprained ankle, and the details show the recall
    page.get_by_role("button", name=DEMO_QUESTIONS[0]).click()
    messages = page.get_by_test_id("stChatMessage")
    expect(messages.nth(1)).to_contain_text("sprained left ankle", timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(page.get_by_text("Execution details").first).to_be_visible()
    no_exceptions(page)

    # The docs' screenshots of the persona are taken by test_demo_script.py, which walks the
    # whole demo script.


def test_the_persona_s_question_about_an_earlier_answer_shows_that_answer(
    page: Page, app_server, seed
) -> None:
    """The demo's sixth question: the answer the assistant gave after the sprain reaches the
    model (the fake one repeats what it was given) and the Prompt tab shows it."""
    user = "demo-e2e-" + uuid.uuid4().hex[:6]
    load_demo(seed, user)
    seed.bookkeeping.drain()
    open_page(page, f"{app_server.url}/?user={user}", "💬 Chat with memory")
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(DEMO_QUESTIONS[5])
    box.press("Enter")
    # her newest session's messages are shown above: the answer is the last message
    expect(page.get_by_test_id("stChatMessage").last).to_contain_text(
        "I answered before: Once walking is pain-free", timeout=TIMEOUT_MS
    )
    wait_idle(page)
    details = page.get_by_test_id("stExpander").filter(has_text="Execution details").last
    details.get_by_text("Execution details").click()
    details.get_by_role("tab", name="Prompt").click()
    prompt = details.get_by_role("tabpanel", name="Prompt")
    # in the list of what the model was given and in the block exactly as sent
    expect(prompt.get_by_text("How can I keep my fitness while I can't run?")).to_have_count(2)
    expect(prompt.get_by_text(re.compile(r"↳ answered: Once walking is pain-free"))).to_be_visible()
    no_exceptions(page)
