"""The demo script ("Demo in five minutes"), walked as a presenter does, in a real browser:
with the fake model the whole script, with a reload in the middle, on the chat, Memories and
Stats pages; without a model the part that answers otherwise (the banner, the load, the
memory-only answers). Each step's promise is asserted, and what a presenter touches first:

    the address keeps the user and the chat (a reload, the page links)
    blank input is ignored, never an error
    the first screen greets, loads the persona, and the sidebar lists her memories
    the answer ends with what it remembered (edit, Forget this) and what it masked
    an earlier answer reaches the prompt with what was answered then
    Memories and Stats agree with an action in the same run
    Stats by each memory's own date, an activity timeline, counts of what is remembered
    the screen says what the script says (matches in words in Recalled, the replacing goal's text)

Without a model, steps 2 to 6 do what they do with one except for the answers' words: the
pages, the reload and the recall are walked once, with the model; memory-only writing is
tests/app/test_remembered.py's. The persona's and the first screen's screenshots of the docs
are taken here (`test-artifacts/screenshots/`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import redis
from playwright.sync_api import Locator, Page, expect

from benchmarks.common import drop_namespace, free_port
from memory import DEMO_QUESTIONS, DEMO_USER
from memory.config import Settings
from memory.queries import ListQuery
from tests.e2e.conftest import AppServer, start_app
from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    grid_cell,
    no_exceptions,
    screenshot,
    select_grid_row,
    sidebar,
    wait_idle,
)
from tests.fakes.fake_ollama import FakeOllama


@pytest.fixture
def demo_app(
    request: pytest.FixtureRequest,
    redis_url: str,
    shared_fake_ollama: FakeOllama,
    tmp_path: Path,
) -> Iterator[tuple[str, AppServer, object]]:
    """A server of its own namespace (the persona loads into `demo-maya`, a fresh one each
    time), with the fake model or with nothing listening where Ollama would be (the test's
    `demo_app` parameter: "model" or "memory-only")."""
    from memory.coordinator import MemoryCoordinator

    ns = "d" + uuid.uuid4().hex[:12]
    ollama = (
        shared_fake_ollama.url if request.param == "model" else f"http://127.0.0.1:{free_port()}"
    )
    server = start_app(redis_url, ns, ollama, tmp_path)
    seed = MemoryCoordinator.from_settings(
        Settings(_env_file=None, redis_url=redis_url, memory_namespace=ns, ollama_host=ollama)  # type: ignore[call-arg]
    )
    try:
        yield request.param, server, seed
    finally:
        server.stop()
        seed.close()
        client = redis.Redis.from_url(redis_url)
        try:
            drop_namespace(client, ns)
        finally:
            client.close()


def address(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def ask(page: Page, text: str) -> Locator:
    """Send a message; the answer (the last chat message once the run is over)."""
    before = page.get_by_test_id("stChatMessage").count()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")
    expect(page.get_by_test_id("stChatMessage")).to_have_count(before + 2, timeout=TIMEOUT_MS)
    wait_idle(page)
    return page.get_by_test_id("stChatMessage").last


def details_of(answer: Locator) -> Locator:
    details = answer.get_by_test_id("stExpander").filter(has_text="Execution details")
    details.get_by_text("Execution details").click()
    return details


def recalled(answer: Locator) -> Locator:
    """The *Recalled* tab of an answer's details (opened)."""
    return details_of(answer).get_by_role("tabpanel", name="Recalled")


def active_memories(seed: object, user: str) -> int:
    rows, _ = seed.list_memories(
        user, "episodic", ListQuery(include_superseded=False, page_size=1000)
    )  # type: ignore[attr-defined]
    facts, _ = seed.list_memories(user, "semantic", ListQuery(added_by=user, page_size=1000))  # type: ignore[attr-defined]
    return len([r for r in rows if r["event_type"] != "interaction"]) + len(facts)


