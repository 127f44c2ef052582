"""Trust controls on the real store and the fake Ollama: answering without a memory,
"I don't know you on this", and incognito turns (agent/private.py, agent/knowing.py)."""

from __future__ import annotations

import json
from collections.abc import Callable

import redis

from agent.knowing import UNKNOWN_RULE
from agent.loop import ChatAgent
from agent.private import incognito_turn, reanswer
from agent.types import TurnResult
from benchmarks.common import free_port
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.models import ChatMessage, EventType
from tests.fakes.fake_ollama import FakeOllama, remembered_lines
from tests.integration.test_agent_cli import _run  # the agent CLI in a real process

Factory = Callable[..., ChatAgent]
U = "trust-user"


def _done(events: object) -> TurnResult:
    result = None
    for ev in events:  # type: ignore[attr-defined]
        if ev.kind == "done":
            result = ev.result
    assert result is not None
    return result


def _agent(
    agent_factory: Factory, coordinator: MemoryCoordinator, settings: Settings, fake: FakeOllama
) -> ChatAgent:
    return agent_factory(coordinator, fake.url, settings=settings)


def _tool_names(fake: FakeOllama) -> set[str]:
    body = fake.chat_requests()[-1].body
    return {t["function"]["name"] for t in body.get("tools") or []}


# --- answer without this memory ---------------------------------------------------------------
def test_a_reanswer_leaves_the_picked_memory_out_and_stores_nothing(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    snapshot: Callable[[], dict[bytes, bytes]],
) -> None:
    coordinator.add_episodic(U, "I am training for a half marathon in April", event_type="goal")
    coordinator.add_episodic(U, "I follow a vegetarian diet", event_type="preference")
    coordinator.bookkeeping.drain()
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    first = agent.chat(U, "s1", "Can you plan my meals for race week?")
    recalled = {h.text: h.id for h in first.recalled.episodic}
    assert {"I follow a vegetarian diet", "I am training for a half marathon in April"} <= set(
        recalled
    )
    agent.wait_for_background(10)  # the first turn's extraction and recall bookkeeping
    coordinator.bookkeeping.drain()
    before = snapshot()

    again = _done(reanswer(agent, U, "s1", first.turn_id, [recalled["I follow a vegetarian diet"]]))

    assert again.private == "re-answer" and again.reply
    seen = remembered_lines(fake_ollama.chat_requests()[-1].system_prompt)
    assert "I follow a vegetarian diet" not in seen
    assert "I am training for a half marathon in April" in seen
    # the same question, and the conversation as it stood (no later messages)
    assert fake_ollama.chat_requests()[-1].body["messages"][-1]["content"] == (
        "Can you plan my meals for race week?"
    )
    assert snapshot() == before  # nothing stored: no message, episode, details, lesson
    # and the model could not remember anything either: no memory tools were offered
    assert not {"remember_information", "forget_memory"} & _tool_names(fake_ollama)


def test_without_a_model_a_reanswer_is_the_memory_only_answer_without_the_picked_memory(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    snapshot: Callable[[], dict[bytes, bytes]],
) -> None:
    coordinator.add_episodic(U, "I am training for a half marathon in April", event_type="goal")
    coordinator.add_episodic(U, "I follow a vegetarian diet", event_type="preference")
    coordinator.bookkeeping.drain()
    agent = agent_factory(coordinator, f"http://127.0.0.1:{free_port()}", settings=settings)
    first = agent.chat(U, "s1", "Can you plan my meals for race week?")
    assert first.mode == "memory-only" and "I follow a vegetarian diet" in first.reply
    recalled = {h.text: h.id for h in first.recalled.episodic}
    agent.wait_for_background(10)
    coordinator.bookkeeping.drain()
    before = snapshot()

    again = _done(reanswer(agent, U, "s1", first.turn_id, [recalled["I follow a vegetarian diet"]]))

    assert again.private == "re-answer" and again.mode == "memory-only"
    assert "I follow a vegetarian diet" not in again.reply
    assert "I am training for a half marathon in April" in again.reply
    assert "memory-only reply" in again.reply and "save" not in again.reply
    assert ").)" not in again.reply
    assert snapshot() == before


