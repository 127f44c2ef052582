"""Trust controls in a real browser: answering again without a memory,
"I don't know you on this" with what was held back, and an incognito chat that stores nothing."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from agent.knowing import UNKNOWN_RULE
from tests.e2e.st import TIMEOUT_MS, no_exceptions, open_page, wait_idle
from tests.fakes.fake_ollama import FakeOllama, remembered_lines

HEADING = "💬 Chat with memory"


def unique_user() -> str:
    return "p" + uuid.uuid4().hex[:6]


def send(page: Page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")


def last_request(fake: FakeOllama, message: str):  # type: ignore[no-untyped-def]
    found = [r for r in fake.chat_requests() if r.last_user_message == message]
    return found[-1] if found else None


def test_answer_again_without_a_memory_shows_both_answers(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
) -> None:
    shared_fake_ollama.reset()  # no reply left queued by an earlier test
    user = unique_user()
    seed.add_episodic(user, "I follow a vegetarian diet", event_type="preference")
    seed.add_episodic(user, "I am training for a half marathon in April", event_type="goal")
    seed.bookkeeping.drain()
    open_page(page, f"{app_server.url}?user={user}", HEADING)
    question = "Can you plan my meals for race week?"
    shared_fake_ollama.queue_reply("Vegetarian race-week meals: lentils, rice, eggs.")
    send(page, question)
    answer = page.get_by_test_id("stChatMessage").nth(1)
    expect(answer).to_contain_text("Vegetarian race-week meals", timeout=TIMEOUT_MS)
    # the chat is named after the first message in a rerun: wait for it before picking
    expect(page.get_by_text("in “Can you plan my meals", exact=False)).to_be_visible()
    wait_idle(page)
    stored_before = len(seed.recent_messages(user, seed.list_sessions(user)[0], 50))

    answer.get_by_text("🔁 Answer without a memory").click()
    answer.get_by_test_id("stCheckbox").filter(has_text="I follow a vegetarian diet").click()
    wait_idle(page)
    shared_fake_ollama.queue_reply("Race-week meals: chicken, rice, pasta.")
    answer.get_by_role("button", name="Answer again without them").click()
    wait_idle(page)

    expect(answer).to_contain_text("With every memory")
    expect(answer).to_contain_text("Without them")
    expect(answer).to_contain_text("Race-week meals: chicken, rice, pasta.")
    expect(answer).to_contain_text("Vegetarian race-week meals")
    again = last_request(shared_fake_ollama, question)
    assert again is not None
    assert "I follow a vegetarian diet" not in remembered_lines(again.system_prompt)
    assert "I am training for a half marathon in April" in remembered_lines(again.system_prompt)
    # nothing was stored by the re-answer
    session = seed.list_sessions(user)[0]
    assert len(seed.recent_messages(user, session, 50)) == stored_before
    no_exceptions(page)


def test_a_question_nothing_is_known_for_says_so_and_lists_what_was_held_back(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
) -> None:
    shared_fake_ollama.reset()
    user = unique_user()
    seed.add_episodic(user, "I repaired the garden fence on Sunday", event_type="milestone")
    seed.bookkeeping.drain()
    open_page(page, f"{app_server.url}?user={user}", HEADING)
    question = "What is my favourite colour?"
    shared_fake_ollama.queue_reply("I don't know your favourite colour yet. What is it?")
    send(page, question)
    answer = page.get_by_test_id("stChatMessage").nth(1)
    expect(answer).to_contain_text("I don't know your favourite colour", timeout=TIMEOUT_MS)
    wait_idle(page)
    request = last_request(shared_fake_ollama, question)
    assert request is not None and UNKNOWN_RULE in request.system_prompt
    assert "garden fence" not in request.system_prompt

    answer.get_by_text("🔍 Execution details").click()
    expect(answer).to_contain_text("I don't know you on this")
    expect(answer).to_contain_text("Held back")
    expect(answer).to_contain_text("I repaired the garden fence on Sunday")
    no_exceptions(page)


def test_an_incognito_chat_is_marked_recalls_nothing_and_stores_nothing(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
) -> None:
    shared_fake_ollama.reset()
    user = unique_user()
    seed.add_episodic(user, "My favourite colour is teal", event_type="preference")
    seed.bookkeeping.drain()
    open_page(page, f"{app_server.url}?user={user}", HEADING)
    page.get_by_text("🕶️ Incognito").click()
    wait_idle(page)
    expect(page.get_by_text("Incognito chat.", exact=False)).to_be_visible()

    question = "Remember: I like jazz. What's my favourite colour?"
    shared_fake_ollama.queue_reply("I don't know that about you in this chat.")
    send(page, question)
    expect(page.get_by_text("I don't know that about you in this chat.")).to_be_visible(
        timeout=TIMEOUT_MS
    )
    wait_idle(page)
    request = last_request(shared_fake_ollama, question)
    assert request is not None
    assert "teal" not in request.system_prompt and UNKNOWN_RULE in request.system_prompt
    # its details speak of incognito: nothing was searched, nothing said here is kept
    answer = page.get_by_test_id("stChatMessage").nth(1)
    answer.get_by_text("🔍 Execution details").click()
    expect(answer).to_contain_text("Incognito: nothing was recalled from your memory")
    expect(answer).to_contain_text("your memory was not searched")
    expect(answer).not_to_contain_text("moderate band")
    expect(answer).not_to_contain_text("Tell the agent about yourself")
    # a second incognito message carries the first exchange (kept by the page only)
    shared_fake_ollama.queue_reply("Still incognito.")
    send(page, "And now?")
    expect(page.get_by_text("Still incognito.")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    second = last_request(shared_fake_ollama, "And now?")
    assert second is not None
    assert question in [m["content"] for m in second.body["messages"]]
    # nothing of it reached the store: no session, no message, no memory of jazz
    assert seed.list_sessions(user) == []
    texts = [h.text for h in seed.search(user, "jazz", k=10)]
    assert not any("jazz" in t for t in texts)

    # switched off, the chat is the normal one again (and empty: nothing was stored)
    page.get_by_text("🕶️ Incognito").click()
    wait_idle(page)
    expect(page.get_by_text("Incognito chat.", exact=False)).to_have_count(0)
    expect(page.get_by_text("Still incognito.")).to_have_count(0)
    no_exceptions(page)
