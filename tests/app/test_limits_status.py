"""The answer's status box names the model's speed and what a token cap cut, with what to do;
the same after a reload (issue 47)."""

from __future__ import annotations

from tests.app.conftest import no_errors, texts
from tests.fakes.fake_ollama import FakeOllama

CUT = (
    "✂️ The answer was cut at its 768-token cap: ask for less at once, or raise AGENT_REPLY_TOKENS."
)


def status_labels(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(e.label) for e in at.get("status")]


def test_the_status_box_shows_the_speed_and_what_a_cap_cut(
    app_env, make_app, shared_fake_ollama: FakeOllama
) -> None:
    # longer than the reply budget, and no loop (agent.echo stops one)
    shared_fake_ollama.queue_reply(" ".join(f"Sleep matters {i}," for i in range(600)))
    at = make_app("app.py", user="lim", session="s-limits")
    at.chat_input(key="chat_input").set_value("Tell me everything about sleep").run()
    no_errors(at)
    (label,) = status_labels(at)
    assert "100 tokens/s" in label and "cut short" in label  # the fake's chat model: 100 tokens/s
    assert CUT in texts(at)

    again = make_app("app.py", user="lim", session="s-limits")  # a reload: from Redis
    no_errors(again)
    assert status_labels(again) == [label]
    assert CUT in texts(again)