def test_without_a_model_an_incognito_reply_quotes_the_reason_once(
    agent_factory: Factory, coordinator: MemoryCoordinator, settings: Settings
) -> None:
    agent = agent_factory(coordinator, f"http://127.0.0.1:{free_port()}", settings=settings)
    result = _done(incognito_turn(agent, U, "s1", "What's my goal?"))
    assert "not reachable" in result.reply
    assert ".)." not in result.reply and ".." not in result.reply, result.reply
    assert result.reply.count("ollama serve") == 1, result.reply  # what to do, said once


def test_a_reanswer_refuses_an_unknown_turn_or_memory(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
) -> None:
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    first = agent.chat(U, "s1", "Hello there")
    for turn, without in (("01NOSUCHTURN", ["x"]), (first.turn_id, ["not-recalled"])):
        try:
            _done(reanswer(agent, U, "s1", turn, without))
        except Exception as e:  # noqa: BLE001 - the type is asserted below
            assert type(e).__name__ == "InvalidInputError"
        else:
            raise AssertionError("a re-answer of an unknown turn or memory must be refused")


# --- "I don't know you on this" ---------------------------------------------------------------
def test_a_question_about_the_user_with_only_weak_matches_says_it_does_not_know(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
) -> None:
    coordinator.add_episodic(U, "I repaired the garden fence on Sunday", event_type="milestone")
    coordinator.bookkeeping.drain()
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    result = agent.chat(U, "s1", "What is my favourite colour?")

    assert result.unknown_about_user
    prompt = fake_ollama.chat_requests()[-1].system_prompt
    assert UNKNOWN_RULE in prompt
    # the weak candidate did not reach the prompt, and the details list it with its score
    assert "garden fence" not in prompt
    held = {h.text: h for h in result.held_back}
    assert "I repaired the garden fence on Sunday" in held
    assert held["I repaired the garden fence on Sunday"].band == "low"
    # kept with the answer: a reload shows the same
    again = agent.turn_details(U, "s1")[result.turn_id]
    assert [h.text for h in again.held_back] == [h.text for h in result.held_back]


def test_a_moderate_memory_is_used_and_no_such_rule_is_given(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
) -> None:
    coordinator.add_episodic(U, "My favourite colour is teal", event_type=EventType.PREFERENCE)
    coordinator.bookkeeping.drain()
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    result = agent.chat(U, "s1", "What is my favourite colour?")
    assert not result.unknown_about_user and result.held_back == []
    prompt = fake_ollama.chat_requests()[-1].system_prompt
    assert UNKNOWN_RULE not in prompt
    assert "My favourite colour is teal" in remembered_lines(prompt)


def test_a_general_question_keeps_its_weak_matches(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
) -> None:
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    result = agent.chat(U, "s1", "What is VO2 max?")
    assert not result.unknown_about_user
    assert UNKNOWN_RULE not in fake_ollama.chat_requests()[-1].system_prompt


# --- incognito --------------------------------------------------------------------------------
def test_an_incognito_turn_recalls_nothing_and_stores_nothing(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    snapshot: Callable[[], dict[bytes, bytes]],
) -> None:
    coordinator.add_episodic(U, "My favourite colour is teal", event_type=EventType.PREFERENCE)
    coordinator.bookkeeping.drain()
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    before = snapshot()
    history = [
        ChatMessage(id="1", role="user", content="I'm planning a surprise party", timestamp=1),
        ChatMessage(id="2", role="assistant", content="Fun! For whom?", timestamp=2),
    ]
    result = _done(
        incognito_turn(
            agent,
            U,
            "incog-1",
            "Remember: my password is hunter2. What's my colour?",
            history=history,
        )
    )

    assert result.private == "incognito" and result.stored == []
    request = fake_ollama.chat_requests()[-1]
    assert "teal" not in request.system_prompt  # no long-term memory
    assert UNKNOWN_RULE in request.system_prompt  # so it says it does not know
    sent = [m["content"] for m in request.body["messages"] if m["role"] != "system"]
    assert sent[:2] == ["I'm planning a surprise party", "Fun! For whom?"]  # its own chat
    assert "hunter2" not in json.dumps(request.body)  # masked at the turn's entry, as any turn
    assert not {"remember_information", "forget_memory"} & _tool_names(fake_ollama)
    # nothing at all was written: no trigger, message, episode, details or extraction
    agent.wait_for_background(5)
    assert snapshot() == before
    assert result.extraction == "skipped (nothing is stored)"


