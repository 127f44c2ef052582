"""The last line of an answer that stored something: "💾 Remembered: …" with Edit and Undo,
"🔒 stored without your card number" when a secret was masked; with the fake model and in
memory-only mode. A memory that only named a secret is not stored."""

from __future__ import annotations

import pytest

from tests.app.conftest import no_errors

CARD = "4111 1111 1111 1111"


def _captions(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.value for m in at.chat_message if m.name == "assistant" for c in m.caption]


def _facts(coordinator, user: str) -> list[dict]:  # type: ignore[no-untyped-def]
    rows, _ = coordinator.list_memories(user, "episodic")
    return [r for r in rows if r["event_type"] != "interaction"]


@pytest.fixture(params=["model", "memory-only"])
def env(request, app_env, offline_env_lazy):  # type: ignore[no-untyped-def]
    if request.param == "memory-only":
        offline_env_lazy()
    from ui import resources

    return resources.get_coordinator()


@pytest.fixture
def offline_env_lazy(monkeypatch):  # type: ignore[no-untyped-def]
    from benchmarks.common import free_port

    return lambda: monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")


def test_the_answer_ends_with_what_it_remembered_and_undo_takes_it_back(env, make_app) -> None:
    coordinator = env
    at = make_app("app.py", user="rita")
    at.chat_input(key="chat_input").set_value("Remember that I am vegetarian").run()
    no_errors(at)
    assert "💾 Remembered: “I am vegetarian”" in _captions(at)
    (fact,) = _facts(coordinator, "rita")

    at.text_area(key=f"rem_{_turn(at)}_{fact['id']}_text").input("I am vegan")
    at.button(key=f"rem_{_turn(at)}_{fact['id']}_save").click().run()
    no_errors(at)
    assert coordinator.get_memory("rita", "episodic", fact["id"])["text"] == "I am vegan"
    assert "💾 Remembered: “I am vegan”" in _captions(at)  # the line shows the edit

    forget = at.button(key=f"rem_undo_{_turn(at)}")
    # named for what it does, apart from a delete's "Undo" (ui/undo.py): a keyboard or
    # screen-reader user reads the name, not the place
    assert forget.label == "Forget this" and "Forget what this answer remembered" in forget.help
    forget.click().run()
    no_errors(at)
    assert _facts(coordinator, "rita") == []
    assert any("Forgotten: not remembered any more" in c for c in _captions(at))
    # the answer above the line does not still claim the memory (memory-only mode wrote
    # "I saved your message and remembered what it told me."), here nor redrawn from the
    # stored chat by a reload
    again = make_app("app.py", user="rita")
    for shown in (at, again):
        texts = [md.value for m in shown.chat_message if m.name == "assistant" for md in m.markdown]
        assert texts and not any("remembered what it told me" in t for t in texts), texts
        # nor do its details: not in what it stored (the status box, the Stored tab), nor in
        # the prompt's "stored from the current message" (the list and the exact block)
        shown_all = texts + [c.value for m in shown.chat_message for c in m.code]
        assert not [t for t in shown_all if "💾 I am veg" in t or "current message" in t]
        assert "Forgotten since: 1 memory this answer stored." in [
            c.value for m in shown.chat_message for c in m.caption
        ]


def test_undo_of_a_replacing_memory_brings_the_old_one_back(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    at = make_app("app.py", user="rita")
    at.chat_input(key="chat_input").set_value("My goal is to run a 10k in May").run()
    at.chat_input(key="chat_input").set_value("My goal is to run a half marathon in April").run()
    no_errors(at)
    assert any("replaces “" in c and "10k" in c for c in _captions(at)), _captions(at)
    at.button(key=f"rem_undo_{_turn(at)}").click().run()
    no_errors(at)
    active = [r["text"] for r in _facts(coordinator, "rita") if r.get("status") == "active"]
    assert active == ["My goal is to run a 10k in May"]


def test_a_masked_card_number_is_said_and_a_contentless_memory_is_not_stored(env, make_app) -> None:
    coordinator = env
    at = make_app("app.py", user="rita")
    at.chat_input(key="chat_input").set_value(
        f"Remember that my card number for the bike shop is {CARD}"
    ).run()
    no_errors(at)
    assert any("🔒 stored without your card number" in c for c in _captions(at)), _captions(at)
    assert not any("Remembered:" in c for c in _captions(at))
    assert _facts(coordinator, "rita") == []


def _turn(at) -> str:  # type: ignore[no-untyped-def]
    """The key of the last answer's line (its turn id), from its Forget this button."""
    undo = [str(b.key) for b in at.button if str(b.key).startswith("rem_undo_")]
    return undo[-1].removeprefix("rem_undo_")


def test_forget_this_marks_the_memory_in_a_later_answers_details(
    offline_env, make_app, coordinator
) -> None:
    """A later answer that recalled the memory kept showing its text in its details (the
    Recalled list, the Prompt tab's list and the exact block): each now says it was
    forgotten, here and after a reload."""
    fact = "I love trail mix after long runs"
    at = make_app("app.py", user="rita", session="s-forget")
    at.chat_input(key="chat_input").set_value(f"Remember that {fact}").run()
    first = _turn(at)
    at.chat_input(key="chat_input").set_value("What do I love after long runs?").run()
    no_errors(at)
    at.button(key=f"rem_undo_{first}").click().run()
    no_errors(at)
    again = make_app("app.py", user="rita", session="s-forget")
    for shown in (at, again):
        later = [m for m in shown.chat_message if m.name == "assistant"][-1]
        details = [e for e in later.expander if "Execution" in str(e.label)][0]
        lines = [x for md in details.markdown for x in str(md.value).splitlines()]
        assert not [x for x in lines if x.startswith(f"- {fact}")], lines  # the exchange's stays
        assert len([x for x in lines if x.startswith("- \\(forgotten at your request\\)")]) == 2
        assert not [c.value for c in details.code if f'"{fact}' in c.value]
        captions = [c.value for c in details.caption]
        assert "Forgotten since: 1 memory this answer recalled." in captions
