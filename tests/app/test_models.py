"""What the chat page shows about the model: its profile and window in the sidebar, the model
check, the window split and a thinking model's thoughts in the details, and a message too long
for the window refused with its text kept."""

from __future__ import annotations

import streamlit as st

from tests.app.conftest import no_errors, texts
from ui.sidebar import CHECK_WORDS


def test_the_sidebar_shows_the_profile_and_runs_the_model_check(app_env, make_app) -> None:
    at = make_app("app.py")
    sidebar = texts(at.sidebar, "caption").replace("\\", "")
    # the fake's window (8,192) and what the model could take (32,768), in words
    assert "up to about 6,140 words at a time (it could take about 24,580)" in sidebar
    assert "uses tools" in sidebar and "token" not in sidebar
    at.sidebar.button(key="sb_check_model").click().run()
    no_errors(at)
    shown = texts(at.sidebar).replace("\\", "")
    for probe in CHECK_WORDS.values():  # each probe in words, not its name in the code
        assert probe in shown
    assert "json extraction" not in shown.lower()
    assert "✅" in shown and "❌" in shown  # the fake's qwen2.5 extracts nothing by default
    assert "→ " in texts(at.sidebar, "caption")  # what the agent does about it
    assert at.session_state["model_check"]["model"] == "qwen2.5:7b"


def test_the_details_show_the_window_split_and_a_thinking_models_thoughts(
    app_env, make_app, coordinator
) -> None:
    at = make_app("app.py")
    at.sidebar.selectbox(key="sb_model").set_value("qwen3:4b").run()
    at.chat_input(key="chat_input").set_value("How should I pace my long run?").run()
    no_errors(at)
    labels = [t.label for t in at.tabs]
    assert "💭 Thoughts" in labels
    thoughts = [c.value for c in at.code if "THOUGHT-MARKER" in c.value]
    assert thoughts, "the thoughts are shown in their tab"
    answer = [m for m in at.chat_message if m.name == "assistant"][-1]
    assert "THOUGHT-MARKER" not in "\n".join(str(e.value) for e in answer.markdown)
    assert "What the model could read at once" in texts(at) and "about 6,140 words" in texts(at)
    split = next(df.value for df in at.dataframe if "Part" in df.value.columns)
    assert {"Rules and notes", "Tool schemas", "Kept for the answer"} <= set(split["Part"])
    # the stored messages hold the answer, not the thoughts
    assert not any(
        "THOUGHT-MARKER" in m.content for m in coordinator.recent_messages("alice", "s-test")
    )


def test_a_message_too_long_for_the_window_is_refused_and_kept(
    app_env, make_app, coordinator, monkeypatch
) -> None:
    st.cache_resource.clear()  # a fresh agent for the smaller window
    monkeypatch.setenv("AGENT_NUM_CTX", "2048")  # a small window: a long paste cannot fit
    at = make_app("app.py")
    paste = "Readings: " + "12345 67890 " * 300
    at.chat_input(key="chat_input").set_value(paste).run()
    assert any("Not sent" in e.value and "2,048" in e.value for e in at.error)
    assert any(c.value == paste for c in at.code)  # the text is kept to shorten
    assert coordinator.recent_messages("alice", "s-test") == []
    shown = "\n".join(str(e.value) for m in at.chat_message for e in m.markdown)
    assert "You said" not in shown  # no answer: nothing was sent to the model
