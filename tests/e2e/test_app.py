"""The app in a real browser: chat with streamed reply and execution details, a new user typed
in the sidebar, edit and export on Memories, charts, and screenshots of each page. (The
sidebar's add is tests/e2e/test_forms.py's, its delete tests/e2e/test_chat_habits.py's.)"""

from __future__ import annotations

import json
import re
import uuid

from playwright.sync_api import Page, expect

from agent import ChatAgent
from tests.e2e.demo import seed_demo_user
from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    grid_cell,
    no_exceptions,
    open_page,
    screenshot,
    select_grid_row,
    sidebar,
    wait_idle,
)


def unique_user() -> str:
    return "u" + uuid.uuid4().hex[:6]


def as_user(url: str, user: str) -> str:
    return f"{url}?user={user}"


def send(page: Page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")


def test_chat_streams_a_reply_with_execution_details(
    page: Page, app_server, shared_fake_ollama, screenshots_dir
):
    user = unique_user()
    open_page(page, as_user(app_server.url, user), "💬 Chat with memory")
    expect(page.get_by_text("Tell me about yourself")).to_be_visible()

    send(page, "Remember that I am vegetarian")
    messages = page.get_by_test_id("stChatMessage")
    expect(messages.nth(1)).to_contain_text("You said: Remember that I am vegetarian",
                                            timeout=TIMEOUT_MS)  # fmt: skip
    wait_idle(page)
    # the memory stored by the trigger phrase is in the sidebar editor's recent list
    bar = sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    expect(recent.get_by_text(re.compile(r"^I am vegetarian"))).to_be_visible()

    # a turn with a tool call: the status box and the details show it
    shared_fake_ollama.queue_tool_calls(
        [("aggregate_metrics", {"metric": "sleep_hours", "days": 7})]
    )
    shared_fake_ollama.queue_reply(
        "You slept about 7 hours a night last week.\n- shortest night: Thursday"
    )
    send(page, "How did I sleep last week?")
    expect(messages.nth(3)).to_contain_text("shortest night: Thursday", timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(messages.nth(3).get_by_text("1 tool call(s)").first).to_be_visible()
    tool_details = messages.nth(3).get_by_test_id("stExpander")
    tool_details.get_by_text("Execution details").click()
    tool_details.get_by_role("tab", name="Tools (1)").click()
    tools_tab = tool_details.get_by_role("tabpanel", name="Tools (1)")
    expect(tools_tab.get_by_text("Added up your daily figures")).to_be_visible()
    expect(tools_tab.get_by_text("sleep_hours").first).to_be_visible()
    tool_details.get_by_text("Execution details").click()  # fold it again

    send(page, "What should I cook tonight? I am vegetarian")
    expect(messages.nth(5)).to_contain_text(
        re.compile(r"I remember: .*I am vegetarian"), timeout=TIMEOUT_MS
    )
    wait_idle(page)
    details = page.get_by_test_id("stExpander").filter(has_text="Execution details").last
    details.get_by_text("Execution details").click()
    header = re.compile(r"🤖 qwen2\.5:7b · looked through 1 thing about you")
    expect(details.get_by_text(header)).to_be_visible()
    expect(details.get_by_text("Used 1 thing I know about you: “I am vegetarian”")).to_be_visible()
    expect(details.get_by_role("tab", name="Recalled")).to_be_visible()
    details.get_by_role("tab", name="Prompt").click()
    expect(details.get_by_text("I am vegetarian").first).to_be_visible()
    prompt = details.get_by_role("tabpanel", name="Prompt")  # the block exactly as sent
    expect(prompt.get_by_text("<<<MEMORY", exact=False)).to_be_visible()
    details.get_by_role("tab", name="⚙️ Advanced").click()
    advanced = details.get_by_role("tabpanel", name="⚙️ Advanced")
    expect(advanced.get_by_test_id("stDataFrame").first).to_be_visible()
    details.get_by_role("tab", name="Recalled").click()
    no_exceptions(page)
    screenshot(page, screenshots_dir / "chat.png", height=1700)

    # A reload (a new browser session): every answer still has its status line and details,
    # read from Redis.
    page.reload()
    expect(messages.nth(5)).to_contain_text("I remember:", timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(messages).to_have_count(6)
    for i in (1, 3, 5):
        expect(messages.nth(i).get_by_text("Execution details")).to_have_count(1)
    expect(messages.nth(3).get_by_text("1 tool call(s)").first).to_be_visible()
    kept = messages.nth(5).get_by_test_id("stExpander").filter(has_text="Execution details")
    kept.get_by_text("Execution details").click()
    expect(kept.get_by_text("Used 1 thing I know about you: “I am vegetarian”")).to_be_visible()
    no_exceptions(page)


def test_type_a_new_user_in_the_sidebar(page: Page, app_server, seed):
    seed.add_episodic("zoe", "Zoe plays the cello", event_type="preference")
    open_page(page, as_user(app_server.url, "alice"), "💬 Chat with memory")
    user_box = sidebar(page).get_by_role("combobox", name="👤 User")
    user_box.click()
    user_box.fill("zoe")
    page.keyboard.press("Enter")
    expect(page.get_by_text("You are zoe")).to_be_visible()
    sidebar(page).get_by_role("tab", name="🕒 Recent").click()
    recent = sidebar(page).get_by_role("tabpanel", name="🕒 Recent")
    expect(recent.get_by_text("Zoe plays the cello")).to_be_visible()


def test_memories_page_edit_and_export(page: Page, app_server, seed, screenshots_dir):
    user = unique_user()
    seed_demo_user(seed, user, "s-demo")
    open_page(page, as_user(app_server.url + "/memories", user), "🗂️ Memories")
    table = by_key(page, "tbl_episodic")
    table.scroll_into_view_if_needed()  # the grid draws the cells of rows on screen only
    goal = "Train for the Lyon half marathon on April 12"
    expect(grid_cell(table, goal)).to_have_count(1)
    expect(grid_cell(table, "↪ replaced")).to_have_count(1)  # the superseded coffee habit

    # select the row, edit its text in the form that appears, save
    select_grid_row(page, table, goal)
    form = page.locator("[class*='st-key-ed_ep_'][class*='_box']")  # the episodic editor
    expect(form.get_by_label("Memory")).to_have_value(goal)
    no_exceptions(page)
    screenshot(page, screenshots_dir / "memories.png", height=1700)
    form.get_by_label("Memory").fill("Train for the Lyon half marathon on April 19")
    form.get_by_role("button", name="Save changes").click()
    expect(
        page.get_by_test_id("stToast").filter(has_text="Saved “Train for the Lyon")
    ).to_be_visible()
    wait_idle(page)
    expect(grid_cell(table, "Lyon half marathon on April 19")).to_have_count(1)
    assert seed.search(user, "half marathon April 19", "episodic", k=1)[0].text.endswith("19")

    page.get_by_role("tab", name="🛠️ Ways of working").click()
    procedures = by_key(page, "tbl_procedural")
    expect(grid_cell(procedures, "used “get sleep”, then added up your daily")).to_have_count(1)
    select_grid_row(page, procedures, "how did I sleep last week")
    expect(page.get_by_text("Ways tried for")).to_be_visible()
    screenshot(page, screenshots_dir / "memories-procedural.png", height=1200)

    page.get_by_role("tab", name="⇅ Import / export").click()
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download JSON").click()
    doc = json.loads(open(dl.value.path(), encoding="utf-8").read())
    assert doc["user_id"] == user
    texts = {m["description"] for m in doc["episodic"]}
    assert "Train for the Lyon half marathon on April 19" in texts


def test_stats_page_renders_plotly_charts(page: Page, app_server, seed, screenshots_dir):
    user = unique_user()
    seed_demo_user(seed, user, "s-demo")
    agent = ChatAgent(seed.settings, seed)  # real turns: recall, answer, store (fake Ollama)
    for question in ("What should I eat tonight?", "How is my running going?",
                     "Did I sleep enough?", "What should I eat tonight?"):  # fmt: skip
        agent.chat(user, "s-demo", question)
    agent.wait_for_background(30)
    agent.close()
    open_page(page, as_user(app_server.url + "/stats", user), "📊 Stats")
    charts = page.locator(".js-plotly-plot")
    expect(charts.first).to_be_visible(timeout=TIMEOUT_MS)
    expect(
        page.locator(".js-plotly-plot .gtitle").filter(has_text="Recall time before an answer")
    ).to_be_visible()
    page.get_by_text("Recall in detail").click()  # the detail runs only once opened
    wait_idle(page)
    for title in ("Time per step, per", "How often recall found"):
        expect(page.locator(".js-plotly-plot .gtitle").filter(has_text=title)).to_be_visible()
    assert charts.count() >= 5
    expect(page.get_by_test_id("stMetric").first).to_be_visible()
    no_exceptions(page)
    screenshot(page, screenshots_dir / "stats.png", height=2300)
