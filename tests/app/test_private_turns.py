"""The chat page's trust controls (ui/private.py) with the real agent and the fake Ollama:
answering again without a memory, "I don't know you on this" with what was held back, and an
incognito chat that recalls and stores nothing."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from agent.knowing import UNKNOWN_RULE
from tests.app.conftest import no_errors
from tests.fakes.fake_ollama import FakeOllama, RecordedRequest, remembered_lines

SESSION = "s-test"  # make_app's session


def page_text(at: AppTest) -> str:
    """What the page says in prose: markdown, captions and notices (expanders included)."""
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info") for e in at.get(kind))


def column_text(at: AppTest, heading: str) -> str:
    """The markdown of the one column that starts with `heading` (side-by-side answers)."""
    found = [
        "\n".join(str(m.value) for m in col.markdown)
        for col in at.columns
        if col.markdown and str(col.markdown[0].value).startswith(heading)
    ]
    assert len(found) == 1, f"{len(found)} columns headed {heading!r}"
    return found[0]


def last_request(fake: FakeOllama, message: str) -> RecordedRequest:
    found = [r for r in fake.chat_requests() if r.last_user_message == message]
    assert found, f"no chat request for {message!r}"
    return found[-1]


def test_answer_again_without_a_memory_shows_both_answers_and_stores_nothing(
    app_env, make_app, coordinator, agent, shared_fake_ollama: FakeOllama
) -> None:
    shared_fake_ollama.reset()  # no reply left queued by an earlier test
    coordinator.add_episodic("runner", "I follow a vegetarian diet", event_type="preference")
    coordinator.add_episodic(
        "runner", "I am training for a half marathon in April", event_type="goal"
    )
    coordinator.bookkeeping.drain()
    at = make_app("app.py", user="runner")
    question = "Can you plan my meals for race week?"
    shared_fake_ollama.queue_reply("Vegetarian race-week meals: lentils, rice, eggs.")
    at.chat_input(key="chat_input").set_value(question).run()
    no_errors(at)
    assert agent.wait_for_background(20)  # the turn's extraction: stored before the count
    stored_before = len(coordinator.recent_messages("runner", SESSION, 50))

    picks = [c for c in at.checkbox if c.key.startswith("reanswer_pick::")]
    # one box per recalled memory (the general knowledge recalled with them too)
    assert {"I follow a vegetarian diet", "I am training for a half marathon in April"} <= {
        c.label for c in picks
    }
    go = next(b for b in at.button if b.key.startswith("reanswer_go::"))
    assert go.disabled  # nothing ticked yet
    next(c for c in picks if "vegetarian" in c.label).check().run()
    shared_fake_ollama.queue_reply("Race-week meals: chicken, rice, pasta.")
    next(b for b in at.button if b.key.startswith("reanswer_go::")).click().run()
    no_errors(at)

    assert "Vegetarian race-week meals" in column_text(at, "**With every memory**")
    assert "Race-week meals: chicken, rice, pasta." in column_text(at, "**Without them**")
    assert "Left out: “I follow a vegetarian diet”" in page_text(at)
    again = last_request(shared_fake_ollama, question)
    assert "I follow a vegetarian diet" not in remembered_lines(again.system_prompt)
    assert "I am training for a half marathon in April" in remembered_lines(again.system_prompt)
    assert len(coordinator.recent_messages("runner", SESSION, 50)) == stored_before


def test_without_a_model_answering_again_leaves_the_ticked_memory_out(
    offline_env, make_app, coordinator
) -> None:
    coordinator.add_episodic("walker", "I follow a vegetarian diet", event_type="preference")
    coordinator.add_episodic(
        "walker", "I am training for a half marathon in April", event_type="goal"
    )
    coordinator.bookkeeping.drain()
    at = make_app("app.py", user="walker")
    at.chat_input(key="chat_input").set_value("Can you plan my meals for race week?").run()
    no_errors(at)
    assert "I follow a vegetarian diet" in page_text(at)  # the memory-only answer quotes it

    go = next(b for b in at.button if b.key.startswith("reanswer_go::"))
    assert go.disabled and "Tick at least one memory" in page_text(at)
    pick = next(c for c in at.checkbox if c.key.startswith("reanswer_pick::") and "veg" in c.label)
    pick.check().run()
    go = next(b for b in at.button if b.key.startswith("reanswer_go::"))
    assert not go.disabled
    go.click().run()
    no_errors(at)

    without = column_text(at, "**Without them**")
    assert "I am training for a half marathon in April" in without
    assert "vegetarian" not in without and "needs the model" not in without
    # the banner says the model is offline: neither answer repeats it (as in the chat)
    assert "The language model is offline" not in page_text(at)
    assert ").)." not in page_text(at)


def test_a_question_nothing_is_known_for_says_so_and_lists_what_was_held_back(
    app_env, make_app, coordinator, shared_fake_ollama: FakeOllama
) -> None:
    shared_fake_ollama.reset()
    coordinator.add_episodic(
        "fencer", "I repaired the garden fence on Sunday", event_type="milestone"
    )
    coordinator.bookkeeping.drain()
    at = make_app("app.py", user="fencer")
    question = "What is my favourite colour?"
    shared_fake_ollama.queue_reply("I don't know your favourite colour yet. What is it?")
    at.chat_input(key="chat_input").set_value(question).run()
    no_errors(at)

    request = last_request(shared_fake_ollama, question)
    assert UNKNOWN_RULE in request.system_prompt
    assert "garden fence" not in request.system_prompt
    shown = page_text(at)
    assert "I don't know your favourite colour yet" in shown
    assert "I don't know you on this" in shown and "(1 weak match held back)" in shown
    held = shown.split("**Held back**", 1)[1]
    assert "I repaired the garden fence on Sunday" in held


def test_an_incognito_chat_is_marked_recalls_nothing_and_stores_nothing(
    app_env, make_app, coordinator, shared_fake_ollama: FakeOllama
) -> None:
    shared_fake_ollama.reset()
    coordinator.add_episodic("ghost", "My favourite colour is teal", event_type="preference")
    coordinator.bookkeeping.drain()
    at = make_app("app.py", user="ghost")
    switch = at.toggle(key=f"incognito_on::incognito::ghost::{SESSION}")
    switch.set_value(True).run()
    assert any("Incognito chat." in i.value for i in at.info)

    question = "Remember: I like jazz. What's my favourite colour?"
    shared_fake_ollama.queue_reply("I don't know that about you in this chat.")
    at.chat_input(key="chat_input").set_value(question).run()
    no_errors(at)
    request = last_request(shared_fake_ollama, question)
    assert "teal" not in request.system_prompt and UNKNOWN_RULE in request.system_prompt
    # its details speak of incognito: nothing was searched, nothing said here is kept
    shown = page_text(at)
    assert "I don't know that about you in this chat." in shown
    assert "Incognito: nothing was recalled from your memory" in shown
    assert "your memory was not searched" in shown
    assert "moderate band" not in shown and "Tell the agent about yourself" not in shown

    # a second incognito message carries the first exchange (kept by the page only)
    shared_fake_ollama.queue_reply("Still incognito.")
    at.chat_input(key="chat_input").set_value("And now?").run()
    no_errors(at)
    assert "Still incognito." in page_text(at)
    second = last_request(shared_fake_ollama, "And now?")
    assert question in [m["content"] for m in second.body["messages"]]
    # nothing of it reached the store: no session, no message, no memory of jazz
    assert coordinator.short_term.sessions("ghost") == []
    assert not any("jazz" in h.text for h in coordinator.search("ghost", "jazz", k=10))

    # switched off, the chat is the normal one again (and empty: nothing was stored)
    at.toggle(key=f"incognito_on::incognito::ghost::{SESSION}").set_value(False).run()
    no_errors(at)
    assert not any("Incognito chat." in i.value for i in at.info)
    assert "Still incognito." not in page_text(at)
    assert [m.name for m in at.chat_message] == ["assistant"]  # the new chat's greeting only
    assert "Tell me about yourself" in page_text(at)
