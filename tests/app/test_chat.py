"""The chat page: a turn through the real agent (fake Ollama), history from short-term memory,
execution details under each answer, the memory-only banner."""

from __future__ import annotations

from tests.app.conftest import no_errors, texts
from ui.answers import OFFLINE_THEN


def chat_texts(at) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [
        (m.name, "\n".join(str(e.value) for e in m.markdown if hasattr(e, "value")))
        for m in at.chat_message
    ]


def remembered(reply: str) -> str:
    """The memories the (fake) model says it found in its prompt: after "I remember:"."""
    return reply.split("I remember:", 1)[1].split("\n")[0] if "I remember:" in reply else ""


def test_new_user_sees_a_greeting_with_suggestions(app_env, make_app) -> None:
    at = make_app("app.py", user="newcomer")
    no_errors(at)
    assert at.title[0].value == "💬 Chat with memory"
    assert "Tell me about yourself" in texts(at)
    assert at.button(key="suggestion_2").label == "What do you remember about me?"
    assert not at.warning, "the fake Ollama is up: no memory-only banner"


def test_a_turn_streams_the_reply_stores_the_memory_and_explains_itself(
    app_env, make_app, coordinator, shared_fake_ollama
) -> None:
    at = make_app("app.py", user="alice")
    at.chat_input(key="chat_input").set_value("Remember that I am vegetarian").run()
    no_errors(at)

    messages = chat_texts(at)
    assert messages[0] == ("user", "Remember that I am vegetarian")
    assert messages[1][0] == "assistant"
    assert "You said: Remember that I am vegetarian" in messages[1][1]
    # the trigger phrase stored an episodic memory, visible in the sidebar editor at once
    rows, _ = coordinator.list_memories("alice", "episodic")
    rows = [r for r in rows if r["event_type"] != "interaction"]  # (the exchange itself)
    assert [r["text"] for r in rows] == ["I am vegetarian"]
    assert at.sidebar.button(key=f"sb_row_{rows[0]['id']}_del")
    # history comes from short-term memory
    assert [m.content for m in coordinator.recent_messages("alice", "s-test")][0] == (
        "Remember that I am vegetarian"
    )
    details = at.expander
    assert details and details[0].label == "🔍 Execution details"
    assert "I am vegetarian" in texts(at) and "because you asked me to remember it" in texts(at)

    # next turn: the memory is recalled and shown with its score in the details
    at.chat_input(key="chat_input").set_value("What should I eat tonight? I am vegetarian").run()
    no_errors(at)
    assert len(at.chat_message) == 4
    assert "I am vegetarian" in remembered(chat_texts(at)[3][1])
    recalled = [df.value for df in at.dataframe if "Memory" in df.value.columns]
    assert any("I am vegetarian" in set(df["Memory"]) for df in recalled)
    table = next(df for df in recalled if "I am vegetarian" in set(df["Memory"]))
    assert {"Score", "Band", "Vector", "Keywords", "Recency"} <= set(table.columns)
    assert "Prompt" in [t.label for t in at.tabs]


def test_history_is_reloaded_from_short_term_memory(app_env, make_app, coordinator) -> None:
    coordinator.add_message("alice", "s-test", "user", "Hello there")
    coordinator.add_message("alice", "s-test", "assistant", "Hi Alice, how can I help?")
    at = make_app("app.py", user="alice", session="s-test")
    no_errors(at)
    assert chat_texts(at) == [("user", "Hello there"), ("assistant", "Hi Alice, how can I help?")]