def open_and_load_the_persona(
    page: Page, server: AppServer, seed: object, *, offline: bool, screenshots_dir: Path
) -> str:
    """Steps 1 and 2: the first screen, then *Load demo persona*; the new chat's id."""
    # --- 1. the chat page greets; memory-only mode is said once, at the top ----------------
    # The server's first run loads the embedding model: waited for with a bound a busy machine
    # does not miss (30 s did, at load ~22), as tests/e2e/test_memory_editor.py's `warm` does.
    page.goto(server.url + "/?user=visitor")
    heading = page.get_by_role("heading", name="💬 Chat with memory", level=1)
    expect(heading).to_be_visible(timeout=10 * TIMEOUT_MS)
    wait_idle(page)
    expect(page.get_by_text("Tell me about yourself")).to_be_visible()
    banners = page.get_by_test_id("stAlert").filter(has_text="Memory-only mode")
    expect(banners).to_have_count(1 if offline else 0)
    assert address(page)["user"] == "visitor"

    # --- 2. load the persona: demo-maya in a new, empty chat; the address follows ----------
    by_key(page, "es_demo_load").get_by_role("button", name="Load demo persona").click()
    expect(page.get_by_text(f"You are {DEMO_USER} in a new chat")).to_be_visible(timeout=60_000)
    # the load's message is one short line, whole (no "view more" behind a cut)
    toast = page.get_by_test_id("stToast").filter(has_text=f"You are Maya ({DEMO_USER}): ")
    expect(toast).to_be_visible()
    expect(toast.get_by_test_id("stToastViewButton")).to_have_count(0)
    wait_idle(page)
    chat = address(page)["chat"]
    assert address(page)["user"] == DEMO_USER and chat.startswith("s-")
    assert seed.list_memories("visitor", "episodic")[1] == 0  # type: ignore[attr-defined]
    # her memories are in the sidebar's Recent tab
    bar = sidebar(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    expect(recent.get_by_text(re.compile(r"^Left ankle a bit stiff after her run"))).to_be_visible()
    expect(recent.get_by_text(re.compile(r"^Ran 16 km on"))).to_be_visible()
    if not offline:
        screenshot(page, screenshots_dir / "demo-first-screen.png", height=1400)
    return chat


def plan_my_running(page: Page, *, offline: bool) -> Locator:
    """Step 3.1 with step 4's Recalled tab; the answer."""
    # --- 3.1 plan my running: the plan after the sprain, the race goal, the procedure --------
    page.get_by_role("button", name=DEMO_QUESTIONS[0]).click()
    expect(page.get_by_test_id("stChatMessage")).to_have_count(2, timeout=TIMEOUT_MS)
    wait_idle(page)
    answer = page.get_by_test_id("stChatMessage").last
    if offline:  # the few memories that answer it, grouped and dated, and the learned tools
        reply = answer.get_by_test_id("stMarkdownContainer").filter(
            has_text="What I remember about this"
        )
        expect(reply.locator("strong").filter(has_text=re.compile(r"^Health$"))).to_be_visible()
        expect(reply.locator("li")).to_have_count(5)
        expect(reply).to_contain_text(re.compile(r"\(\d{1,2} \w{3} 2026\)"))
        # on its own line, not glued to the last memory
        expect(reply.locator("li").last).not_to_contain_text("For questions like this")
        expect(reply).to_contain_text("looked up your workouts, then compared two periods")
        expect(answer).not_to_contain_text("memory-only reply")  # the banner said it once
    else:  # the fake model repeats the memories it was given
        expect(answer).to_contain_text("sprained left ankle")
    # step 4 of the script: match and why in words in *Recalled*; the procedural suggestion
    tab = recalled(answer)
    expect(tab.get_by_text(re.compile(r"about 2 hours 10 minutes")).first).to_be_visible()
    if offline:  # the status line and the Recalled tab claim the 5 the reply listed, no more
        expect(answer.get_by_text(re.compile(r"^Checked \d+ memories, used 5\b"))).to_be_visible()
        assert tab.inner_text().count("✅ used in this answer") == 5
    expect(tab.get_by_text(re.compile(r"match · why: ")).first).to_be_visible()
    expect(tab.get_by_text(re.compile(r"looked up your workouts, then compared"))).to_be_visible()
    expect(tab.get_by_text(re.compile(r"80% sure after 4 runs, recommended"))).to_have_count(1)
    return answer


@pytest.mark.parametrize("demo_app", ["model"], indirect=True)
def test_the_demo_script_survives_a_presenter(  # noqa: PLR0915 - one script, step by step
    page: Page, demo_app: tuple[str, AppServer, object], screenshots_dir: Path
) -> None:
    _, server, seed = demo_app
    chat = open_and_load_the_persona(
        page, server, seed, offline=False, screenshots_dir=screenshots_dir
    )

    # --- blank input is never an error -----------------------------------------------------
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("   \n  ")
    box.press("Enter")
    wait_idle(page)
    expect(page.get_by_test_id("stChatMessage").filter(has_text="You said")).to_have_count(0)
    no_exceptions(page)
    expect(page.get_by_test_id("stAlert").filter(has_text="InvalidInputError")).to_have_count(0)

    plan_my_running(page, offline=False)
    screenshot(page, screenshots_dir / "persona-chat.png", height=1700)

    # --- 3.2 the ankle ----------------------------------------------------------------------
    answer = ask(page, DEMO_QUESTIONS[1])
    expect(recalled(answer).get_by_text(re.compile(r"16 km")).first).to_be_visible()

    # --- a reload in the middle: the same user, the same chat, the same messages ------------
    page.reload()
    expect(page.get_by_role("heading", name="💬 Chat with memory", level=1)).to_be_visible(
        timeout=TIMEOUT_MS
    )
    wait_idle(page)
    assert address(page) == {"user": DEMO_USER, "chat": chat}
    expect(page.get_by_text(f"You are {DEMO_USER} in")).to_be_visible()
    expect(page.get_by_test_id("stChatMessage")).to_have_count(4)
    expect(page.get_by_test_id("stChatMessage").nth(2)).to_contain_text(DEMO_QUESTIONS[1])

    # --- 3.3 what to eat: vegetarian, though the question does not say so -------------------
    answer = ask(page, DEMO_QUESTIONS[2])
    expect(recalled(answer).get_by_text(re.compile(r"[Vv]egetarian")).first).to_be_visible()

    # --- 3.4 the race goal: the current one; the old one is history, not recalled -----------
    answer = ask(page, DEMO_QUESTIONS[3])
    tab = recalled(answer)
    expect(tab.get_by_text(re.compile(r"about 2 hours 10 minutes")).first).to_be_visible()
    expect(tab.get_by_text(re.compile(r"in under 2 hours"))).to_have_count(0)

    # --- 3.5 how far: the exact procedural match ---------------------------------------------
    answer = ask(page, DEMO_QUESTIONS[4])
    expect(recalled(answer).get_by_text(re.compile(r"added up your daily figures"))).to_be_visible()

    # --- 3.6 an earlier answer comes back with what was answered then -----------------------
    answer = ask(page, DEMO_QUESTIONS[5])
    expect(answer).to_contain_text(re.compile(r"swim|stationary bike", re.IGNORECASE))
    # the fake model repeats what it was given: the earlier answer reached the model, and the
    # Prompt tab shows it in the list of what was given and in the block exactly as sent
    expect(answer).to_contain_text("I answered before: Once walking is pain-free")
    details = details_of(answer)
    details.get_by_role("tab", name="Prompt").click()
    prompt = details.get_by_role("tabpanel", name="Prompt")
    expect(prompt.get_by_text("How can I keep my fitness while I can't run?")).to_have_count(2)
    expect(prompt.get_by_text(re.compile(r"↳ answered: Once walking is pain-free"))).to_be_visible()

    # --- the answer says what it remembered, and what it masked ------------------------------
    answer = ask(page, "Remember that I love trail mix after long runs")
    expect(answer.get_by_text(re.compile(r"💾 Remembered: “I love trail mix"))).to_be_visible()
    # its control is named for what it does, never "undo" like a delete's Undo
    expect(answer.get_by_role("button", name="Forget this")).to_be_visible()
    expect(answer.get_by_role("button", name=re.compile("undo", re.IGNORECASE))).to_have_count(0)
    answer = ask(page, "My card number for the bike shop is 4111 1111 1111 1111")
    expect(answer.get_by_text("🔒 stored without your card number")).to_be_visible()
    expect(answer.get_by_text(re.compile("Remembered:"))).to_have_count(0)  # nothing to keep
    expect(page.get_by_text("4111 1111 1111 1111")).to_have_count(0)
    no_exceptions(page)

    # --- 5. Memories: the link keeps the user and the chat ---------------------------------
    sidebar(page).get_by_role("link", name="Memories").click()
    expect(page.get_by_role("heading", name="🗂️ Memories", level=1)).to_be_visible(
        timeout=TIMEOUT_MS
    )
    wait_idle(page)
    assert address(page) == {"user": DEMO_USER, "chat": chat}
    table = by_key(page, "tbl_episodic")
    expect(table.get_by_test_id("stDataFrame")).to_be_visible()
    # the conversation is not listed as things remembered, unless asked
    expect(grid_cell(table, "Plan my running this week")).to_have_count(0)
    screenshot(page, screenshots_dir / "persona-memories.png", height=1700)
    # Kind = Goal: the old goal is marked replaced; its editor names the new goal by its text
    # one click on a pill: no list is left open over the table (a multiselect's stayed)
    by_key(page, "f_ep_kinds").get_by_role("button", name="Goal", exact=True).click()
    wait_idle(page)
    expect(grid_cell(table, "in under 2 hours")).to_have_count(1)
    select_grid_row(page, table, "in under 2 hours")
    expect(page.get_by_text(re.compile(r"Replaced by “.*about 2 hours 10 minutes"))).to_be_visible()
    # This chat: the chat has the sidebar's name, not its id
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("tab", name=re.compile("This chat")).click()
    expect(by_key(page, "f_st_session")).not_to_contain_text(chat)

    # Add: the message, the tile and the table agree in the same run (point 6)
    tile = page.get_by_test_id("stMetric").first
    before = int(tile.get_by_test_id("stMetricValue").inner_text())
    main.get_by_role("tab", name="➕ Add").click()
    by_key(page, "a_text").locator("textarea").fill("Maya keeps a running diary in a notebook")
    by_key(page, "a_go").get_by_role("button").click()
    added = page.get_by_text("Remembered: Maya keeps a running diary")
    expect(added).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(tile.get_by_test_id("stMetricValue")).to_have_text(str(before + 1))
    no_exceptions(page)

    # --- 6. Stats: what it remembers now, her months, what happened per day ----------------
    sidebar(page).get_by_role("link", name="Stats").click()
    expect(page.get_by_role("heading", name="📊 Stats", level=1)).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    assert address(page) == {"user": DEMO_USER, "chat": chat}
    tiles = page.get_by_test_id("stMetric")
    expect(tiles.first).to_contain_text("Things I remember about you")
    expect(tiles.first.get_by_test_id("stMetricValue")).to_have_text(
        str(active_memories(seed, DEMO_USER))
    )
    expect(tiles.nth(1)).to_contain_text("Answers that used memory")
    titles = page.locator(".js-plotly-plot .gtitle")
    expect(titles.filter(has_text="Growth over time")).to_be_visible(timeout=TIMEOUT_MS)
    expect(titles.filter(has_text="What happened to your memories")).to_be_visible()
    # growth by her own dates: the axis starts in her summer, not on the load day
    growth = page.locator(".js-plotly-plot").filter(
        has=page.locator(".gtitle", has_text="Growth over time")
    )
    expect(growth.locator(".xtick").first).to_contain_text(re.compile(r"Jun|Jul|Aug"))
    no_exceptions(page)
    screenshot(page, screenshots_dir / "persona-stats.png", height=1900)


@pytest.mark.parametrize("demo_app", ["memory-only"], indirect=True)
def test_without_a_model_the_demo_answers_from_memory(
    page: Page, demo_app: tuple[str, AppServer, object], screenshots_dir: Path
) -> None:
    """What differs without a model: the banner, once, and the memory-only answers (grouped,
    dated, with the learned tools; the question about an earlier answer gives what was
    answered then). The rest of the walk is the model's (the test above)."""
    _, server, seed = demo_app
    open_and_load_the_persona(page, server, seed, offline=True, screenshots_dir=screenshots_dir)
    plan_my_running(page, offline=True)
    answer = ask(page, DEMO_QUESTIONS[5])
    expect(answer).to_contain_text(re.compile(r"swim|stationary bike", re.IGNORECASE))
    expect(answer).to_contain_text("I answered then:")
    expect(answer.locator("li blockquote")).to_contain_text("Once walking is pain-free")
    expect(answer).not_to_contain_text("memory-only reply")
    no_exceptions(page)