def test_the_cli_runs_incognito_and_reanswers(
    settings: Settings,
    fake_ollama: FakeOllama,
    coordinator: MemoryCoordinator,
    snapshot: Callable[[], dict[bytes, bytes]],
) -> None:
    coordinator.add_episodic(U, "My favourite colour is teal", event_type=EventType.PREFERENCE)
    coordinator.bookkeeping.drain()
    before = snapshot()
    proc = _run(
        settings,
        fake_ollama.url,
        "chat",
        "--user",
        U,
        "--session",
        "c1",
        "--incognito",
        "--json",
        "Remember: I like jazz. What's my colour?",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["private"] == "incognito" and out["stored"] == []
    assert out["recalled"]["episodic"] == []
    assert snapshot() == before

    proc = _run(
        settings,
        fake_ollama.url,
        "chat",
        "--user",
        U,
        "--session",
        "c2",
        "--json",
        "What is my favourite colour?",
    )
    assert proc.returncode == 0, proc.stderr
    turn = json.loads(proc.stdout)
    teal = [h["id"] for h in turn["recalled"]["episodic"] if "teal" in h["text"]]
    assert teal
    proc = _run(
        settings,
        fake_ollama.url,
        "reanswer",
        "--user",
        U,
        "--session",
        "c2",
        "--turn",
        turn["turn_id"],
        "--without",
        teal[0],
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["private"] == "re-answer" and out["original"] == turn["reply"]
    assert all("teal" not in h["text"] for h in out["recalled"]["episodic"])

    bad = _run(
        settings,
        fake_ollama.url,
        "reanswer",
        "--user",
        U,
        "--session",
        "c2",
        "--turn",
        "01NOSUCHTURN",
        "--without",
        "x",
    )
    assert bad.returncode == 2 and "No stored answer" in bad.stderr


def test_the_cli_says_when_it_does_not_know_and_what_it_held_back(
    settings: Settings, fake_ollama: FakeOllama, coordinator: MemoryCoordinator
) -> None:
    coordinator.add_episodic(
        "cli-unknown", "I repaired the garden fence on Sunday", event_type="fact"
    )
    coordinator.bookkeeping.drain()
    proc = _run(
        settings,
        fake_ollama.url,
        "chat",
        "--user",
        "cli-unknown",
        "--session",
        "k1",
        "--json",
        "What is my favourite colour?",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["unknown_about_user"] is True
    assert [h["text"] for h in out["held_back"]] == ["I repaired the garden fence on Sunday"]
    assert out["recalled"]["episodic"] == []
    assert UNKNOWN_RULE in fake_ollama.chat_requests()[-1].system_prompt


# --- one turn, nothing written -----------------------------------------------------------------
def test_an_incognito_turn_and_a_reanswer_write_no_redis_key(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    """Every key of the namespace, counters, latency samples and the query-embedding cache
    included: the two turns that store nothing (the one turn of agent/loop.py, given what it
    may know) leave the number of keys and each key's content as they were."""

    def every_key() -> dict[bytes, bytes]:
        coordinator.metrics.flush()  # counters and latency samples are buffered
        return {
            k: redis_client.dump(k) or b""
            for k in redis_client.scan_iter(match=f"{namespace}*", count=1000)
        }

    coordinator.add_episodic(U, "I follow a vegetarian diet", event_type="preference")
    coordinator.add_episodic(U, "I am training for a half marathon in April", event_type="goal")
    coordinator.bookkeeping.drain()
    agent = _agent(agent_factory, coordinator, settings, fake_ollama)
    first = agent.chat(U, "s1", "Can you plan my meals for race week?")
    veg = [h.id for h in first.recalled.episodic if h.text == "I follow a vegetarian diet"]
    agent.wait_for_background(10)
    coordinator.bookkeeping.drain()
    before = every_key()
    assert len(before) > 10  # memories, messages, details, indexes' documents

    incognito = _done(incognito_turn(agent, U, "s1", "Remember: I like jazz. What's my diet?"))
    agent.wait_for_background(5)
    assert incognito.private == "incognito" and incognito.mode == "llm"
    after_incognito = every_key()
    assert len(after_incognito) == len(before) and after_incognito == before

    again = _done(reanswer(agent, U, "s1", first.turn_id, veg))
    agent.wait_for_background(5)
    assert again.private == "re-answer" and again.mode == "llm" and again.reply
    after_reanswer = every_key()
    assert len(after_reanswer) == len(before) and after_reanswer == before
