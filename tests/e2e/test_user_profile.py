"""The user profile and pause in a real browser: "What I know about you" on the Memories page
and in the sidebar, a line edited (the memory behind it changes) and removed (forgotten); a
memory paused from the sidebar is absent from the next answer's Prompt tab, and back after
resume."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from memory.block import PROFILE_TITLE, read_block
from memory.queries import ListQuery
from tests.e2e.st import TIMEOUT_MS, by_key, no_exceptions, open_page, sidebar, wait_idle
from tests.fakes.fake_ollama import FakeOllama

CHAT = "💬 Chat with memory"


def sidebar_profile(page: Page):  # type: ignore[no-untyped-def]
    return by_key(page, "sb_profile")


def test_the_profile_is_shown_edited_and_removed(page: Page, app_server, seed) -> None:
    user = "u" + uuid.uuid4().hex[:6]
    veg = seed.add_episodic(user, "I'm vegetarian", event_type="preference", importance=0.8).id
    goal = seed.add_episodic(user, "I want to run a marathon", event_type="goal").id
    seed.add_episodic(user, "We chatted about the weather", event_type="interaction")
    open_page(page, f"{app_server.url}/memories?user={user}", "🗂️ Memories")
    page.get_by_test_id("stMain").get_by_text("What I know about you").click()  # unfold
    main = by_key(page, "page_profile")
    expect(main.get_by_text("I'm vegetarian")).to_be_visible()
    expect(main.get_by_text("I want to run a marathon")).to_be_visible()
    expect(sidebar_profile(page).get_by_text("I'm vegetarian")).to_be_visible()
    expect(main.get_by_text("We chatted about the weather")).to_have_count(0)  # not standing

    by_key(page, f"page_profile_edit_{veg}_0").get_by_role("button").click()  # ✏️
    popover = page.get_by_test_id("stPopoverBody")
    popover.get_by_label("Edit the line").fill("I'm vegan")
    popover.get_by_role("button", name="Save").click()
    wait_idle(page)
    expect(main.get_by_text("I'm vegan")).to_be_visible(timeout=TIMEOUT_MS)
    expect(sidebar_profile(page).get_by_text("I'm vegan")).to_be_visible()
    assert seed.get_memory(user, "episodic", veg)["text"] == "I'm vegan"  # the memory behind

    by_key(page, f"page_profile_remove_{goal}").get_by_role("button").click()
    wait_idle(page)
    expect(sidebar_profile(page).get_by_text("I want to run a marathon")).to_have_count(0)
    # a delete like every other: Undo offered, then carried out when its window has passed
    notice = main.get_by_text("Deleted “I want to run a marathon”")
    expect(notice).to_be_visible()
    expect(notice).to_have_count(0, timeout=TIMEOUT_MS)
    wait_idle(page)
    rows, _ = seed.list_memories(user, "episodic", ListQuery())
    assert goal not in {r["id"] for r in rows}  # forgotten
    assert [p.text for p in seed.user_profile(user)] == ["I'm vegan"]
    no_exceptions(page)


def ask(page: Page, fake: FakeOllama, question: str, reply: str) -> None:
    fake.queue_reply(reply)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    expect(page.get_by_text(reply).first).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)


def prompt_tab(page: Page):  # type: ignore[no-untyped-def]
    """The last answer's Prompt tab, each step awaited until it holds: the run that drew the
    answer is over (a later run redraws the details and folds them), the details are unfolded,
    the tab is the selected one."""
    wait_idle(page)
    details = page.get_by_test_id("stExpander").filter(has_text="Execution details").last
    details.get_by_text("Execution details").click()
    expect(details.get_by_test_id("stExpanderDetails")).not_to_have_attribute("inert", "")
    tab = details.get_by_role("tab", name="Prompt")
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true")
    return details.get_by_role("tabpanel", name="Prompt")


def test_a_paused_memory_leaves_the_prompt_and_comes_back_on_resume(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
) -> None:
    shared_fake_ollama.reset()
    user = "u" + uuid.uuid4().hex[:6]
    teal = seed.add_episodic(user, "My favourite colour is teal", event_type="preference").id
    seed.add_episodic(user, "I run on Sundays", event_type="preference")
    seed.bookkeeping.drain()
    open_page(page, f"{app_server.url}?user={user}", CHAT)
    side = sidebar(page)
    side.get_by_role("tab", name="🕒 Recent").click()
    by_key(page, f"sb_row_{teal}_pause").get_by_role("button").click()
    wait_idle(page)
    # the page says it once the click's run is done (wait_idle can return before it starts)
    expect(side.get_by_text("⏸ paused", exact=False)).to_be_visible()
    assert seed.get_memory(user, "episodic", teal)["paused"] is True

    ask(page, shared_fake_ollama, "Which colour should I paint my bike?", "Maybe red.")
    tab = prompt_tab(page)
    expect(tab.get_by_text("I run on Sundays").first).to_be_visible()  # the profile is there
    expect(tab.get_by_text("teal")).to_have_count(0)
    assert "teal" not in shared_fake_ollama.chat_requests()[-1].system_prompt

    side.get_by_role("tab", name="🕒 Recent").click()
    by_key(page, f"sb_row_{teal}_pause").get_by_role("button").click()
    wait_idle(page)
    expect(side.get_by_text("⏸ paused", exact=False)).to_have_count(0)
    assert seed.get_memory(user, "episodic", teal)["paused"] is False
    ask(page, shared_fake_ollama, "Which colour should I paint my car?", "Teal, as you like.")
    expect(prompt_tab(page).get_by_text("My favourite colour is teal").first).to_be_visible()
    no_exceptions(page)


def profile_section(system_prompt: str) -> list[str]:
    """The texts of the profile's lines in a prompt's memory block, in order."""
    lines, inside = [], False
    for line in read_block(system_prompt):
        if line.kind == "title":
            inside = line.text == PROFILE_TITLE[:-1]
        elif line.kind == "memory" and inside:
            lines.append(line.text)
    return lines


def test_the_sidebar_lists_the_profile_the_prompt_carries_in_its_order(
    page: Page, app_server, shared_fake_ollama: FakeOllama, seed
) -> None:
    shared_fake_ollama.reset()
    user = "u" + uuid.uuid4().hex[:6]
    for i in range(12):  # more important standing memories than the profile's room holds
        seed.add_episodic(user, f"I like recipe number {i} with rice", event_type="preference",
                          importance=0.9)  # fmt: skip
    seed.add_episodic(user, "I'm allergic to peanuts and tree nuts", event_type="fact",
                      importance=0.5)  # fmt: skip
    race = seed.add_episodic(user, "Ran the Lyon 10k in 52 minutes", event_type="milestone").id
    seed.update_memory(user, "episodic", race, pinned=True)
    seed.bookkeeping.drain()
    open_page(page, f"{app_server.url}?user={user}", CHAT)
    ask(page, shared_fake_ollama, "Give me a recipe for tonight's dinner", "A rice bowl.")
    sent = profile_section(shared_fake_ollama.chat_requests()[-1].seen_system_prompt)
    assert sent[:2] == ["Ran the Lyon 10k in 52 minutes", "I'm allergic to peanuts and tree nuts"]

    panel = sidebar_profile(page)
    by_key(panel, "sb_profile_more").get_by_role("button").click()  # folded to its first lines
    # wait for the unfolded list: wait_idle alone may return before the click's rerun starts
    row_boxes = panel.locator("[class*='st-key-sb_line_']")  # a line, ✏️, ✖️ per row
    expect(row_boxes).to_have_count(len(sent))
    wait_idle(page)
    rows = row_boxes.all()
    texts = [row.get_by_test_id("stMarkdownContainer").first.inner_text() for row in rows]
    shown = [t.strip().split("\n")[0].removeprefix("📌 ").strip() for t in texts]
    assert shown == sent  # exactly the lines sent, in the order sent
    left_out = 14 - len(sent)
    assert left_out > 0
    expect(by_key(page, "sb_profile_left_out")).to_contain_text(
        f"{left_out} more memories do not fit the room a question keeps for this list"
    )
    no_exceptions(page)
