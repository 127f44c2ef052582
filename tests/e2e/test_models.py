"""A thinking model and the model check in a real browser: the answer streams without the
thoughts, the thoughts are folded in the details as text, the window split is shown, and the
sidebar's model check lists its probes."""

from __future__ import annotations

import uuid
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import start_app
from tests.e2e.st import TIMEOUT_MS, by_key, no_exceptions, open_page, sidebar, wait_idle


def test_a_thinking_model_answers_without_showing_its_thoughts_until_asked(
    page: Page, redis_url: str, e2e_namespace: str, shared_fake_ollama, tmp_path: Path
) -> None:
    server = start_app(
        redis_url,
        e2e_namespace,
        shared_fake_ollama.url,
        tmp_path,
        env_extra={"OLLAMA_MODEL": "qwen3:4b"},
    )
    try:
        user = "t" + uuid.uuid4().hex[:6]
        open_page(page, f"{server.url}?user={user}", "💬 Chat with memory")
        # Thoughts that try markup and a remote image stay text.
        shared_fake_ollama.queue_reply(
            "Pace it easy, about 60 seconds slower than race pace.",
            thinking="THOUGHT-MARKER **bold** ![x](http://example.invalid/t.png) pace maths",
        )
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill("How should I pace my long run?")
        box.press("Enter")
        answer = page.get_by_test_id("stChatMessage").filter(has_text="60 seconds slower")
        expect(answer).to_have_count(1, timeout=TIMEOUT_MS)
        wait_idle(page)
        # not shown until asked (a folded expander may keep its content in the page, hidden)
        expect(answer.get_by_text("THOUGHT-MARKER", exact=False).first).to_be_hidden()
        details = answer.get_by_test_id("stExpander").filter(has_text="Execution details")
        # The turn's run ends with a rerun (the sidebar shows what it stored): until that run
        # has replaced the streamed answer, its details and the history's can both be drawn.
        expect(details).to_have_count(1, timeout=TIMEOUT_MS)
        wait_idle(page)
        details.get_by_text("Execution details").click()
        details.get_by_role("tab", name="💭 Thoughts").click()
        thoughts = details.get_by_role("tabpanel", name="💭 Thoughts")
        expect(thoughts.get_by_text("THOUGHT-MARKER **bold**", exact=False)).to_be_visible()
        expect(page.locator("img[src*='example.invalid']")).to_have_count(0)
        details.get_by_role("tab", name="Prompt").click()
        prompt = details.get_by_role("tabpanel", name="Prompt")
        expect(prompt.get_by_text("What the model could read at once")).to_be_visible()

        # The model check, from the sidebar's model panel.
        bar = sidebar(page)
        bar.get_by_text("🤖 Model & auto-recall").click()
        expect(bar.get_by_text("it could take about 30,720", exact=False)).to_be_visible()
        wait_idle(page)  # a click landing on the turn's last rerun is lost (clean-clone CI)
        by_key(bar, "sb_check_model").get_by_role("button").click()
        expect(bar.get_by_text("thinking off worked", exact=False)).to_be_visible(
            timeout=TIMEOUT_MS
        )
        expect(bar.get_by_text("A thinking model", exact=False)).to_be_visible()
        no_exceptions(page)
    finally:
        server.stop()
