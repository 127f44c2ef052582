"""Streamlit's habits in a real browser: stop an answer while it streams,
the status open while it works, the OS theme, the greeting gone with the first message, chat
titles, Undo after the sidebar's delete, and a one-line no-sign-in notice."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from playwright.sync_api import Browser, Page, expect

from tests.e2e.st import TIMEOUT_MS, by_key, no_exceptions, open_page, sidebar, wait_idle
from tests.fakes.fake_ollama import FakeOllama, RecordedRequest

HEADING = "💬 Chat with memory"


def unique_user() -> str:
    return "h" + uuid.uuid4().hex[:6]


def as_user(url: str, user: str) -> str:
    return f"{url}?user={user}"


def send(page: Page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")


def wait_for(what: str, check: Callable[[], object], timeout_s: float = 30.0) -> object:
    """Poll `check` until it returns something truthy (an outcome of another process)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def chat_request(fake: FakeOllama, message: str) -> RecordedRequest | None:
    found = [r for r in fake.chat_requests() if r.last_user_message == message]
    return found[-1] if found else None


def slow_words(n: int) -> str:
    return " ".join(f"word{i}" for i in range(n))


def test_stop_keeps_the_partial_answer_and_closes_the_stream(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
):
    user = unique_user()
    question = "Plan my whole year of training, week by week"
    open_page(page, as_user(app_server.url, user), HEADING)
    shared_fake_ollama.queue_slow_reply("Here is your plan: " + slow_words(300), delay_s=0.2)
    send(page, question)
    answer = page.get_by_test_id("stChatMessage").nth(1)
    expect(answer).to_contain_text("word3", timeout=TIMEOUT_MS)
    # while it works, the status box is open with its steps
    expect(answer.get_by_text(re.compile(r"^🧠 "))).to_be_visible()

    answer.get_by_role("button", name="Stop").click()
    wait_idle(page)
    # the fake saw the client close the connection: the model stops generating
    request = chat_request(shared_fake_ollama, question)
    assert request is not None
    wait_for("the stream to Ollama to close", lambda: request.client_closed)

    # the partial answer is kept, marked stopped, in the history and in short-term memory
    answer = page.get_by_test_id("stChatMessage").nth(1)
    expect(answer).to_contain_text("Here is your plan: word0")
    expect(answer).to_contain_text("[stopped]")
    expect(answer).not_to_contain_text("word299")
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    # its details say how far it got: what was recalled, and that it was stopped
    details = answer.get_by_test_id("stExpander").filter(has_text="Execution details")
    details.get_by_text("Execution details").click()
    expect(details).to_contain_text("You stopped this answer: nothing was learned from it.")
    (session,) = seed.short_term.sessions(user)
    kept = seed.recent_messages(user, session)
    assert [m.role for m in kept] == ["user", "assistant"]
    assert kept[0].content == question
    assert kept[1].content.startswith("Here is your plan: word0")
    assert kept[1].content.endswith("[stopped]") and "word299" not in kept[1].content
    assert kept[1].metadata.get("stopped") is True
    # nothing is extracted from a stopped answer (the message talks about the user: a
    # finished turn would have queued an extraction)
    extractions = shared_fake_ollama.chat_requests(structured=True)
    assert not [r for r in extractions if question in r.prompt_text]

    # the page still works: the next question is answered in full, its status folded
    send(page, "Thanks, that is enough")
    reply = page.get_by_test_id("stChatMessage").nth(3)
    expect(reply).to_contain_text("You said: Thanks, that is enough", timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(reply.get_by_text(re.compile(r"^🧠 "))).not_to_be_visible()
    no_exceptions(page)


def test_the_greeting_goes_with_the_first_message_and_the_chat_takes_its_name(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
):
    user = unique_user()
    open_page(page, as_user(app_server.url, user), HEADING)
    expect(page.get_by_text("Tell me about yourself")).to_be_visible()
    bar = sidebar(page)
    session_box = bar.get_by_role("combobox", name="Chat")
    expect(session_box).to_have_value("New chat")
    for i in range(3):  # each suggestion readable in full, not cut with an ellipsis
        button = by_key(page, f"suggestion_{i}").get_by_role("button")
        expect(button).to_be_visible()
        whole = (
            "b => [b, ...b.querySelectorAll('*')].every(e => e.scrollWidth <= e.clientWidth + 1)"
        )
        assert button.evaluate(whole), f"suggestion {i} is truncated"

    first = "Plan a vegetarian dinner for my running club on Friday evening, please"
    shared_fake_ollama.queue_slow_reply("Lentil curry. " + slow_words(30), delay_s=0.1)
    send(page, first)
    answer = page.get_by_test_id("stChatMessage").nth(1)
    expect(answer).to_contain_text("word2", timeout=TIMEOUT_MS)
    # still streaming: the greeting and its buttons are already gone
    expect(page.get_by_text("Tell me about yourself")).to_have_count(0)
    expect(by_key(page, "suggestion_0")).to_have_count(0)
    expect(answer).to_contain_text("word29", timeout=TIMEOUT_MS)
    wait_idle(page)

    # the chat is named after its first message, shortened, as plain text; the sidebar's
    # picker cuts it at a word and shows that whole (it showed "Plan my ru"), the page's
    # caption the full title
    (session,) = seed.short_term.sessions(user)
    title = "Plan a vegetarian dinner for my running club…"
    assert seed.short_term.titles(user) == {session: title}
    expect(session_box).to_have_value("Plan a vegetarian dinner for…")
    assert session_box.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the title is cut"
    expect(page.get_by_text(f"in “{title}”")).to_be_visible()

    # renamed in the sidebar; markup in a title stays text
    by_key(bar, "sb_rename").get_by_role("button").click()
    box = page.get_by_label("Title of this chat")
    box.fill("Club <b>dinner</b> **Friday**")
    box.press("Enter")
    wait_idle(page)
    # the sidebar shows the stored title once the rename's rerun is done (wait_idle alone can
    # return before that rerun starts: a CI run read Redis too early)
    expect(session_box).to_have_value("Club <b>dinner</b> **Friday**")
    assert seed.short_term.titles(user) == {session: "Club <b>dinner</b> **Friday**"}
    expect(page.get_by_text("in “Club <b>dinner</b> **Friday**”")).to_be_visible()
    no_exceptions(page)


def test_the_sidebar_delete_can_be_undone_then_is_carried_out(page: Page, app_server, seed):
    user = unique_user()
    text = f"My bike is called Rosinante {user}"
    mem = seed.add_episodic(user, text, event_type="preference")
    open_page(page, as_user(app_server.url, user), HEADING)
    bar = sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    row = recent.get_by_test_id("stMarkdownContainer").filter(has_text=text, has_not_text="Deleted")
    delete = by_key(recent, f"sb_row_{mem.id}_del").get_by_role("button")
    delete.click()
    notice = bar.get_by_text(f"Deleted “{text}”")
    expect(notice).to_be_visible()
    expect(row).to_have_count(0)
    assert seed.list_memories(user, "episodic")[1] == 1  # not yet: Undo is offered

    bar.get_by_role("button", name="Undo").click()
    expect(row).to_be_visible()
    expect(notice).to_have_count(0)
    wait_idle(page)
    assert seed.list_memories(user, "episodic")[1] == 1

    # left alone, the delete is carried out when the undo window has passed
    delete.click()
    expect(notice).to_be_visible()
    expect(notice).to_have_count(0, timeout=TIMEOUT_MS)
    wait_for("the delete", lambda: seed.list_memories(user, "episodic")[1] == 0)
    expect(row).to_have_count(0)
    no_exceptions(page)


def test_the_os_dark_theme_is_respected(browser: Browser, app_server):
    backgrounds = {}
    for scheme in ("dark", "light"):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 1200, "height": 900})
        try:
            page = context.new_page()
            open_page(page, as_user(app_server.url, unique_user()), HEADING)
            app = page.get_by_test_id("stApp")
            backgrounds[scheme] = app.evaluate("e => getComputedStyle(e).backgroundColor")
        finally:
            context.close()
    assert backgrounds == {"dark": "rgb(20, 25, 27)", "light": "rgb(251, 251, 249)"}


def test_the_no_sign_in_notice_is_one_quiet_line(page: Page, app_server):
    open_page(page, as_user(app_server.url, unique_user()), HEADING)
    bar = sidebar(page)
    expect(bar.get_by_test_id("stCaptionContainer").filter(has_text="No sign-in")).to_have_count(1)
    expect(bar.get_by_test_id("stAlert")).to_have_count(0)