def test_recall_toggles_limit_what_is_recalled(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am allergic to peanuts", event_type="health_event")
    at = make_app("app.py", user="alice")
    at.sidebar.toggle(key="sb_recall_episodic").set_value(False).run()
    at.chat_input(key="chat_input").set_value("Am I allergic to peanuts?").run()
    no_errors(at)
    assert "I am allergic to peanuts" not in remembered(chat_texts(at)[1][1])
    at.sidebar.toggle(key="sb_recall_episodic").set_value(True).run()
    at.chat_input(key="chat_input").set_value("Am I allergic to peanuts?").run()
    assert "I am allergic to peanuts" in remembered(chat_texts(at)[-1][1])


def test_offline_model_shows_memory_only_banner_and_still_answers(offline_env, make_app) -> None:
    at = make_app("app.py", user="alice")
    no_errors(at)
    banner = at.warning[0].value
    assert "Memory-only mode" in banner and "not reachable" in banner
    assert "ollama serve" in at.code[0].value and "ollama pull qwen2.5:7b" in at.code[0].value
    assert "Ollama offline" in texts(at.sidebar)

    at.chat_input(key="chat_input").set_value("Remember that I live in Lyon").run()
    no_errors(at)
    reply = chat_texts(at)[1][1]
    assert "I live in Lyon" in reply
    # one banner: the answer does not repeat the offline notice (details still say the mode)
    assert "memory-only reply" not in reply and "ollama serve" not in reply
    assert len([w for w in at.warning if "Memory-only mode" in w.value]) == 1
    assert "📴 memory-only" in texts(at, "caption")
    learning = [c for c in texts(at, "caption").splitlines() if "Learning from" in c]
    assert learning == [  # in words, not the status `skipped (offline)`
        "Learning from this message: not without a model (what you ask me to remember, and "
        "#tags, are kept)"
    ]
    # the chat's history holds the reply as it was shown: a reload draws the same words
    again = make_app("app.py", user="alice")
    assert chat_texts(again)[1] == ("assistant", reply)


def test_a_memory_only_answer_says_so_in_the_past_once_the_model_is_back(
    app_env, make_app, coordinator
) -> None:
    """The history keeps the answer as shown under the offline banner (no notice), marked
    memory-only: with the model back, the chat says it was answered from memory alone."""
    coordinator.store_interaction(
        "alice", "s-test", "Where do I live?", "I saved your message.", memory_only=True
    )
    at = make_app("app.py", user="alice")
    no_errors(at)
    role, answer = chat_texts(at)[1]
    assert role == "assistant" and answer.startswith(OFFLINE_THEN)
    assert answer.endswith("I saved your message.")


def test_model_choice_lists_models_from_ollama(app_env, make_app) -> None:
    at = make_app("app.py")
    box = at.sidebar.selectbox(key="sb_model")
    assert set(box.options) == {"qwen2.5:7b", "llama3.2:3b", "qwen3:4b"}
    box.set_value("llama3.2:3b").run()
    assert at.session_state["model"] == "llama3.2:3b"
    # the name is escaped markdown (shown literally): compare it without the escapes
    assert "llama3.2:3b" in texts(at.sidebar).replace("\\", "")


def test_a_suggestion_sends_itself(app_env, make_app) -> None:
    at = make_app("app.py", user="newcomer")
    at.button(key="suggestion_1").click().run()
    no_errors(at)
    assert chat_texts(at)[0] == ("user", "I prefer short answers with bullet points")
    assert chat_texts(at)[1][0] == "assistant"


def test_background_extraction_outcome_appears_under_the_answer(
    app_env, make_app, agent, shared_fake_ollama
) -> None:
    shared_fake_ollama.queue_structured(
        {"memories": [{"text": "Has a dog called Rex", "event_type": "fact"}]}
    )
    at = make_app("app.py")
    at.chat_input(key="chat_input").set_value("My dog Rex loves the park").run()
    assert agent.wait_for_background(20)
    at.run()
    no_errors(at)
    captions = texts(at, "caption")
    assert "Learning from this message: done" in captions
    assert "Has a dog called Rex" in texts(at)


def test_details_name_the_replaced_memory_and_size_the_injected_block(app_env, make_app) -> None:
    at = make_app("app.py", user="alice")
    at.chat_input(key="chat_input").set_value("Remember: my weight goal is 70 kg").run()
    at.chat_input(key="chat_input").set_value("Remember: my weight goal is now 65 kg").run()
    no_errors(at)
    shown = texts(at)
    assert "replaces “My weight goal is 70 kg” (kept as history)" in shown
    block = next(c.value for c in at.code if "<<<MEMORY" in str(c.value))
    from memory.tokens import estimate_tokens
    from ui.format import about_words

    # its size in words (the model's tokens, counted as people count text)
    assert f"(about {about_words(estimate_tokens(block)):,} words)" in texts(at, "caption")


def test_an_exchange_that_could_not_be_stored_says_not_saved_next_to_the_answer(
    app_env, make_app, shared_fake_ollama, redis_client
) -> None:
    from tests.fakes.fake_ollama import RecordedRequest, Scripted, echo_responder

    at = make_app("app.py", user="alice")
    old = redis_client.config_get("maxmemory")["maxmemory"]

    def fill_redis_then_answer(req: RecordedRequest) -> Scripted:
        redis_client.config_set("maxmemory", 1)  # Redis refuses every write from now on
        return echo_responder(req)

    shared_fake_ollama.queue_responder(fill_redis_then_answer)
    try:
        at.chat_input(key="chat_input").set_value("Hello there").run()
    finally:
        redis_client.config_set("maxmemory", old)
    answer = at.chat_message[-1]
    assert "You said: Hello there" in "\n".join(str(m.value) for m in answer.markdown)
    assert any("Not saved" in e.value for e in answer.error), "not next to the answer"


def test_a_returning_user_lands_in_their_newest_session(app_env, coordinator) -> None:
    from streamlit.testing.v1 import AppTest

    # Named so that the old one sorts first: the choice must be by time, not by name.
    old = coordinator.add_message("carol", "a-old", "user", "An old conversation")
    new = coordinator.add_message("carol", "z-new", "user", "Yesterday's conversation")
    while new.timestamp <= old.timestamp:  # same millisecond: one more, so "newest" is clear
        new = coordinator.add_message("carol", "z-new", "user", "Yesterday's conversation")
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.query_params["user"] = "carol"
    at.run()
    assert at.session_state["session_id"] == "z-new"
    shown = [str(e.value).replace("\\", "") for m in at.chat_message for e in m.markdown]
    assert "Yesterday's conversation" in shown and "An old conversation" not in shown


def test_a_message_over_the_limit_is_not_sent_and_the_user_keeps_the_text(
    app_env, make_app, coordinator
) -> None:
    from memory.models import MAX_TEXT_CHARS

    pasted = "Long notes about my training. " * (MAX_TEXT_CHARS // 30 + 10)
    at = make_app("app.py", user="paula")
    at.chat_input(key="chat_input").set_value(pasted).run()
    assert not at.exception
    (error,) = at.error
    assert f"limit is {MAX_TEXT_CHARS:,}" in error.value
    assert f"{len(pasted.strip()):,} characters" in error.value
    assert [c.value for c in at.code] == [pasted]  # to copy and shorten
    assert not at.chat_message or all(m.name == "assistant" for m in at.chat_message)
    assert list(coordinator.recent_messages("paula", "s-test")) == []


def test_a_message_with_a_nul_byte_is_refused_in_a_sentence(app_env, make_app, coordinator) -> None:
    at = make_app("app.py", user="nul-user", session="s-nul")
    at.chat_input(key="chat_input").set_value("I run\x00 daily").run()
    assert not at.exception
    assert any("NUL character" in e.value for e in at.error), [e.value for e in at.error]
    assert coordinator.recent_messages("nul-user", "s-nul") == []


def test_memory_only_answers_date_what_they_recall(offline_env, make_app) -> None:
    """ "You ran 27 km" from September must not read as this week."""
    from datetime import datetime

    from ui import resources

    when = int(datetime(2026, 9, 14, 8).timestamp() * 1000)
    resources.get_coordinator().add_episodic(
        "alice", "Ran 27 km along the river", event_type="milestone", timestamp_ms=when
    )
    at = make_app("app.py", user="alice")
    at.chat_input(key="chat_input").set_value("How far did I run along the river?").run()
    no_errors(at)
    assert "Ran 27 km along the river (14 Sep 2026)" in chat_texts(at)[1][1]


def answer(at, i: int) -> str:  # type: ignore[no-untyped-def]
    """The text of the i-th chat message's answer alone (not its status or details)."""
    return next(m.value for m in at.chat_message[i].markdown if "I saved your" in m.value)


def test_a_memory_only_answer_gives_the_few_memories_that_answer_grouped(
    offline_env, make_app, coordinator
) -> None:
    """The demo persona without a model: "Plan my running this week" answers with at most 5
    memories under their kinds in words, the learned tools on a line of their own, and the
    details count memories, not her earlier questions; a question about nothing she told
    says so."""
    from memory import DEMO_QUESTIONS, DEMO_USER, load_demo

    load_demo(coordinator)
    at = make_app("app.py", user=DEMO_USER, session="s-offline")
    at.chat_input(key="chat_input").set_value(DEMO_QUESTIONS[0]).run()
    no_errors(at)
    reply = answer(at, 1)
    lines = [line.rstrip() for line in reply.splitlines()]  # shown with hard breaks
    memories = [line for line in lines if line.startswith("- ")]
    assert 1 <= len(memories) <= 5, reply
    assert any("Running plan after her sprained left ankle" in m for m in memories)
    assert "Running cadence" not in reply and "[health_event]" not in reply
    assert "**Health**" in lines and "**Goals**" in lines
    tools = next(i for i, line in enumerate(lines) if line.startswith("For questions like this"))
    assert lines[tools - 1] == ""  # its own paragraph, not the last bullet's continuation
    lead = next(t for t in texts(at).splitlines() if t.startswith("Used "))
    group, mine = "", 0  # the bullets under her memories' groups: not her questions, facts
    for line in lines:
        group = line if line.startswith("**") else group
        not_hers = ("**Earlier conversations**", "**General knowledge**")
        mine += line.startswith("- ") and group not in not_hers
    assert lead.startswith(f"Used {mine} thing"), (lead, reply)

    at.chat_input(key="chat_input").set_value("swimming pool opening hours").run()
    no_errors(at)
    reply = answer(at, 3)
    assert "I have nothing about that yet." in reply
    assert not [line for line in reply.splitlines() if line.startswith("- ")], reply


def test_two_answers_in_the_same_words_each_keep_their_own_controls(offline_env, make_app) -> None:
    """Without a model, questions about nothing told get the same words back ("I have nothing
    about that yet"), and a card number is remembered in between: the history draws each
    answer with its own controls (it raised a duplicate key once)."""
    at = make_app("app.py", user="walker")
    for message in (
        "What are the swimming pool opening hours?",
        "Remember that I love trail mix after long runs",
        "My card number for the bike shop is 4111 1111 1111 1111",
        "What are the swimming pool opening hours?",
    ):
        at.chat_input(key="chat_input").set_value(message).run()
        no_errors(at)
    at.run()  # the history alone, as after the turn's rerun
    no_errors(at)
    answers = [a for role, a in chat_texts(at) if role == "assistant"]
    nothing = "I saved your message.  \n\nI have nothing about that yet."
    assert len(answers) == 4 and answers[0].startswith(nothing) and answers[3].startswith(nothing)
    assert "4111" not in texts(at)


def test_a_memory_only_turn_draws_the_sidebar_once_with_what_it_stored(
    offline_env, make_app, monkeypatch
) -> None:
    """Without a model a turn is quick: the sidebar is drawn after it, in the same run, instead
    of before it and again in a rerun; it lists the memory the turn stored."""
    import ui.sidebar

    drawn: list[str] = []
    draw = ui.sidebar.render_sidebar
    monkeypatch.setattr(ui.sidebar, "render_sidebar", lambda ctx: [drawn.append("x"), draw(ctx)])
    at = make_app("app.py", user="alice")
    at.chat_input(key="chat_input").set_value("How are you?").run()  # names the chat: reruns
    no_errors(at)
    drawn.clear()

    at.chat_input(key="chat_input").set_value("Remember that I live in Lyon").run()
    no_errors(at)
    assert "I saved your message" in answer(at, 3)
    assert len(drawn) == 1
    assert "I live in Lyon" in texts(at.sidebar)  # the sidebar's recent memories


def test_a_persons_own_message_reads_as_typed(app_env, make_app) -> None:
    """A third walk sent "remember: # Big heading [click](http://…) **bold**": its own bubble
    showed a heading-less bold text with a live link. It reads as typed, as it streams and after
    a reload, its line breaks kept."""
    typed = "remember: # Big heading [click](http://example.com) **bold**\nsecond line"
    at = make_app("app.py", user="typed", session="s-typed")
    at.chat_input(key="chat_input").set_value(typed).run()
    no_errors(at)
    again = make_app("app.py", user="typed", session="s-typed")  # a reload: from Redis
    for page in (at, again):
        (mine,) = [m for m in page.chat_message if m.name == "user"][:1]
        shown = mine.markdown[0].value
        assert r"\# Big heading \[click\]\(http" in shown and r"\*\*bold\*\*" in shown
        assert shown.endswith("  \nsecond line")
