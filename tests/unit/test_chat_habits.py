"""Chat habits without a browser: a closed turn closes the model's stream,
the stopped mark, chat titles from the first message, and the theme config."""

from __future__ import annotations

import time
import tomllib
from collections.abc import Callable

from agent.loop import ChatAgent
from memory.config import PROJECT_ROOT
from tests.fakes.fake_coordinator import FakeCoordinator
from tests.fakes.fake_ollama import FakeOllama
from ui.sessions import PICKER_CHARS, distinct, fallback_label, picker_label, title_from
from ui.stopping import STOPPED_MARK, stopped_reply


def test_closing_a_turn_mid_answer_closes_the_stream_to_ollama(
    agent_factory: Callable[..., ChatAgent],
    fake_coordinator: FakeCoordinator,
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.queue_slow_reply(" ".join(f"w{i}" for i in range(400)), delay_s=0.05)
    turn = agent_factory(fake_coordinator, fake_ollama.url).run_turn("ana", "s1", "Plan my week")
    for ev in turn:
        if ev.kind == "token":
            break
    turn.close()  # type: ignore[attr-defined]  # what the chat page does on ⏹ Stop
    (request,) = fake_ollama.chat_requests()
    deadline = time.monotonic() + 30
    while not request.client_closed:
        assert time.monotonic() < deadline, "the fake never saw the connection end"
        time.sleep(0.05)
    assert fake_coordinator.recent_messages("ana", "s1") == []  # the page keeps the partial


def test_stopped_reply_marks_even_an_empty_answer() -> None:
    assert stopped_reply("  ") == STOPPED_MARK
    assert stopped_reply("Half an answer \n") == f"Half an answer {STOPPED_MARK}"


def test_a_title_is_the_start_of_the_first_message_on_one_line() -> None:
    assert title_from("  Plan my\nweek  ") == "Plan my week"
    long = "Plan a vegetarian dinner for my running club on Friday evening, please"
    assert title_from(long) == "Plan a vegetarian dinner for my running club…"
    assert len(title_from("x" * 200)) == 48


def test_a_session_without_title_reads_as_a_date() -> None:
    assert fallback_label("s-20261123-0117-9171") == "Chat of 23 Nov 2026, 01:17"
    assert fallback_label("my-own-id") == "my-own-id"


def test_the_theme_follows_the_os_light_or_dark_setting() -> None:
    config = tomllib.loads((PROJECT_ROOT / ".streamlit" / "config.toml").read_text())
    theme = config["theme"]
    assert "base" not in theme  # a base would force that scheme on every browser
    assert {"light", "dark"} <= set(theme)
    assert theme["light"]["backgroundColor"] != theme["dark"]["backgroundColor"]


def test_the_chat_picker_cuts_a_long_title_at_a_word() -> None:
    titles = {
        "s1": "Plan a vegetarian dinner for my running club…",
        "s2": "Plan my running this week",
    }
    assert picker_label("s2", titles) == "Plan my running this week"  # short enough: whole
    label = picker_label("s1", titles)
    assert label == "Plan a vegetarian dinner for…" and len(label) <= PICKER_CHARS
    assert picker_label("s-20261123-0117-9171", titles) == "Chat of 23 Nov 2026, 01:17"


def test_chats_of_one_name_get_names_of_their_own_in_order() -> None:
    names = distinct({"s1": "Marathon", "s2": "Marathon", "s3": "Marathon (2)", "s4": "Swim"})
    assert names == {
        "s1": "Marathon",
        "s2": "Marathon (2)",
        "s3": "Marathon (2) (2)",
        "s4": "Swim",
    }
